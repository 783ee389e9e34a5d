"""Auditing a verifier: precision and recall on labelled cases, and the reward hacks it lets through.

``confusion`` holds the arithmetic (pure), ``cases`` the shapes read at the edges, ``corpus`` the
exploit corpus shipped in ``exploits/``, ``run`` the scoring through the service's own path,
``report`` the text and the plot. ``rewardhub audit`` and ``POST /v1/audit`` are thin callers.
"""

from rewardhub.audit.cases import AuditCase, Exploit, transcript_text
from rewardhub.audit.confusion import Confusion, Outcome, audit_report, class_counts, failure_class
from rewardhub.audit.corpus import CORPORA, corpora_for, exploits_for, load_corpus
from rewardhub.audit.run import Audit, ScoreFn, client_score_fn, run_audit, scorer_score_fn

__all__ = [
    "CORPORA",
    "Audit",
    "AuditCase",
    "Confusion",
    "Exploit",
    "Outcome",
    "ScoreFn",
    "audit_report",
    "class_counts",
    "client_score_fn",
    "corpora_for",
    "exploits_for",
    "failure_class",
    "load_corpus",
    "run_audit",
    "scorer_score_fn",
    "transcript_text",
]
