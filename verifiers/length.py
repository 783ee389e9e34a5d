"""``length``: shaping by response length, DAPO's soft overlong punishment by default.

DAPO (Yu et al., 2025, eq. 13) with maximum length L_max and a soft buffer L_cache:

    r = 0                                 if |y| <= L_max - L_cache
    r = ((L_max - L_cache) - |y|) / L_cache   if L_max - L_cache < |y| <= L_max
    r = -1                                if |y| > L_max

It is a penalty in [-1, 0], meant to be added to a correctness reward with ``{"sum": [...]}``.
Length is counted in tokens when the trainer passes ``metadata.response_tokens`` (the only exact
count), else in whitespace-separated words or characters, as configured.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig


def soft_overlong_penalty(length: int, max_length: int, cache: int) -> float:
    """DAPO's soft overlong punishment (see module docstring)."""
    threshold = max_length - cache
    if length <= threshold:
        return 0.0
    if length <= max_length:
        return (threshold - length) / cache
    return -1.0


def measure(sample: Sample, unit: str) -> tuple[int, str]:
    tokens = sample.metadata.get("response_tokens")
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
        return tokens, "tokens"
    if unit == "chars":
        return len(sample.response), "chars"
    return len(sample.response.split()), "words"


class LengthVerifier(Verifier):
    """Overlong / length penalty shaping (DAPO's soft overlong punishment)."""

    name = "length"
    version = "1"
    kind = "rule"
    inline = True

    class Config(VerifierConfig):
        max_length: int = Field(4096, gt=0, description="L_max: lengths above it get the full penalty -1.")
        cache_length: int = Field(
            512, gt=0, description="L_cache: the soft buffer below L_max where the penalty ramps."
        )
        unit: Literal["words", "chars"] = Field("words", description="Unit when metadata.response_tokens is absent.")

        @model_validator(mode="after")
        def _cache_fits(self) -> LengthVerifier.Config:
            if self.cache_length > self.max_length:
                raise ValueError("cache_length must not exceed max_length")
            return self

    def score(self, sample: Sample, config: Config) -> Result:
        length, unit = measure(sample, config.unit)
        penalty = soft_overlong_penalty(length, config.max_length, config.cache_length)
        return Result.ok(penalty, length=length, unit=unit)
