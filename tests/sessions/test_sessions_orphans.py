"""Sessions die with the service: kill -9 of ``rewardhub serve`` leaves no sandbox process, no
scratch (no process holds a session's mount namespace, where its tmpfs lives; so no task is left in
a session's cgroups either, which the next start sweeps). That a service started again refuses the
old ids as lost, saying why, is test_sessions_api's (an id with another boot token).

One service start: on these loaded 2 cores it is most of the test's cost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from serve_support import needs_bubblewrap
from session_support import alive, descendants, mount_namespaces_in_use

from rewardhub.server import free_port

pytestmark = pytest.mark.integration


@contextmanager
def _serve(log_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    log = log_path.open("w+")
    command = [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "REWARDHUB_LOG_LEVEL": "warning"}
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None and time.monotonic() < deadline, log_path.read_text()[-2000:]
            try:
                if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        log.close()


def test_kill_9_of_the_service_leaves_no_session_behind(tmp_path):
    needs_bubblewrap()
    with _serve(tmp_path / "first.log") as (service, url):
        ids = []
        for _ in range(2):
            body = {"runtime": "python", "files": {"given.txt": "x"}}
            answer = httpx.post(f"{url}/v1/sessions", json=body, timeout=60)
            assert answer.status_code == 201, answer.text
            ids.append(answer.json()["id"])
        # the real app's POST /v1/score judges a sample that names a session by the session's files
        tests = {"name": "session_tests", "config": {"command": 'test "$(cat given.txt)" = x'}}
        sample = {"response": "done", "verifier": tests, "metadata": {"session": ids[1]}}
        [result] = httpx.post(f"{url}/v1/score", json={"samples": [sample]}, timeout=60).json()["results"]
        assert (result["score"], result["status"]) == (1.0, "ok"), result
        # a process the session keeps running between calls, and a file in its scratch
        keep = "import subprocess; p = subprocess.Popen(['sleep', '600']); open('scratch.txt', 'w').write('x')"
        answer = httpx.post(f"{url}/v1/sessions/{ids[0]}/run", json={"code": keep}, timeout=60).json()
        assert answer["status"] == "ok", answer
        ours = descendants(service.pid)
        namespaces = {os.readlink(f"/proc/{pid}/ns/mnt") for pid in ours if alive(pid)}
        namespaces.discard(os.readlink(f"/proc/{service.pid}/ns/mnt"))
        assert len(namespaces) >= 2, "each session has a mount namespace of its own"
        os.kill(service.pid, signal.SIGKILL)
        service.wait()
        deadline = time.monotonic() + 10  # processes first, then each sandbox's namespace with its last one
        while time.monotonic() < deadline and (
            any(alive(pid) for pid in ours) or namespaces & mount_namespaces_in_use()
        ):
            time.sleep(0.05)
        assert [pid for pid in ours if alive(pid)] == []
        assert namespaces & mount_namespaces_in_use() == set()  # their tmpfs scratch went with them
