"""Reading points, boxes and detections out of a response, in the formats VLMs answer in.

- tags: ``<point>(x, y)</point>`` (NeMo-Gym's gui_coordinate, Molmo-style prompts), ``<box>``,
  ``<bbox>``, Qwen-VL's ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>``;
- JSON: ``{"point_2d": [x, y]}``, ``{"bbox_2d": [x1, y1, x2, y2], "label": ...}`` (Qwen2.5-VL),
  ``point``, ``bbox``, ``box``, ``{"x", "y"}``, bare ``[x, y]`` and ``[x1, y1, x2, y2]`` arrays, a list of
  them, in a ```json block or not;
- GUI actions: ``click(x=…, y=…)``, ``pyautogui.click(x, y)``;
- plain tuples: ``(x, y)``, ``[x1, y1, x2, y2]``.

The answer is read from the last ``<answer>`` element when there is one, after any
``<think>`` block. The first format family that holds a shape decides, and its first shape counts
(NeMo-Gym reads the first ``<point>``). Numbers are returned as written; which coordinate system
they are in is :mod:`.coordinates`' business.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..elements import elements
from ..text import strip_think

__all__ = ["Detection", "answer_text", "point_tag", "read_detections", "read_shapes"]

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBERS = re.compile(_NUMBER)
_SHAPE_TAGS = ("point", "box", "bbox", "points")
_CLICK = re.compile(
    rf"\b(?:click|tap|left_click|double_click|right_click|moveTo)\s*\(\s*(?:x\s*=\s*)?({_NUMBER})\s*,\s*(?:y\s*=\s*)?({_NUMBER})",
    re.IGNORECASE,
)
_TUPLE = re.compile(rf"[\(\[]\s*{_NUMBER}(?:\s*,\s*{_NUMBER}){{1,3}}\s*[\)\]]")
_POINT_TAG = re.compile(r"<point>\s*\[?\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)\s*\]?\s*</point>")
_POINT_KEYS = ("point_2d", "point", "click", "coordinate", "coordinates", "position")
_BOX_KEYS = ("bbox_2d", "bbox", "box", "box_2d", "bounding_box")


@dataclass(frozen=True)
class Detection:
    """One labelled box of a detection answer (coordinates as written)."""

    box: tuple[float, ...]
    label: str
    score: float = 1.0


def answer_text(response: str) -> str:
    """The part of a response that holds the answer: the last ``<answer>`` element, or the text."""
    text = strip_think(response)
    answers = elements(text, "answer")
    return answers[-1][2] if answers else text


def point_tag(response: str) -> list[tuple[float, ...]]:
    """NeMo-Gym gui_coordinate's reading: the first ``<point>(x, y)</point>`` of the whole response
    (a think block included), whole numbers only, ``[...]`` around the pair allowed; nothing else."""
    found = _POINT_TAG.search(response)
    return [(float(found.group(1)), float(found.group(2)))] if found else []


def read_shapes(text: str) -> list[tuple[float, ...]]:
    """Every point (2 numbers) and box (4 numbers) of the first format family that has any."""
    for reader in (_tagged, _json_shapes, _clicks, _tuples):
        shapes = [shape for shape in reader(text) if len(shape) in (2, 4)]
        if shapes:
            return shapes
    return []


def _tagged(text: str) -> Iterator[tuple[float, ...]]:
    found = [element for tag in _SHAPE_TAGS for element in elements(text, tag, attributes=True)]
    found += _qwen_boxes(text)
    for _, head, body in sorted(found, key=lambda element: element[0]):
        attributes = re.findall(rf"\b([xy])\d*\s*=\s*[\"']?({_NUMBER})", head)
        if attributes and not _NUMBERS.search(body):
            yield tuple(float(value) for _, value in attributes)  # <point x="12" y="34">label</point>
            continue
        yield tuple(float(n) for n in _NUMBERS.findall(body))


def _qwen_boxes(text: str) -> list[tuple[int, str, str]]:
    """Qwen-VL's ``<|box_start|>…<|box_end|>`` markers, as :func:`elements` gives tags, in linear time."""
    bodies: list[tuple[int, str, str]] = []
    i = 0
    while (start := text.find("<|box_start|>", i)) >= 0:
        end = text.find("<|box_end|>", start)
        if end < 0:
            break
        bodies.append((start, "", text[start + len("<|box_start|>") : end]))
        i = end + len("<|box_end|>")
    return bodies


def _json_shapes(text: str) -> Iterator[tuple[float, ...]]:
    for value in _json_values(text):
        yield from _shapes_in(value)


def _shapes_in(value: Any) -> Iterator[tuple[float, ...]]:
    if isinstance(value, dict):
        for key in _POINT_KEYS + _BOX_KEYS:
            if key in value and _numbers(value[key]) is not None:
                yield _numbers(value[key])  # type: ignore[misc]
                return
        if _numbers([value.get("x"), value.get("y")]) is not None:
            yield _numbers([value["x"], value["y"]])  # type: ignore[misc]
            return
        for inner in value.values():
            if isinstance(inner, dict | list):
                yield from _shapes_in(inner)
    elif isinstance(value, list):
        numbers = _numbers(value)
        if numbers is not None:
            yield numbers
        else:
            for item in value:
                yield from _shapes_in(item)


def _numbers(value: Any) -> tuple[float, ...] | None:
    if isinstance(value, list) and len(value) in (2, 4):
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            return tuple(float(v) for v in value)
    if isinstance(value, str):
        numbers = _NUMBERS.findall(value)
        if len(numbers) in (2, 4) and len(value) < 80:
            return tuple(float(n) for n in numbers)
    return None


def _clicks(text: str) -> Iterator[tuple[float, ...]]:
    for match in _CLICK.finditer(text):
        yield (float(match.group(1)), float(match.group(2)))


def _tuples(text: str) -> Iterator[tuple[float, ...]]:
    for match in _TUPLE.finditer(text):
        yield tuple(float(n) for n in _NUMBERS.findall(match.group(0)))


MAX_JSON_STARTS = 256
"""Bracket positions tried as the start of JSON: a text of ten thousand ``[`` costs no more than this."""


def _json_values(text: str) -> Iterator[Any]:
    """Each JSON object or array written in the text, outermost first, left to right."""
    decoder = json.JSONDecoder()
    i, tried = 0, 0
    while i < len(text) and tried < MAX_JSON_STARTS:
        if text[i] in "[{":
            tried += 1
            try:
                value, end = decoder.raw_decode(text, i)
            except (ValueError, RecursionError):  # not JSON here, or nested past the parser's depth
                i += 1
                continue
            yield value
            i = end
        else:
            i += 1


def read_detections(text: str) -> list[Detection] | None:
    """The labelled boxes of a detection answer (a JSON list of objects), or None when none is written."""
    for value in _json_values(text):
        items = value.get("objects", value.get("detections")) if isinstance(value, dict) else value
        if isinstance(items, dict):
            items = [items]
        if not isinstance(items, list) or not items or not all(isinstance(item, dict) for item in items):
            continue
        detections = [d for d in (_detection(item) for item in items) if d is not None]
        if detections:
            return detections
    return None


def _detection(item: dict[str, Any]) -> Detection | None:
    box = next((item[key] for key in _BOX_KEYS if key in item), None)
    numbers = _numbers(box) if isinstance(box, list) else None
    label = item.get("label", item.get("category", item.get("name")))
    if numbers is None or len(numbers) != 4 or not isinstance(label, str):
        return None
    score = item.get("score", item.get("confidence", 1.0))
    if not isinstance(score, int | float) or isinstance(score, bool):
        score = 1.0
    return Detection(box=numbers, label=label.strip().casefold(), score=float(score))
