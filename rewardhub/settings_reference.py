"""What ``rewardhub settings`` prints: every key of the settings tree, with its environment variable,
its default and what it does, read from the classes themselves so the listing cannot drift from them.

A key is a dotted path (``sandbox.backend``), the same path a YAML config file nests; its variable
is the one its section reads (``REWARDHUB_SANDBOX_BACKEND``), and its meaning is its field's
description.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python
from pydantic_settings import BaseSettings

from rewardhub.settings import Settings

__all__ = ["SettingRow", "format_table", "settings_reference"]


@dataclass(frozen=True)
class SettingRow:
    key: str
    """Dotted path in the tree, as a config file nests it."""
    env: str
    """The environment variable that sets it."""
    default: Any
    """Its default, as JSON would hold it (a default computed on this machine, such as a core count, as computed here)."""
    meaning: str
    """Its field's description."""


def settings_reference(model: type[BaseSettings] = Settings, prefix: str = "") -> list[SettingRow]:
    """One row for every leaf key of ``model``, sections expanded in place, in declaration order."""
    rows: list[SettingRow] = []
    for name, field in model.model_fields.items():
        section = field.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            if not issubclass(section, BaseSettings):
                raise TypeError(f"section {prefix}{name} must be a BaseSettings: it reads its own variables")
            rows.extend(settings_reference(section, f"{prefix}{name}."))
            continue
        rows.append(
            SettingRow(f"{prefix}{name}", _variable(model, name, field), _default(field), field.description or "")
        )
    return rows


def format_table(rows: list[SettingRow]) -> str:
    """The rows as a Markdown table, as ``rewardhub-train config`` prints the trainer's keys."""
    lines = ["| key | environment variable | default | meaning |", "| --- | --- | --- | --- |"]
    for row in rows:
        default = "unset" if row.default is None else "empty" if row.default == [] else f"`{_show(row.default)}`"
        lines.append(f"| `{row.key}` | `{row.env}` | {default} | {row.meaning.replace('|', '/')} |")
    return "\n".join(lines)


def _variable(model: type[BaseSettings], name: str, field: FieldInfo) -> str:
    if isinstance(field.validation_alias, str):  # a variable kept from before its section existed
        return field.validation_alias
    return f"{model.model_config.get('env_prefix', '')}{name}".upper()


def _default(field: FieldInfo) -> Any:
    return to_jsonable_python(field.get_default(call_default_factory=True))


def _show(value: Any) -> str:
    if isinstance(value, list):  # lists are comma-separated in the environment
        return ",".join(str(part) for part in value)
    return str(value)
