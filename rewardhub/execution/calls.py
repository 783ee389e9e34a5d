"""A unit of scoring work and how it is carried out, wherever it runs.

A :class:`Call` is one verifier applied to one sample (or, for group verifiers, to all samples of
one group). :func:`run_call` is the only place a verifier's code is invoked: the local pool's
workers, the inline path and Celery workers all go through it, so a verifier never knows where it
runs and every engine turns exceptions into statuses the same way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rewardhub.errors import VerifierError
from rewardhub.registry import Registry
from rewardhub.types import ERROR, Result, Sample, VerifierKind
from rewardhub.verifier import VerifierConfig, as_result

__all__ = ["Call", "failure", "run_call"]


@dataclass(frozen=True)
class Call:
    verifier: str
    config: VerifierConfig
    samples: tuple[Sample, ...]  # one sample, or a whole group for group verifiers
    kind: VerifierKind
    timeout_s: float

    @property
    def is_group(self) -> bool:
        return self.kind == "group"


def failure(call: Call, message: str, status: str = ERROR, **details: object) -> list[Result]:
    """The results of a call that could not judge: the verifier's failure score and a message."""
    result = Result.failed(message, status=status, score=call.config.failure_score, **details)  # type: ignore[arg-type]
    return [result] * len(call.samples)


def run_call(registry: Registry, call: Call) -> list[Result]:
    """Run one call in this process, turning every exception into an ``error`` status."""
    started = time.perf_counter()
    try:
        verifier = registry.get(call.verifier)
        if call.is_group:
            raw = verifier.score_group(list(call.samples), call.config)
            if len(raw) != len(call.samples):
                raise VerifierError(f"group verifier returned {len(raw)} results for {len(call.samples)} samples")
        else:
            raw = [verifier.score(call.samples[0], call.config)]
        results = [as_result(value) for value in raw]
        results = [_with_failure_score(r, call.config.failure_score) if r.status != "ok" else r for r in results]
    except VerifierError as exc:
        results = failure(call, exc.message)
    except MemoryError:
        results = failure(call, "out of memory while scoring (worker memory limit)", reason="memory")
    except RecursionError:
        results = failure(call, "recursion limit exceeded while scoring", reason="recursion")
    except Exception as exc:  # a verifier bug is that sample's error, never a silent 0
        results = failure(call, f"verifier {call.verifier!r} raised {type(exc).__name__}: {exc}", reason="exception")
    elapsed_ms = (time.perf_counter() - started) * 1000 / max(1, len(results))
    return [r.model_copy(update={"elapsed_ms": elapsed_ms}) for r in results]


def _with_failure_score(result: Result, score: float) -> Result:
    return result.model_copy(update={"score": score}) if result.score != score else result
