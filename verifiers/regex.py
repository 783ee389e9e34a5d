"""``regex``: does the response match a regular expression?

Judges one pattern against the response in one of four modes: ``search`` (anywhere),
``match`` (at the start), ``fullmatch`` (the whole response) and ``count`` (how many
non-overlapping matches, scored 1 inside ``[min_count, max_count]``). The pattern comes from the
config, or, when the config has none, from the sample's ``reference`` (a string, or an object
``{"pattern": ..., "mode": ..., "min_count": ..., "max_count": ...}`` overriding the config).
The config wins so that ``regex`` can sit in a weighted sum beside a verifier whose
``reference`` is a gold answer.

A user-supplied pattern can backtrack for longer than the universe exists, so matching uses the
``regex`` package's own ``timeout=`` (checked inside its matcher, no signals or threads) and caps
both pattern and input length. A pattern that times out, does not compile or meets an input over
the cap is an ``error`` status, never a 0: the verifier could not judge.

It does not judge meaning: a regex that passes says nothing about whether the answer is right.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import regex as re_engine  # the `regex` package, not this module: it supports timeouts
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

__all__ = ["RegexVerifier"]

Mode = Literal["search", "match", "fullmatch", "count"]
Flag = Literal["IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "UNICODE", "ASCII"]

MAX_PATTERN_CHARS = 10_000
MAX_INPUT_CHARS = 1_000_000


class _PatternRef(BaseModel):
    """A per-sample pattern given in ``reference``; fields left out fall back to the config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    mode: Mode | None = None
    flags: list[Flag] | None = None
    min_count: int | None = Field(None, ge=0)
    max_count: int | None = Field(None, ge=0)


@dataclass(frozen=True)
class Spec:
    pattern: str
    mode: Mode
    flags: tuple[Flag, ...]
    min_count: int
    max_count: int | None


class RegexVerifier(Verifier):
    """Scores 1 when the response matches a pattern (search, match, fullmatch or a match count)."""

    name = "regex"
    version = "1"
    kind = "rule"

    class Config(VerifierConfig):
        pattern: str | None = Field(
            None, description="The pattern; when unset, the sample's reference supplies it (string or object)."
        )
        mode: Mode = Field(
            "search",
            description="search: anywhere; match: at the start; fullmatch: whole response; count: number of matches.",
        )
        flags: list[Flag] = Field(
            default_factory=list, description="Regex flags by name, e.g. ['IGNORECASE', 'MULTILINE']."
        )
        min_count: int = Field(1, ge=0, description="count mode: fewest matches that still score 1.")
        max_count: int | None = Field(
            None, ge=0, description="count mode: most matches that still score 1 (unbounded when unset)."
        )
        strip: bool = Field(True, description="Strip surrounding whitespace from the response before matching.")
        match_timeout_s: float = Field(
            1.0,
            gt=0,
            le=30,
            description="Time limit of one match inside the regex engine; past it the status is error.",
        )
        max_pattern_chars: int = Field(1000, gt=0, le=MAX_PATTERN_CHARS, description="Longest pattern accepted.")
        max_input_chars: int = Field(
            100_000,
            gt=0,
            le=MAX_INPUT_CHARS,
            description="Longest response accepted; a longer one is an error, not a truncation.",
        )

    def score(self, sample: Sample, config: Config) -> Result:
        spec = resolve_spec(sample.reference, config)
        text = sample.response.strip() if config.strip else sample.response
        if len(spec.pattern) > config.max_pattern_chars:
            raise VerifierError(
                f"pattern is {len(spec.pattern)} characters, over the limit of {config.max_pattern_chars}"
            )
        if len(text) > config.max_input_chars:
            raise VerifierError(f"response is {len(text)} characters, over the limit of {config.max_input_chars}")
        compiled = compile_pattern(spec)
        try:
            return judge(compiled, spec, text, config.match_timeout_s)
        except TimeoutError:
            raise VerifierError(
                f"pattern timed out after {config.match_timeout_s}s (catastrophic backtracking?)"
            ) from None


def resolve_spec(reference: Any, config: RegexVerifier.Config) -> Spec:
    """The config's pattern if it has one, else the reference's (which may override mode and counts)."""
    base = Spec(config.pattern or "", config.mode, tuple(config.flags), config.min_count, config.max_count)
    if config.pattern is not None:
        return base
    if isinstance(reference, str):
        return Spec(reference, base.mode, base.flags, base.min_count, base.max_count)
    if isinstance(reference, dict):
        try:
            ref = _PatternRef.model_validate(reference)
        except ValidationError as exc:
            raise VerifierError(f"malformed regex reference: {exc.errors(include_url=False)[0]['msg']}") from None
        return Spec(
            ref.pattern,
            ref.mode or base.mode,
            tuple(ref.flags) if ref.flags is not None else base.flags,
            ref.min_count if ref.min_count is not None else base.min_count,
            ref.max_count if ref.max_count is not None else base.max_count,
        )
    raise VerifierError("no pattern: set config.pattern or give the pattern as the sample's reference")


def compile_pattern(spec: Spec) -> Any:
    flags = 0
    for name in spec.flags:
        flags |= getattr(re_engine, name)
    try:
        return re_engine.compile(spec.pattern, flags)
    except re_engine.error as exc:
        raise VerifierError(f"pattern does not compile: {exc}") from None


def judge(compiled: Any, spec: Spec, text: str, timeout_s: float) -> Result:
    if spec.mode == "count":
        count = sum(1 for _ in compiled.finditer(text, timeout=timeout_s))
        upper_ok = spec.max_count is None or count <= spec.max_count
        passed = spec.min_count <= count and upper_ok
        return Result.ok(float(passed), mode=spec.mode, pattern=spec.pattern, count=count)
    method = getattr(compiled, spec.mode)
    found = method(text, timeout=timeout_s)
    details: dict[str, Any] = {"mode": spec.mode, "pattern": spec.pattern, "matched": found is not None}
    if found is not None:
        details["span"] = list(found.span())
        details["match"] = found.group(0)[:200]
    return Result.ok(float(found is not None), **details)
