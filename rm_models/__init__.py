"""Model-based verifiers: outcome RMs, process RMs, implicit PRMs, LLM judges and rubric judges.

Each verifier names its model in its config and runs it on a backend (transformers, an
in-process vLLM engine, or an OpenAI-compatible endpoint) that loads the model once per process.
"""

from rewardhub.models.config import BackendSpec, JudgeConfig, ModelConfig
from rewardhub.models.errors import BackendError, InputTooLong, UnsupportedOperation, VerdictError
from rewardhub.models.implicit_prm import ImplicitPRM
from rewardhub.models.judge import Judge
from rewardhub.models.outcome_rm import OutcomeRM
from rewardhub.models.prm import ProcessRM
from rewardhub.models.rubric import RubricJudge

__all__ = [
    "BackendError",
    "BackendSpec",
    "ImplicitPRM",
    "InputTooLong",
    "Judge",
    "JudgeConfig",
    "ModelConfig",
    "OutcomeRM",
    "ProcessRM",
    "RubricJudge",
    "UnsupportedOperation",
    "VerdictError",
]
