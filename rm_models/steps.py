"""Splitting a response into reasoning steps, the unit process reward models score.

Steps come from ``sample.metadata["steps"]`` when the caller already has them (ProcessBench
does), else from splitting the response on a delimiter ("\\n\\n" for Qwen2.5-Math outputs).
Text equal to a PRM's step tag is removed from the steps first: a response that writes the tag
itself would otherwise add reward readings the verifier never asked for.
"""

from __future__ import annotations

from rewardhub.errors import VerifierError
from rewardhub.types import Sample

__all__ = ["sample_steps", "split_steps"]


def split_steps(response: str, delimiter: str) -> list[str]:
    """Non-empty, stripped pieces of ``response`` between delimiters."""
    return [piece.strip() for piece in response.split(delimiter) if piece.strip()]


def sample_steps(sample: Sample, delimiter: str, strip_tags: tuple[str, ...] = ()) -> list[str]:
    steps = sample.metadata.get("steps")
    if steps is None:
        steps = split_steps(sample.response, delimiter)
    elif not (isinstance(steps, list) and all(isinstance(s, str) for s in steps)):
        raise VerifierError('metadata["steps"] must be a list of strings')
    for tag in strip_tags:
        steps = [step.replace(tag, "") for step in steps]
    if not steps:
        raise VerifierError("the response has no steps to score")
    return steps
