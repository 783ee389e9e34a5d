"""The shape every verifier has: a ``name``, a ``kind``, a pydantic ``Config`` and ``score``.

A verifier is a small class. Its ``Config`` is validated once per request (so a bad config is a
422 before any work starts) and its JSON schema is what ``GET /v1/verifiers`` shows. ``score``
returns a :class:`~rewardhub.types.Result` (or a bare float for "ok with this score") and may
raise :class:`~rewardhub.errors.VerifierError` to report that it could not judge the sample.

Verifiers never know where they run: the execution layer calls ``score_batch`` (whose default
scores each sample with ``score``; model verifiers override it to batch on the device) or
``score_group``, in a worker process, a Celery worker or, for ``inline`` verifiers, in place,
always through :func:`rewardhub.calls.run_call`.

Every verifier has a ``version``: a built-in bumps it whenever a change can alter its verdicts,
and a plugin declares its own. With the name and a hash of the canonical config it makes the
*verdict key* every result carries (``details["verdict_key"]``), so a verdict can be reproduced,
compared across releases, and found again in the reward cache. ``reads`` names the sample
fields a verdict depends on (two samples that differ elsewhere share a cache entry);
``cacheable`` says whether a verdict may be served again at all: group verifiers (one sample's
verdict depends on its group-mates) and verifiers that are not ``deterministic`` are not.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from rewardhub.types import Result, Sample, VerifierKind

__all__ = ["CALLER_FIELD", "SAMPLE_FIELDS_READ", "Verifier", "VerifierConfig", "as_result", "config_hash"]

SAMPLE_FIELDS_READ: tuple[str, ...] = ("prompt", "response", "messages", "reference", "metadata")
"""What a verifier reads unless it says otherwise: everything but the id, the spec and the group."""
CALLER_FIELD = "rewardhub_caller"
"""The ``metadata`` key where the service writes who asked (a digest of the API key, with a grant to
judge what that key owns) for a verifier that ``reads_caller``; whatever a caller sent under it is
replaced (or removed where the route knows no caller)."""


class VerifierConfig(BaseModel):
    """Fields every verifier's config has. Subclass it as the verifier's nested ``Config``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    failure_score: float = Field(
        0.0, description="Score reported with a timeout or error status (trainers should mask these)."
    )
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="Hard wall-clock limit per sample; the server's default when unset, capped by its maximum.",
    )


class Verifier:
    """Base class of all verifiers. Subclasses set ``name`` and override ``score``."""

    name: ClassVar[str]
    kind: ClassVar[VerifierKind] = "rule"
    description: ClassVar[str] = ""
    inline: ClassVar[bool] = False
    """Cheap and bounded enough to run in the API process without a pool round trip."""

    version: ClassVar[str] = "1"
    """Bumped whenever a change can alter a verdict: a cached or stored verdict of another version is not this one's."""
    reads: ClassVar[tuple[str, ...]] = SAMPLE_FIELDS_READ
    """The sample fields a verdict depends on (``Sample`` field names); the cache keys on these only."""
    deterministic: ClassVar[bool] = True
    """False for a verifier that samples (a judge at temperature > 0 that wants fresh draws)."""
    cacheable: ClassVar[bool | None] = None
    """May a verdict be served again? Unset: yes, unless the verifier is a group verifier or not deterministic."""
    reads_caller: ClassVar[bool] = False
    """Judges something the caller owns (a session): the service writes the caller into ``metadata``
    under :data:`CALLER_FIELD` for the samples it judges, so ownership is checked where it judges."""

    Config: ClassVar[type[VerifierConfig]] = VerifierConfig

    def score(self, sample: Sample, config: Any) -> Result | float:
        raise NotImplementedError(f"verifier {self.name!r} does not implement score()")

    def score_batch(self, samples: list[Sample], config: Any) -> list[Result | float]:
        """Score many samples; model verifiers override this to batch on the device."""
        return [self.score(sample, config) for sample in samples]

    def score_group(self, samples: list[Sample], config: Any) -> list[Result | float]:
        """Group verifiers (kind ``group``) score all samples of one group together."""
        raise NotImplementedError(f"verifier {self.name!r} is not a group verifier")

    @classmethod
    def warm_up(cls) -> None:
        """Build, once, the lazy state every worker would otherwise build on its first samples.

        Called in the worker pools' fork server before any worker exists (see
        :mod:`rewardhub.execution.warm_up`): the imports, parser tables and caches filled here are
        inherited by every worker, including a fresh one that replaces a killed worker. Default:
        nothing to warm.
        """

    @classmethod
    def warm_worker(cls) -> None:
        """Build, once in each worker process after it forked, what cannot be shared across a fork.

        Called in the workers of the pools that run this verifier's kind when they start (see
        :func:`rewardhub.execution.warm_up.warm_worker`), before they take calls: the code
        verifier starts its warm sandbox here (a sandbox's processes and sockets belong to one
        process), so the first batch of a fresh service does not wait for it. Default: nothing.
        """

    @classmethod
    def is_cacheable(cls) -> bool:
        if cls.cacheable is not None:
            return cls.cacheable
        return cls.kind != "group" and cls.deterministic

    @classmethod
    def verdict_key(cls, config: VerifierConfig) -> dict[str, str]:
        """Which verifier, which version and which config gave a verdict (``details["verdict_key"]``).

        Remembered per (class, config) where the config hashes: a worker signs every call, and the
        canonical JSON and its SHA-256 cost more than many a rule verifier's whole verdict."""
        try:
            memo = (cls, config)
            known = _VERDICT_KEYS.get(memo)
        except TypeError:  # a config holding lists or dicts does not hash: computed each time
            return {"verifier": cls.name, "version": str(cls.version), "config_hash": config_hash(config)}
        if known is None:
            if len(_VERDICT_KEYS) >= 4096:
                _VERDICT_KEYS.clear()
            known = _VERDICT_KEYS[memo] = {
                "verifier": cls.name,
                "version": str(cls.version),
                "config_hash": config_hash(config),
            }
        return known

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {
            "name": cls.name,
            "kind": cls.kind,
            "version": str(cls.version),
            "cacheable": cls.is_cacheable(),
            "reads": list(cls.reads),
            "description": cls.description or _first_paragraph(inspect.getdoc(cls)),
            "config_schema": cls.Config.model_json_schema(),
        }


_VERDICT_KEYS: dict[tuple[type[Verifier], VerifierConfig], dict[str, str]] = {}


def as_result(value: Result | float | int | bool) -> Result:
    """Verifiers may return a bare number for "ok with this score"."""
    if isinstance(value, Result):
        return value
    return Result.ok(float(value))


def config_hash(config: VerifierConfig) -> str:
    """A short hash of the canonical config: defaults filled in, keys sorted (``{}`` and the defaults agree)."""
    canonical = json.dumps(config.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")
