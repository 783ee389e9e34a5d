"""How the suite is split among xdist workers (tests/scheduling.py)."""

from __future__ import annotations

from pathlib import Path

from scheduling import LONG_UNITS, SHARED_FILES, SHARED_FOLDERS, schedule_order, work_unit

ROOT = Path(__file__).resolve().parents[1]


def test_every_shared_file_and_folder_exists() -> None:
    """A renamed file would silently leave its unit and run beside the tests it must not meet (or, a
    long one, at the end of the run)."""
    assert [path for path in SHARED_FILES if not (ROOT / path).is_file()] == []
    assert [unit for unit in LONG_UNITS if "/" in unit and not (ROOT / unit).is_file()] == []
    assert [folder for folder in SHARED_FOLDERS if not (ROOT / "tests" / folder).is_dir()] == []


def test_the_shared_tests_run_as_units_and_the_others_file_by_file() -> None:
    assert work_unit("tests/models/test_vllm_real.py::test_a[x]") == "engines"
    assert work_unit("tests/scripts/test_gpu_check.py::test_b") == "engines"
    assert work_unit("tests/celery/test_faults.py::test_c") == work_unit("tests/jobs/test_jobs.py::t") == "brokers"
    assert work_unit("tests/sandbox/test_x.py::t") == work_unit("tests/deploy/test_compose_smoke.py::t") == "host"
    assert work_unit("tests/models/test_real_models.py::t") == "tests/models/test_real_models.py"
    assert work_unit("tests/test_cli.py::t") == "tests/test_cli.py"


def test_the_long_units_are_handed_out_first_then_the_largest() -> None:
    collected = [
        "tests/api/test_a.py::one",
        "tests/api/test_a.py::two",
        "tests/api/test_b.py::one",
        "tests/celery/test_c.py::one",
        "tests/models/test_vllm_real.py::one",
        "tests/sandbox/test_d.py::one",
        "tests/api/test_b.py::two",
        "tests/api/test_b.py::three",
        "tests/models/test_vllm_real.py::two",
    ]
    ordered = schedule_order(collected)
    assert sorted(ordered) == sorted(collected)
    assert [work_unit(n) for n in ordered] == [
        *["engines"] * 2,
        "brokers",
        "host",
        *["tests/api/test_b.py"] * 3,
        *["tests/api/test_a.py"] * 2,
    ]
    assert ordered[:2] == ["tests/models/test_vllm_real.py::one", "tests/models/test_vllm_real.py::two"]
    assert ordered[4:7] == ["tests/api/test_b.py::one", "tests/api/test_b.py::two", "tests/api/test_b.py::three"]
    assert LONG_UNITS[0] == "engines"
