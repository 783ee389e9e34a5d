"""How the suite is split among pytest-xdist workers (``--dist loadfile``; tests/conftest.py).

Each test file runs whole on one worker, so a module's service starts once. Some tests must not run
beside each other: they share something host-wide, or together they would hold more memory and
cores than a CI machine has. Those run as one unit, one test at a time on one worker. The units
that run longest start first, so none of them is the run's tail.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = "tests"

SHARED_FOLDERS = {
    "celery": "brokers",  # queues and workers on the shared Redis and RabbitMQ
    "jobs": "brokers",
    # the attack battery's traces in /tmp, /dev/shm and /, the unsafe backend's folders, and the
    # Docker engine's containers (the docker tier checks that none of the sandbox image is left)
    "sandbox": "host",
    "deploy": "host",
}
"""Top folders of tests/ whose tests share host-wide state, and the unit each runs in on one worker."""

SHARED_FILES = {
    # each builds vLLM engines or starts several torch processes at once: the vLLM module beside the
    # GPU check's quick run held 15 GB and a load of 7 on two cores
    "tests/models/test_vllm_real.py": "engines",
    "tests/trainer/test_real_model_vllm.py": "engines",
    "tests/scripts/test_gpu_check.py": "engines",
}
"""Test files that run one after another on one worker, and their unit."""

LONG_UNITS = (
    "engines",
    "brokers",
    "host",
    # files of a few long tests, which xdist's own order (most tests first) would leave for the end
    "tests/contract/test_trl_contract.py",
    "tests/api/compat/test_nemo_gym_servers_agreement.py",
    "tests/api/compat/test_nemo_gym_agreement.py",
    "tests/verifiers/sql/test_sql_differential.py",
    "tests/test_host_leftovers.py",
    "tests/models/test_real_models.py",
    "tests/trainer/test_learning.py",
    "tests/ui/test_processes.py",
    "tests/verifiers/sql/test_sql_large_results.py",
)
"""The units that run longest, scheduled first, longest first: the three shared units take about 460, 260
and 240 s of a two-core CI run, each file here 30 to 90 s."""


def work_unit(nodeid: str) -> str:
    """What one xdist worker runs whole: a shared file's or folder's unit, else the test's file."""
    path = nodeid.split("::", 1)[0]
    parts = Path(path).parts
    top = parts[1] if len(parts) > 2 and parts[0] == TESTS else ""
    return SHARED_FILES.get(path) or SHARED_FOLDERS.get(top, path)


def schedule_order(nodeids: list[str]) -> list[str]:
    """The collection in the order its units are handed out: :data:`LONG_UNITS` first, then the
    other units by how many tests they hold (xdist's own order), each unit's tests as collected."""
    units = [work_unit(nodeid) for nodeid in nodeids]
    sizes = Counter(units)
    rank = {unit: i for i, unit in enumerate(LONG_UNITS)}
    order = sorted(range(len(nodeids)), key=lambda i: (rank.get(units[i], len(rank)), -sizes[units[i]], i))
    return [nodeids[i] for i in order]
