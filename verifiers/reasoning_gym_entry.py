"""A reasoning-gym entry as it arrived over JSON, made the entry its family generated again.

Two things are lost between reasoning-gym's ``dataset[i]`` and a verifier that gets the entry over
HTTP, and each changes scores:

- **types** (:func:`restore_types`): JSON has no tuple, so a board that ``arc_agi`` and ``rearc``
  keep as a tuple of tuples arrives as lists, and their scorers compare the parsed answer (tuples)
  with it: the right answer scored 0.05. :data:`TUPLES` names, per family, where the pinned release
  puts tuples in an entry's metadata (tests/verifiers/test_reasoning_gym_entry.py generates every
  family and checks the table, and that the gold scores the same before and after a JSON round trip);
  lists there become tuples again. Integer keys (``graph_color``'s ``possible_answer``) become
  integers again.
- **the dataset's config** (:func:`entry_config`): a family's ``score_answer`` is a method of a
  dataset built with a config (``decimal_arithmetic``'s tolerance is its ``max_num_decimal_places``,
  ``time_intervals`` scales its partial credit by its time windows, ``word_ladder`` checks words of
  its lengths), and ``get_score_answer_fn`` builds the default one. Each entry records the config's
  curriculum fields in ``metadata.difficulty``; read back through the family's curriculum (a range
  attribute's ``(low, high)`` is its two fields), those that differ from the default config are the
  config to score with.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

__all__ = ["INT_KEYS", "TUPLES", "config_fields", "entry_config", "field_value", "restore_types"]

Path = tuple[str, ...]
"""A place in the metadata: keys, ``*`` for every element of a list, ``<key int>`` for a dict's keys."""

TUPLES: dict[str, tuple[Path, ...]] = {
    "advanced_geometry": (("A",), ("B",), ("C",), ("ortho",), ("orthocenter_approx",)),
    "arc_agi": (("input",), ("input", "*"), ("output",), ("output", "*")),
    "complex_arithmetic": (("num1",), ("num2",), ("result",)),
    "count_primes": (("n",),),
    "course_schedule": (("prerequisites", "*"),),
    "futoshiki": (("constraints", "*"),),
    "game_of_life_halting": (("placed_patterns", "*", "position"),),
    "graph_color": (("puzzle", "edges", "*"),),
    "knight_swap": (("solution", "*"),),
    "knights_knaves": (("solution",), ("statements",), ("statements", "*"), ("statements", "*", "*")),
    "rearc": (("input",), ("input", "*"), ("output",), ("output", "*")),
    "string_splitting": (("initial_machines",),),
    "string_synthesis": (("initial_blocks",),),
}
"""Where reasoning-gym's generators put tuples in ``metadata`` (``difficulty`` aside), by family.
``codeio``'s ``input_data``, the input of the program it drew, holds whatever that program takes
(tuples included) and is not listed: its scorer never reads it."""

INT_KEYS: dict[str, tuple[Path, ...]] = {"graph_color": (("possible_answer",),)}
"""Dicts whose keys the generator makes integers (JSON makes them strings)."""


def restore_types(task: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` with the family's tuples and integer keys back (a copy; other values shared)."""
    restored = dict(metadata)
    # Deepest places first, so a tuple of tuples is built from its restored rows.
    for path in sorted(TUPLES.get(task, ()), key=len, reverse=True):
        restored = _at(restored, path, _tuple)
    for path in INT_KEYS.get(task, ()):
        restored = _at(restored, path, _int_keys)
    return restored


def _tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _int_keys(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return {int(k) if isinstance(k, str) and k.lstrip("-").isdigit() else k: v for k, v in value.items()}


def _at(container: Any, path: Path, change) -> Any:
    """``container`` with ``change`` applied at ``path`` (copies along the path, nothing else)."""
    if not path:
        return change(container)
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(container, list | tuple):
            return type(container)(_at(item, rest, change) for item in container)
        return container
    if isinstance(container, dict) and head in container:
        return {**container, head: _at(container[head], rest, change)}
    return container


def entry_config(task: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """The config fields, read from ``metadata.difficulty``, in which the entry's dataset differs from
    the family's default config ({} when it does not, or records nothing readable)."""
    difficulty = metadata.get("difficulty")
    fields = config_fields(task)
    if not isinstance(difficulty, dict) or not fields:
        return {}
    from reasoning_gym.coaching.attributes import RangeAttributeDefinition
    from reasoning_gym.factory import create_curriculum, has_curriculum

    found: dict[str, Any] = {}
    if has_curriculum(task):
        for attr in create_curriculum(task).attributes.values():
            value = difficulty.get(attr.name)
            if isinstance(attr, RangeAttributeDefinition):
                if isinstance(value, list | tuple) and len(value) == 2:
                    found[attr.lower_field_name], found[attr.upper_field_name] = min(value), max(value)
            elif value is not None:
                found[attr.field_name] = value
    for name, value in difficulty.items():  # a few families record config fields by their own names
        found.setdefault(name, value)
    return {
        name: field_value(value, fields[name])
        for name, value in found.items()
        if name in fields and _same_kind(value, fields[name]) and field_value(value, fields[name]) != fields[name]
    }


@cache
def config_fields(task: str) -> dict[str, Any]:
    """The family's config fields that shape a dataset (not ``seed`` or ``size``), with their defaults."""
    from reasoning_gym.factory import DATASETS

    if task not in DATASETS:
        return {}
    defaults = DATASETS[task][1]()
    return {f.name: getattr(defaults, f.name) for f in dataclasses.fields(defaults) if f.name not in ("seed", "size")}


def _same_kind(value: Any, default: Any) -> bool:
    """Whether a value read back from JSON can stand for a field whose default is ``default``."""
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, int | float):
        return isinstance(value, int | float)
    if isinstance(default, list | tuple):
        return isinstance(value, list | tuple)
    return isinstance(value, type(default)) if default is not None else value is None


def field_value(value: Any, default: Any) -> Any:
    """``value`` in the container type of the default (a JSON list for a tuple default is a tuple)."""
    if isinstance(default, tuple) and isinstance(value, list):
        return tuple(value)
    if isinstance(default, list) and isinstance(value, tuple):
        return list(value)
    return value
