"""The ``ifeval`` verifier: verifiable instructions, judged as the checker that defined them judges.

Modules, in the order a sample flows through them: ``verifier`` (the :class:`IFEvalVerifier` the
registry loads: reference shapes, IFEval's strict and loose framing, scoring), ``rules`` (the
instruction registry: id -> kwargs schema -> rule), the rule families ``google`` (IFEval's 25),
``ifevalg`` (the IFEvalG / verifiable_instructions ids of RL data) and ``ifbench`` (IFBench's
out-of-distribution constraints: words and counts, with ``ifbench_sentences``, ``ifbench_format``
and ``ifbench_tasks`` beside it), ``tokens`` (words, sentences, tokens, language: the readings the
rules share) and ``constraints`` (rewardhub's own ``{"type": ...}`` constraint list).
"""

from .constraints import CONSTRAINT_TYPES, Verdict, parse_constraint
from .rules import RULES, bind
from .verifier import IFEvalVerifier, constraints_of, instructions_of, loose_variants

__all__ = [
    "CONSTRAINT_TYPES",
    "RULES",
    "IFEvalVerifier",
    "Verdict",
    "bind",
    "constraints_of",
    "instructions_of",
    "loose_variants",
    "parse_constraint",
]
