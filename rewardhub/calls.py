"""A unit of scoring work and how it is carried out, wherever it runs.

A :class:`Call` is one verifier applied to one sample, to all samples of one group (group
verifiers), or to a batch of samples each judged on its own (model verifiers' ``score_batch``).
:func:`run_call` is the only place a verifier's code is invoked and the only place its exceptions
become statuses: the local pool's workers, the inline path, the micro-batcher and Celery workers
all go through it, so a verifier never knows where it runs and every engine reports a crash, a
bad value or a wrong count the same way.

A call the scorer makes carries the :class:`~rewardhub.registry.VerifierTraits` of its spec's leaf
(:meth:`Call.of`): its kind, time limit and verdict key, and whether it runs in place
(:attr:`Call.inline`) or judges what the caller owns (:attr:`Call.reads_caller`), which is all an
engine asks before routing it. A worker that rebuilds a call from a payload needs none of that.

It is also where a verdict is signed with its verdict key (verifier name, version, config hash:
``details["verdict_key"]``): the one the scorer put on the call (resolved once per spec), else
the key of the code that runs it (a Celery worker, which may run another release, signs its
own); the scorer adds the key to the results made elsewhere (a timeout, a lost worker).
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from rewardhub.errors import VerifierError
from rewardhub.registry import Registry, VerifierTraits
from rewardhub.types import ERROR, OK, Result, Sample, VerifierKind
from rewardhub.verifier import VerifierConfig, as_result

__all__ = ["Call", "failure", "run_call"]


@dataclass(frozen=True)
class Call:
    verifier: str
    config: VerifierConfig
    samples: tuple[Sample, ...]  # one sample, a whole group (group verifiers), or a batch (model verifiers)
    kind: VerifierKind
    timeout_s: float
    verdict_key: dict[str, str] | None = None  # the scorer's, resolved once per spec; else run_call's own
    traits: VerifierTraits | None = None  # the scorer's calls carry them; a worker's rebuilt call does not

    @classmethod
    def of(cls, traits: VerifierTraits, config: VerifierConfig, samples: tuple[Sample, ...]) -> Call:
        """The call of a spec's leaf: kind, time limit and verdict key are its traits'."""
        return cls(traits.name, config, samples, traits.kind, traits.timeout_s, traits.verdict_key, traits)

    @property
    def is_group(self) -> bool:
        return self.kind == "group"

    @property
    def inline(self) -> bool:
        """Scored in place by the engine that routes it (see :attr:`VerifierTraits.inline`)."""
        return self.traits is not None and self.traits.inline

    @property
    def reads_caller(self) -> bool:
        """Its verifier judges something the caller owns (a session)."""
        return self.traits is not None and self.traits.reads_caller

    @classmethod
    def batch(cls, calls: Sequence[Call]) -> Call:
        """One call for the samples of many calls of one verifier and config, scored in one batch."""
        first = calls[0]
        if any(call.verifier != first.verifier or call.is_group for call in calls):
            raise ValueError("a batch holds per-sample calls of one verifier (and one config: the first's)")
        samples = tuple(sample for call in calls for sample in call.samples)
        return replace(first, samples=samples, timeout_s=max(call.timeout_s for call in calls))

    def one_by_one(self) -> list[Call]:
        return [replace(self, samples=(sample,)) for sample in self.samples]


def failure(call: Call, message: str, status: str = ERROR, **details: object) -> list[Result]:
    """The results of a call that could not judge: the verifier's failure score and a message."""
    result = Result.failed(message, status=status, score=call.config.failure_score, **details)  # type: ignore[arg-type]
    return [result] * len(call.samples)


def run_call(registry: Registry, call: Call) -> list[Result]:
    """Run one call in this process: one Result per sample, whatever the verifier does.

    An exception is an ``error`` status with the verifier's failure score, never a score. A batch
    that raises is scored again one sample at a time, so the exception lands on the sample that
    caused it and its batch-mates keep their scores. A value that is not a Result or a finite
    number is that sample's error.
    """
    started = time.perf_counter()
    verdict_key: dict[str, str] | None = None
    try:
        verifier = registry.get(call.verifier)
        verdict_key = call.verdict_key or type(verifier).verdict_key(call.config)
        if call.is_group:
            raw = verifier.score_group(list(call.samples), call.config)
        else:
            raw = verifier.score_batch(list(call.samples), call.config)
        if len(raw) != len(call.samples):
            raise VerifierError(f"{call.verifier!r} returned {len(raw)} results for {len(call.samples)} samples")
    except Exception as exc:  # a verifier bug is that sample's error, never a silent 0
        if not call.is_group and len(call.samples) > 1:
            return [run_call(registry, one)[0] for one in call.one_by_one()]
        message, details = _explain(call, exc)
        raw = failure(call, message, **details)
    # A group's time is shared by its samples; each sample of a batch waited for the whole batch.
    elapsed_ms = round((time.perf_counter() - started) * 1000 / (len(call.samples) if call.is_group else 1), 3)
    return [
        _checked(value, call.config, elapsed_ms, sample.id, verdict_key)
        for value, sample in zip(raw, call.samples, strict=True)
    ]


def _explain(call: Call, exc: Exception) -> tuple[str, dict[str, str]]:
    """The message (and reason) of a verifier's exception."""
    if isinstance(exc, VerifierError):
        return exc.message, {}
    if isinstance(exc, MemoryError):
        return "out of memory while scoring (worker memory limit)", {"reason": "memory", **address_space()}
    if isinstance(exc, RecursionError):
        return "recursion limit exceeded while scoring", {"reason": "recursion"}
    return f"verifier {call.verifier!r} raised {type(exc).__name__}: {exc}", {"reason": "exception"}


def address_space() -> dict[str, int]:
    """This process's address space in MiB (in use, its peak, the limit), where the system says: a
    worker's memory limit counts address space, not resident memory, so these say whether a
    MemoryError came from the verifier's own appetite or from what the process had mapped before."""
    found: dict[str, int] = {}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmSize", "VmPeak"):
                    found[f"address_space_{'mb' if key == 'VmSize' else 'peak_mb'}"] = int(value.split()[0]) // 1024
    except (OSError, ValueError):
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        found["address_space_limit_mb"] = soft // 2**20
    return found


def _checked(
    value: object, config: VerifierConfig, elapsed_ms: float, sample_id: str | None, verdict_key: dict[str, str] | None
) -> Result:
    """A verifier's value as a Result: a non-``ok`` status carries the failure score.

    The result carries its sample's id and time already, so a one-verifier request (the common
    case) answers with the worker's result object as it came back, without another copy."""
    try:
        result = as_result(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError) as exc:
        message = f"verifier returned {type(value).__name__}, not a Result or number: {exc}"
        result = Result.failed(message, score=config.failure_score)
    if not math.isfinite(result.score):
        result = Result.failed(f"verifier returned a non-finite score ({result.score})", score=config.failure_score)
    elif result.status != OK and result.score != config.failure_score:
        result = result.model_copy(update={"score": config.failure_score})
    update: dict[str, object] = {"elapsed_ms": elapsed_ms, "id": sample_id}
    if verdict_key is not None:
        update["details"] = {**result.details, "verdict_key": verdict_key}
    return result.model_copy(update=update)
