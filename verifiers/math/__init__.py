"""The ``math`` verifier: final-answer extraction and mathematical equivalence.

The final answer is found by the reader every verifier shares
(:mod:`rewardhub.verifiers.final_answer`). Then, in the order an answer flows through them:
``gold`` (a gold's parts, and the answer a sentence in its box states), ``normalize`` (one spelling), ``screen`` (refuse what would hang sympy), ``parse`` (a tree of
``values``; plain ``numbers`` without sympy, math-verify's LaTeX parser for the other leaves),
``compare`` and ``symbolic`` (equivalence under a policy; ``closed_form`` decides constants with
huge powers, exactly on square roots or numerically at a precision that sees every term), ``verifier`` (the
:class:`MathVerifier` the registry loads), and ``reference``: Math-Verify's own verdict, for a request that
asks for its reading (``reading: "math_verify"``).
"""

from .compare import Incomparable, Policy, equivalent
from .parse import Unparseable, parse_answer
from .screen import Limits, TooComplex, screen
from .verifier import MathConfig, MathVerifier

__all__ = [
    "Incomparable",
    "Limits",
    "MathConfig",
    "MathVerifier",
    "Policy",
    "TooComplex",
    "Unparseable",
    "equivalent",
    "parse_answer",
    "screen",
]
