"""Where a model runs and in what precision: decided before any weight loads, testable without a GPU."""

from __future__ import annotations

import pytest
import torch

from rewardhub.calls import Call, run_call
from rewardhub.models.backends import get_backend
from rewardhub.models.backends.placement import (
    RELEASE_CACHED_BYTES,
    DevicePlacementError,
    resolve_device,
    resolve_dtype,
    should_release_cache,
)
from rewardhub.models.config import backend_spec
from rewardhub.models.outcome_rm import OutcomeRM
from rewardhub.registry import Registry
from rewardhub.types import Sample


@pytest.mark.parametrize(
    ("requested", "cuda_devices", "expected"),
    [
        ("auto", 0, "cpu"),
        ("auto", 1, "cuda"),
        ("auto", 8, "cuda"),
        ("cpu", 4, "cpu"),
        ("cuda", 1, "cuda"),
        ("cuda:0", 1, "cuda:0"),
        ("cuda:3", 4, "cuda:3"),
    ],
)
def test_device_strings_resolve(requested: str, cuda_devices: int, expected: str) -> None:
    assert resolve_device(requested, cuda_devices) == expected


@pytest.mark.parametrize(
    ("requested", "cuda_devices", "message"),
    [
        ("cuda", 0, "no CUDA device"),
        ("cuda:1", 0, "no CUDA device"),
        ("cuda:2", 2, "sees 2 CUDA devices"),
        ("mps", 0, "no MPS backend"),
        ("gpu", 1, "not one of"),
        ("cuda:-1", 1, "not one of"),
        ("CUDA", 1, "not one of"),
    ],
)
def test_devices_that_cannot_be_used_are_named(requested: str, cuda_devices: int, message: str) -> None:
    with pytest.raises(DevicePlacementError, match=message):
        resolve_device(requested, cuda_devices)


@pytest.mark.parametrize(
    ("requested", "device_type", "bf16_supported", "expected"),
    [
        ("auto", "cuda", True, "bfloat16"),  # Ampere and later
        ("auto", "cuda", False, "float16"),  # V100, T4: bf16 would be emulated
        ("auto", "cpu", False, "float32"),
        ("auto", "mps", False, "float32"),
        ("float32", "cuda", True, "float32"),
        ("float16", "cuda", True, "float16"),
        ("bfloat16", "cpu", False, "bfloat16"),  # asked for explicitly: honoured
    ],
)
def test_dtypes_resolve(requested: str, device_type: str, bf16_supported: bool, expected: str) -> None:
    assert resolve_dtype(requested, device_type, bf16_supported) == expected


def test_the_cache_is_released_only_when_much_is_held_unused() -> None:
    gib = 1024**3
    assert not should_release_cache(reserved_bytes=10 * gib, allocated_bytes=9 * gib)
    assert should_release_cache(reserved_bytes=10 * gib, allocated_bytes=10 * gib - RELEASE_CACHED_BYTES - 1)
    assert not should_release_cache(reserved_bytes=0, allocated_bytes=0)


def test_a_device_string_outside_the_list_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="device"):
        OutcomeRM.Config(model="m", device="gpu")
    assert OutcomeRM.Config(model="m", device="cuda:1").device == "cuda:1"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine without CUDA")
def test_asking_for_cuda_without_one_is_each_samples_error_not_a_crash(tiny_models: dict[str, str]) -> None:
    cfg = OutcomeRM.Config(model=tiny_models["outcome"], device="cuda")
    samples = (Sample(response="4"), Sample(response="5"))
    results = run_call(Registry([OutcomeRM]), Call(OutcomeRM.name, cfg, samples, OutcomeRM.kind, 60.0))
    assert [r.status for r in results] == ["error", "error"]
    assert all("no CUDA device" in (r.error or "") for r in results)


def test_cpu_auto_loads_float32_weights_and_bfloat16_when_asked(tiny_models: dict[str, str]) -> None:
    auto = get_backend(backend_spec(OutcomeRM.Config(model=tiny_models["outcome"], device="cpu")))
    half = get_backend(backend_spec(OutcomeRM.Config(model=tiny_models["outcome"], device="cpu", dtype="bfloat16")))
    assert auto.model("sequence").dtype == torch.float32  # type: ignore[attr-defined]
    assert half.model("sequence").dtype == torch.bfloat16  # type: ignore[attr-defined]
    assert next(half.model("sequence").parameters()).device.type == "cpu"  # type: ignore[attr-defined]
