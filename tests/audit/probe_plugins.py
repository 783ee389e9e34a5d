"""Verifiers for the probe-suite tests, loaded by the service only (never by the test process).

Each writes the reply it judged to the file ``LOG_PATH`` names (the test appends it to its copy of
this file), with its process id: a line there is a reply that reached the verifier through the
service's workers.
"""

from __future__ import annotations

import json
import os

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

LOG_PATH: str | None = None


def _record(name: str, sample: Sample) -> None:
    if LOG_PATH:
        with open(LOG_PATH, "a", encoding="utf-8") as log:
            log.write(json.dumps({"verifier": name, "pid": os.getpid(), "response": sample.response}) + "\n")


class Recording(Verifier):
    """An honest checker: 1 when the reply, stripped, is the reference."""

    name = "test_probe_recording"
    kind = "rule"

    def score(self, sample: Sample, config: VerifierConfig) -> Result:
        _record(self.name, sample)
        return Result.ok(float(sample.response.strip() == str(sample.reference)))


class PaysEverything(Verifier):
    """A broken checker: 1 for any reply at all."""

    name = "test_probe_pays_everything"
    kind = "rule"

    def score(self, sample: Sample, config: VerifierConfig) -> Result:
        _record(self.name, sample)
        return Result.ok(1.0)
