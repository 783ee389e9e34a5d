"""The audit's public names are a promise: changing them is a deliberate act that changes this test."""

from __future__ import annotations

import rewardhub.audit


def test_audit_exports():
    assert sorted(rewardhub.audit.__all__) == [
        "Audit",
        "AuditCase",
        "CORPORA",
        "CodeTask",
        "Confusion",
        "Exploit",
        "KINDS",
        "Mutant",
        "Outcome",
        "ScoreFn",
        "TaskAudit",
        "audit_mutants",
        "audit_report",
        "class_counts",
        "client_score_fn",
        "code_task",
        "corpora_for",
        "exploits_for",
        "failure_class",
        "fresh_calls",
        "load_corpus",
        "mutants",
        "run_audit",
        "scorer_score_fn",
        "transcript_text",
    ]
    for name in rewardhub.audit.__all__:
        assert hasattr(rewardhub.audit, name)


def test_the_arithmetic_imports_nothing_that_runs_scoring():
    source = open(rewardhub.audit.confusion.__file__).read()
    assert "import" in source and "scoring" not in source and "client" not in source and "api" not in source
