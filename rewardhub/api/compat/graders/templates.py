"""The ``{{ sample.output_text }}`` / ``{{ item.answer }}`` templates of grader inputs.

A template names a value by a dotted path in one of two namespaces: ``sample`` (the model's
output: ``output_text``, and ``output_json`` when the output parses as JSON) and ``item`` (the
dataset row). Nothing else is evaluated: no filters, no expressions. A path that does not exist
is an error, never an empty string: a grader comparing against nothing would score silently wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from rewardhub.errors import InvalidRequest

__all__ = ["namespaces", "render"]

_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][\w]*(?:\.[\w]+)*)\s*\}\}")


def namespaces(model_sample: str, item: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``sample`` and ``item`` namespaces for one graded output."""
    sample: dict[str, Any] = {"output_text": model_sample}
    try:
        sample["output_json"] = json.loads(model_sample)
    except ValueError:
        pass
    return {"sample": sample, "item": dict(item or {})}


def render(template: str, scope: Mapping[str, Any]) -> str:
    """``template`` with each ``{{ path }}`` replaced by its value (JSON for non-strings)."""

    def value(match: re.Match[str]) -> str:
        found = lookup(match.group(1), scope)
        return found if isinstance(found, str) else json.dumps(found)

    return _VARIABLE.sub(value, template)


def lookup(path: str, scope: Mapping[str, Any]) -> Any:
    current: Any = scope
    for part in path.split("."):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            raise InvalidRequest(
                f"template variable {{{{ {path} }}}} is not defined",
                detail={"variable": path, "error": "invalid_variable_error"},
            )
    return current
