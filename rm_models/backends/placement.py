"""Where a transformers model runs, in what precision, and when to hand cached GPU memory back.

Pure functions of what torch reports, so that the choices a GPU run depends on are tested on a
machine without one (tests/models/test_placement.py):

- ``auto`` is the first CUDA device when there is one, else the CPU; an explicit ``cuda:N``
  that does not exist is an error at load time, not a crash inside the first forward pass.
- ``auto`` precision is bfloat16 on a GPU that has it (Ampere and later), float16 on older GPUs
  (bfloat16 there is emulated and slow), float32 on the CPU (half precision on a CPU is slower
  than float32 and loses accuracy for nothing).
- PyTorch's caching allocator keeps freed blocks for reuse. Handing them back after every batch
  would make the next batch pay ``cudaMalloc`` again; keeping many GiB after one long batch
  starves whatever shares the GPU (a second model, a colocated trainer). So the cache is
  released after an out-of-memory error, and after a call that leaves more than a threshold
  cached but unused.
"""

from __future__ import annotations

import re

from ..config import DEVICE_PATTERN

__all__ = [
    "RELEASE_CACHED_BYTES",
    "DevicePlacementError",
    "resolve_device",
    "resolve_dtype",
    "should_release_cache",
]

RELEASE_CACHED_BYTES = 2 * 1024**3
"""Cached-but-unused GPU memory above which a call ends by emptying the allocator's cache."""


class DevicePlacementError(ValueError):
    """The configured device cannot be used on this machine."""


def resolve_device(requested: str, cuda_devices: int, mps_available: bool = False) -> str:
    """The torch device string for a config's ``device``, given how many CUDA devices torch sees."""
    if not re.fullmatch(DEVICE_PATTERN, requested):
        raise DevicePlacementError(f"device {requested!r} is not one of auto, cpu, mps, cuda, cuda:N")
    if requested == "auto":
        return "cuda" if cuda_devices > 0 else "cpu"
    if requested.startswith("cuda"):
        if cuda_devices == 0:
            raise DevicePlacementError(
                f"device {requested!r} was asked for, but torch sees no CUDA device "
                "(a CPU-only torch build, or CUDA_VISIBLE_DEVICES hides them)"
            )
        index = int(requested.partition(":")[2] or 0)
        if index >= cuda_devices:
            raise DevicePlacementError(
                f"device {requested!r} was asked for, but torch sees {cuda_devices} CUDA devices"
            )
    if requested == "mps" and not mps_available:
        raise DevicePlacementError("device 'mps' was asked for, but torch has no MPS backend here")
    return requested


def resolve_dtype(requested: str, device_type: str, bf16_supported: bool) -> str:
    """The torch dtype name for a config's ``dtype`` on a device of ``device_type``."""
    if requested != "auto":
        return requested
    if device_type == "cuda":
        return "bfloat16" if bf16_supported else "float16"
    return "float32"


def should_release_cache(reserved_bytes: int, allocated_bytes: int, threshold: int = RELEASE_CACHED_BYTES) -> bool:
    """Whether the allocator holds more than ``threshold`` bytes that no tensor uses."""
    return reserved_bytes - allocated_bytes > threshold
