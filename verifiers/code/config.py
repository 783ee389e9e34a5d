"""What a ``code`` sample's scoring may be told: language, scoring, limits, batching, comparison.

The ``Config`` of :class:`~rewardhub.verifiers.code.CodeVerifier` (its JSON schema is what ``GET
/v1/verifiers`` shows for ``code``), with the two things read off it before any test runs: the time
there is to start tests in and whether a failure stops them. It has a module of its own because
every step of the scoring reads it: the verifier, the checker's session (:mod:`.checkers`), the
outcomes (:mod:`.outcomes`) and the way through a session (:mod:`.session`), none of which imports
another's module to reach it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rewardhub.verifier import VerifierConfig

__all__ = ["Config", "budget_s", "stop_on_failure"]


class Config(VerifierConfig):
    language: str = Field("python", description="Language of the program, or 'auto' for the code block's own tag.")
    scoring: Literal["fraction", "all_or_nothing"] = Field(
        "fraction", description="fraction: share of tests passed; all_or_nothing: 1 only if every test passes."
    )
    test_timeout_s: float = Field(6.0, gt=0, le=120, description="Wall-clock limit of each test run.")
    memory_mb: int = Field(512, ge=32, le=16384, description="Memory of each test run (all its processes together).")
    max_tests: int | None = Field(None, ge=1, description="Run at most this many tests (the first ones).")
    stop_on_failure: bool | None = Field(
        None,
        description="Skip the remaining tests after the first failure (counted as failed); "
        "unset: only with all_or_nothing scoring, where they cannot change the score.",
    )
    total_timeout_s: float = Field(
        60.0,
        gt=0,
        description="Stop starting tests after this much time; the rest count as failed. Kept under the "
        "sample's hard limit so that a program that times out on every test still gets a score, not a timeout.",
    )
    compare: Literal["lines", "tokens", "exact"] = Field(
        "lines", description="stdout comparison: per line ignoring surrounding spaces, per token, or exact."
    )
    float_tolerance: float = Field(
        1e-6, ge=0, description="Numbers in outputs and results may differ by this much (0: exactly)."
    )
    batch: bool = Field(
        True,
        description="All the tests in one sandboxed run, each with its own clock (false: one sandboxed run per test).",
    )
    fresh_process_per_case: bool = Field(
        False,
        description="Python, batched: each stdin/stdout case in a fork of its own, instead of one after "
        "another in one process reset to a fresh interpreter's state between cases (same verdicts; "
        "what a reset cannot undo is in rewardhub.sandbox.inside.stdio_cases).",
    )
    checker_timeout_s: float = Field(
        10.0, gt=0, le=120, description="Wall-clock limit of each run of a reference's checker (special judge)."
    )


def budget_s(config: Config) -> float:
    """Time to start tests (and checks) in, kept under the sample's hard limit."""
    return min(config.total_timeout_s, 0.8 * config.timeout_s) if config.timeout_s else config.total_timeout_s


def stop_on_failure(config: Config) -> bool:
    return config.stop_on_failure if config.stop_on_failure is not None else config.scoring == "all_or_nothing"
