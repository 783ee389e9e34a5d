"""Auditing a verifier: precision and recall on labelled cases, and the reward hacks it lets through.

``confusion`` holds the arithmetic (pure), ``cases`` the shapes read at the edges, ``corpus`` the
exploit corpus shipped in ``exploits/``, ``run`` the scoring through the service's own path,
``report`` the text and the plot. ``rewardhub audit`` and ``POST /v1/audit`` are thin callers.

Weak test suites (``rewardhub audit code --mutants``): ``mutation`` breaks a reference solution at
one site, ``fresh_inputs`` makes the inputs that tell a mutant apart, ``code_tasks`` reads the
problems, ``weak_tests`` runs them through a scoring path and says which tests accept a mutant.
"""

from rewardhub.audit.cases import AuditCase, Exploit, transcript_text
from rewardhub.audit.code_tasks import CodeTask, code_task
from rewardhub.audit.confusion import Confusion, Outcome, audit_report, class_counts, failure_class
from rewardhub.audit.corpus import CORPORA, corpora_for, exploits_for, load_corpus
from rewardhub.audit.fresh_inputs import fresh_calls
from rewardhub.audit.mutation import KINDS, Mutant, mutants
from rewardhub.audit.run import Audit, ScoreFn, client_score_fn, run_audit, scorer_score_fn
from rewardhub.audit.weak_tests import TaskAudit, audit_mutants

__all__ = [
    "CORPORA",
    "KINDS",
    "Audit",
    "AuditCase",
    "CodeTask",
    "Confusion",
    "Exploit",
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
