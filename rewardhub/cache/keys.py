"""Content addresses of verdicts: the verdict key plus exactly the sample fields the verifier reads.

Pure functions. Two samples that differ only in a field the verifier does not read (an id, a
group, metadata a math verifier never looks at) get one address, so the second is served the
first's verdict; a different version or config of the verifier is a different address.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from rewardhub.types import Sample

__all__ = ["cache_key", "sample_digest"]


def sample_digest(sample: Sample, reads: Sequence[str]) -> str:
    """A hash of the fields in ``reads``, canonical JSON (sorted keys), nothing else of the sample."""
    dumped = sample.model_dump(mode="json", include=set(reads))
    canonical = json.dumps(dumped, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def cache_key(verdict_key: Mapping[str, str], sample: Sample, reads: Sequence[str]) -> str:
    """``verifier:version:config_hash:sample_digest``: readable in a store, unique per verdict."""
    return ":".join(
        (verdict_key["verifier"], verdict_key["version"], verdict_key["config_hash"], sample_digest(sample, reads))
    )
