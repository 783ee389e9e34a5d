"""What a result adds to a trainer's logs: numbers only, the same keys for the whole batch."""

from __future__ import annotations

import math

from rewardhub.result_logs import STATUS_KEYS, batch_logs, component_scores, sample_logs
from rewardhub.types import Result


def composite(exact: float, fmt: float, status: str = "ok") -> Result:
    components = {
        "exact": {"score": exact, "status": "ok", "details": {}, "weight": 0.8},
        "format": {"score": fmt, "status": status, "details": {}, "weight": 0.2},
    }
    return Result(score=0.8 * exact + 0.2 * fmt, status=status, details={"components": components})


def test_status_is_three_indicators() -> None:
    assert sample_logs(Result.ok(1.0)) == {"status/ok": 1.0, "status/timeout": 0.0, "status/error": 0.0}
    assert sample_logs(Result.failed("slow", status="timeout"))["status/timeout"] == 1.0


def test_components_are_flattened_with_their_path() -> None:
    inner = {"components": {"format": {"score": 1.0, "status": "ok", "details": {}}}}
    details = {
        "components": {
            "gate": {"score": 0.0, "status": "ok", "details": inner},
            "math": {"score": 0.5, "status": "ok", "details": {}},
        }
    }
    assert component_scores(details) == {"component/gate": 0.0, "component/gate/format": 1.0, "component/math": 0.5}


def test_a_batch_gets_one_list_per_key_in_sample_order() -> None:
    logs = batch_logs([composite(1.0, 0.0), composite(0.0, 1.0, status="error")])
    assert list(logs)[:3] == list(STATUS_KEYS)
    assert logs["status/error"] == [0.0, 1.0]
    assert logs["component/exact"] == [1.0, 0.0]
    assert logs["component/format"] == [0.0, 1.0]


def test_a_component_a_sample_lacks_is_nan_not_zero() -> None:
    logs = batch_logs([composite(1.0, 1.0), Result.ok(1.0)])
    assert logs["component/exact"][0] == 1.0 and math.isnan(logs["component/exact"][1])


def test_shared_only_keeps_what_every_sample_has() -> None:
    logs = batch_logs([composite(1.0, 1.0), Result.ok(1.0)], shared_only=True)
    assert set(logs) == set(STATUS_KEYS)


def test_every_value_is_a_float() -> None:
    logs = batch_logs([composite(1.0, 0.0), Result.failed("broken")])
    assert all(isinstance(v, float) for values in logs.values() for v in values)
