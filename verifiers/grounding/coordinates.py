"""Putting coordinates in the unit square: pixels (with the image size), thousandths, or as given.

``auto`` reads numbers that all lie in [0, 1] as normalised and anything larger as pixels, which
needs the image size; a model that answers in thousandths (Qwen2-VL, NeMo-Gym's gui_coordinate)
is named explicitly, since 500 could be either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = ["System", "normalise"]

System = Literal["auto", "pixel", "normalized", "thousandths"]


def normalise(values: Sequence[float], system: System, image_size: tuple[float, float] | None) -> tuple[float, ...]:
    """``values`` (x, y alternating) divided into the unit square; ValueError says what is missing."""
    if system == "auto":
        system = "normalized" if all(0.0 <= v <= 1.0 for v in values) else "pixel"
    if system == "normalized":
        return tuple(values)
    if system == "thousandths":
        return tuple(v / 1000.0 for v in values)
    if image_size is None:
        raise ValueError("pixel coordinates need the image size (reference.image_size: [width, height])")
    width, height = image_size
    return tuple(v / (width if i % 2 == 0 else height) for i, v in enumerate(values))
