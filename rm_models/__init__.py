"""Model-based verifiers: outcome RMs, process RMs, implicit PRMs, LLM judges and rubric judges.

Each verifier names its model in its config and runs it on a backend (transformers, an
in-process vLLM engine, or an OpenAI-compatible endpoint) that loads the model once per process.
"""

from rm_models.config import BackendSpec, JudgeConfig, ModelConfig
from rm_models.errors import BackendError, InputTooLong, UnsupportedOperation, VerdictError
from rm_models.implicit_prm import ImplicitPRM
from rm_models.judge import Judge
from rm_models.outcome_rm import OutcomeRM
from rm_models.prm import ProcessRM
from rm_models.rubric import RubricJudge

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
