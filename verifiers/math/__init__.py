"""The ``math`` verifier: final-answer extraction and mathematical equivalence.

Modules, in the order an answer flows through them: ``extract`` (find the final answer),
``normalize`` (one spelling), ``screen`` (refuse what would hang sympy), ``parse`` (a tree of
``values``; plain ``numbers`` without sympy, math-verify's LaTeX parser for the other leaves),
``compare`` and ``symbolic`` (equivalence under a policy), ``verifier`` (the
:class:`MathVerifier` the registry loads).
"""

from .compare import Incomparable, Policy, equivalent
from .extract import Extraction, extract_answer, extract_gold
from .parse import Unparseable, parse_answer
from .screen import Limits, TooComplex, screen
from .verifier import MathConfig, MathVerifier

__all__ = [
    "Extraction",
    "Incomparable",
    "Limits",
    "MathConfig",
    "MathVerifier",
    "Policy",
    "TooComplex",
    "Unparseable",
    "equivalent",
    "extract_answer",
    "extract_gold",
    "parse_answer",
    "screen",
]
