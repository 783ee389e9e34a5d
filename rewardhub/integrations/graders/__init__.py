"""OpenAI-style graders (``string_check``, ``text_similarity``, ``score_model``, ``python``,
``multi``) run on rewardhub's verifiers and sandbox; served at ``POST /v1/graders/run``."""

from rewardhub.integrations.graders.formula import Formula, FormulaError, parse_formula
from rewardhub.integrations.graders.run import GraderRunner, ScorePath
from rewardhub.integrations.graders.shapes import Grader, RunGraderRequest

__all__ = [
    "Formula",
    "FormulaError",
    "Grader",
    "GraderRunner",
    "RunGraderRequest",
    "ScorePath",
    "parse_formula",
]
