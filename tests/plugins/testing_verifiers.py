"""Verifiers that misbehave on purpose, loaded as a plugin file by the tests."""

from __future__ import annotations

import os
import signal
import time

from pydantic import Field

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig


class Sleepy(Verifier):
    """Sleeps ``seconds`` (or the response parsed as a float) and then scores 1."""

    name = "test_sleepy"

    class Config(VerifierConfig):
        seconds: float | None = Field(None, description="How long to sleep; the response's number if unset.")

    def score(self, sample: Sample, config: Config) -> Result:
        seconds = config.seconds if config.seconds is not None else float(sample.response)
        time.sleep(seconds)
        return Result.ok(1.0, pid=os.getpid())


class Crash(Verifier):
    """Kills its own process, like a segfault in a C extension."""

    name = "test_crash"

    def score(self, sample: Sample, config: VerifierConfig) -> float:
        if sample.response == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        return 1.0


class Boom(Verifier):
    """Raises an ordinary exception: a verifier bug."""

    name = "test_boom"

    def score(self, sample: Sample, config: VerifierConfig) -> float:
        raise ValueError("verifier bug")


class Hog(Verifier):
    """Allocates far more memory than a worker may have."""

    name = "test_hog"

    def score(self, sample: Sample, config: VerifierConfig) -> float:
        blocks = [bytearray(256 * 1024 * 1024) for _ in range(64)]
        return float(len(blocks))


class Pid(Verifier):
    """Scores 1 and reports which worker process scored it."""

    name = "test_pid"

    def score(self, sample: Sample, config: VerifierConfig) -> Result:
        time.sleep(0.02)
        return Result.ok(1.0, pid=os.getpid())


class GroupSize(Verifier):
    """Group verifier: each sample's score is the size of its group."""

    name = "test_group_size"
    kind = "group"

    def score_group(self, samples: list[Sample], config: VerifierConfig) -> list[float]:
        return [float(len(samples))] * len(samples)


class Wrong(Verifier):
    """Always judges the sample wrong (score 0); escalation tests give it an ``escalate_to``."""

    name = "test_wrong"

    class Config(VerifierConfig):
        escalate_to: str | dict | None = Field(None, description="Verifier consulted when this one says wrong.")

    def score(self, sample: Sample, config: Config) -> Result:
        return Result.ok(0.0, reason="always_wrong")


class ModelCrash(Verifier):
    """A model verifier that takes its whole process down on ``crash`` (a CUDA crash, say).

    Model verifiers run in the worker process itself (the model stays loaded there), so this
    kills the worker, not a disposable pool process: a poison sample for the Celery tests.
    """

    name = "test_model_crash"
    kind = "model"

    def score(self, sample: Sample, config: VerifierConfig) -> Result:
        if sample.response == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        return Result.ok(1.0, pid=os.getpid())


class DeviceProbe(Verifier):
    """A model verifier that reports its process, its GPU pinning and how often it was loaded there."""

    name = "test_device"
    kind = "model"
    loads = 0  # instances created in this process (a model would load once per instance)

    def __init__(self) -> None:
        type(self).loads += 1

    def score(self, sample: Sample, config: VerifierConfig) -> Result:
        time.sleep(0.2)
        return Result.ok(1.0, pid=os.getpid(), device=os.environ.get("CUDA_VISIBLE_DEVICES"), loads=type(self).loads)
