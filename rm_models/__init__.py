"""Model-based verifiers: outcome RMs, process RMs, implicit PRMs, LLM judges, rubric and pairwise judges.

Each verifier names its model in its config and runs it on a backend (transformers, an
in-process vLLM engine, or an OpenAI-compatible endpoint) that loads the model once per process.
"""

from .config import BackendSpec, JudgeConfig, ModelConfig
from .errors import BackendError, InputTooLong, UnsupportedOperation, VerdictError
from .implicit_prm import ImplicitPRM
from .judge import Judge
from .outcome_rm import OutcomeRM
from .pairwise_judge import PairwiseJudge
from .prm import ProcessRM
from .rubric import RubricJudge

__all__ = [
    "BackendError",
    "BackendSpec",
    "ImplicitPRM",
    "InputTooLong",
    "Judge",
    "JudgeConfig",
    "ModelConfig",
    "OutcomeRM",
    "PairwiseJudge",
    "ProcessRM",
    "RubricJudge",
    "UnsupportedOperation",
    "VerdictError",
]
