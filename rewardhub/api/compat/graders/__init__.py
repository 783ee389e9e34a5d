"""OpenAI-style graders (``string_check``, ``text_similarity``, ``score_model``, ``python``,
``multi``) run on rewardhub's verifiers and sandbox; served at ``POST /v1/graders/run`` (:mod:`.routes`)."""

from .formula import Formula, FormulaError, parse_formula
from .routes import router
from .run import GraderRunner
from .shapes import Grader, RunGraderRequest

__all__ = [
    "Formula",
    "FormulaError",
    "Grader",
    "GraderRunner",
    "RunGraderRequest",
    "router",
    "parse_formula",
]
