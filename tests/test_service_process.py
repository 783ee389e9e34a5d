"""The launcher: `ServiceProcess` starts a real `rewardhub serve` child, answers at its URL, and stops
it; a child that cannot start is reported with its own log; a parent's death takes the child with it.
`ServiceThread` does the same in a thread of the caller, configured the same way."""

import os
import subprocess
import sys
import time

import httpx
import pytest

from rewardhub.client import RewardClient
from rewardhub.launcher import ServiceProcess, ServiceThread
from rewardhub.types import Sample


def test_serves_scores_then_stops(tmp_path):
    service = ServiceProcess(workers=1)
    with service as url, RewardClient(url) as client:
        results = client.score([Sample(response="7", reference="7"), Sample(response="8", reference="7")], "exact")
        assert [r.score for r in results] == [1.0, 0.0]
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/healthz", timeout=2)


def test_a_service_that_cannot_start_reports_its_log(tmp_path):
    broken = tmp_path / "settings.yaml"
    broken.write_text("workers: not-a-number\n")
    with pytest.raises(RuntimeError, match="did not start") as raised:
        ServiceProcess(config_file=str(broken), startup_timeout_s=30).start()
    assert "workers" in str(raised.value)


def test_a_service_in_a_thread_reads_its_config_file_serves_then_stops(tmp_path):
    config = tmp_path / "settings.yaml"
    config.write_text("get_reward_verifier: exact\n")
    service = ServiceThread(workers=1, config_file=str(config))
    with service as url, RewardClient(url) as client:
        answer = client.request("POST", "/get_reward", {"query": ["Q: 7"], "prompts": ["Q: "], "labels": ["7"]})
        assert answer["rewards"] == [1.0]  # scored by the config file's verifier
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/healthz", timeout=2)


def test_a_service_thread_that_cannot_start_says_why(tmp_path):
    broken = tmp_path / "settings.yaml"
    broken.write_text("workers: not-a-number\n")
    with pytest.raises(ValueError, match="workers"):
        ServiceThread(config_file=str(broken)).start()


def test_the_service_does_not_outlive_a_parent_killed_with_sigkill(tmp_path):
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\n"
            "from rewardhub.launcher import ServiceProcess\n"
            "service = ServiceProcess(workers=1)\n"
            "service.start()\n"
            "print(service.pid, flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    child = int(parent.stdout.readline())
    parent.kill()  # no clean-up runs in the parent
    parent.wait()
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie (exited, not yet reaped by init) counts as gone
        return stat.read().split()[2] != "Z"
