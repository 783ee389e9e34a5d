"""BFCL's own AST checker, from the released ``bfcl-eval`` package, loaded without its model handlers.

``bfcl-eval`` is installed without its dependencies (they are the API clients of every model
vendor). Its AST checker needs, of the rest of the package, only the language enum, the type
tables and ``MODEL_CONFIG_MAPPING``, which it reads for one thing: whether a model's function
names have ``.`` turned into ``_``. That module imports every vendor's client, so it is replaced
by an empty mapping; the cases here use no dotted names. Everything else is BFCL's code as released.
"""

from __future__ import annotations

import sys
import types
from typing import Any

BFCL_VERSION = "2026.3.23"


def load() -> Any:
    """BFCL's ``ast_checker`` module (raises ImportError when bfcl-eval is not installed)."""
    from importlib.metadata import version

    if version("bfcl-eval") != BFCL_VERSION:
        raise ImportError(f"bfcl-eval {BFCL_VERSION} is pinned, found {version('bfcl-eval')}")
    name = "bfcl_eval.constants.model_config"
    if name not in sys.modules:
        stub = types.ModuleType(name)
        stub.MODEL_CONFIG_MAPPING = {}  # type: ignore[attr-defined]
        sys.modules[name] = stub
    from bfcl_eval.eval_checker.ast_eval import ast_checker

    return ast_checker


def bfcl_verdict(functions: list[dict[str, Any]], calls: list[dict[str, Any]], answer: list[dict[str, Any]]) -> bool:
    """BFCL's verdict on ``calls`` (``[{name: {param: value}}]``), in the category the case belongs to."""
    checker = load()
    from bfcl_eval.constants.enums import Language

    category = "parallel" if len(answer) > 1 else ("multiple" if len(functions) > 1 else "simple")
    result = checker.ast_checker(functions, calls, answer, Language.PYTHON, category, "gpt-4o-2024-11-20-FC")
    return bool(result["valid"])
