"""Sessions across ``rewardhub serve --api-workers 2``: the sessions live in the serve process above
the workers, so a session made through one worker is used, judged and deleted through the other
(an ORS session too, created, called and submitted through either);
an API worker killed with SIGKILL takes no session with it; and kill -9 of the serve process alone
leaves nothing of the service: its workers, their pools, the sessions' and the pools' sandboxes all
die with it (no process, and no mount namespace, where a session's scratch lives).

Which worker takes a connection is the kernel's choice: every request here opens its own
(``serve_support.fresh``) and the answer names its worker (``X-Rewardhub-Pid``). One service start.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from serve_support import ATTEMPTS, api_workers, fresh, needs_bubblewrap
from session_support import alive, descendants, mount_namespaces_in_use

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    needs_bubblewrap()
    with api_workers(tmp_path_factory.mktemp("serve"), 2, "--workers", "1") as served:
        yield served


@contextmanager
def _worker(url: str, worker: str | None = None, other_than: str | None = None) -> Iterator[httpx.Client]:
    """A client whose one connection the named worker (or any but ``other_than``) holds: found with
    ``/healthz``, so a request with an effect is sent once, to the worker meant."""
    for _ in range(ATTEMPTS):
        client = httpx.Client(base_url=url, timeout=120)
        pid = client.get("/healthz").headers["X-Rewardhub-Pid"]
        if (worker is None or pid == worker) and pid != other_than:
            try:
                yield client
            finally:
                client.close()
            return
        client.close()
    raise AssertionError(f"no connection to worker {worker or 'other than ' + str(other_than)}")


TESTS = {"name": "session_tests", "config": {"command": "python3 -c 'from solution import add; assert add(2, 3) == 5'"}}


def test_a_session_made_through_one_worker_is_used_through_the_other(url):
    made = fresh("POST", f"{url}/v1/sessions", json={"files": {"solution.py": "def add(a, b):\n    return a + b\n"}})
    assert made.status_code == 201, made.text
    session, maker = made.json()["id"], made.headers["X-Rewardhub-Pid"]
    with _worker(url, worker=maker) as same:
        first = same.post(f"/v1/sessions/{session}/run", json={"code": "n = 41"})
        assert (first.json()["status"], first.headers["X-Rewardhub-Pid"]) == ("ok", maker), first.text
    with _worker(url, other_than=maker) as other:
        ran = other.post(f"/v1/sessions/{session}/run", json={"code": "n += 1; n"})
        assert (ran.json()["status"], ran.json()["stdout"]) == ("ok", "42\n"), ran.text
        assert other.get(f"/v1/sessions/{session}").json()["calls"] == 2
        in_session = {"response": "done", "verifier": "code", "reference": {"test": "assert n == 42"}}
        [state] = other.post("/v1/score", json={"samples": [{**in_session, "session_id": session}]}).json()["results"]
        assert (state["score"], state["status"]) == (1.0, "ok"), state  # the code verifier, in the session's state
        sample = {"response": "done", "verifier": TESTS, "metadata": {"session": session}}
        [result] = other.post("/v1/score", json={"samples": [sample]}).json()["results"]
        assert (result["score"], result["status"]) == (1.0, "ok"), result
        assert other.delete(f"/v1/sessions/{session}").status_code == 204
    with _worker(url, worker=maker) as same:
        gone = same.post(f"/v1/sessions/{session}/run", json={"code": "n"})
        assert gone.status_code == 404 and "deleted" in gone.json()["error"]["message"]


def _ors_answer(events: str) -> dict:
    """The JSON an ORS call's server-sent events end with (``event: end``; long answers come in chunks)."""
    chunks, event = [], None
    for line in events.splitlines():
        if line.startswith("event:"):
            event = line.partition(":")[2].strip()
        elif line.startswith("data:") and event in ("chunk", "end"):
            chunks.append(line.partition(":")[2].removeprefix(" "))
    return json.loads("".join(chunks))


def test_an_ors_session_created_through_one_worker_is_called_through_the_other(url):
    sid = {"X-Session-ID": "ors-across-workers"}
    task = {"prompt": "p", "files": {"n.txt": "2"}, "test_command": 'test "$(cat out.txt)" = 4'}
    with _worker(url) as first:
        maker = first.get("/healthz").headers["X-Rewardhub-Pid"]
        assert first.post("/create", json={"task_spec": task}, headers=sid).json() == {"sid": sid["X-Session-ID"]}
    with _worker(url, other_than=maker) as other:
        call = {"name": "python", "input": {"code": "n = int(open('n.txt').read())"}}
        assert _ors_answer(other.post("/code/call", json=call, headers=sid).text)["ok"] is True
    with _worker(url, worker=maker) as same:
        call = {"name": "python", "input": {"code": "open('out.txt', 'w').write(str(n * 2))"}}
        assert _ors_answer(same.post("/code/call", json=call, headers=sid).text)["ok"] is True
    with _worker(url, other_than=maker) as other:
        graded = _ors_answer(other.post("/code/call", json={"name": "submit", "input": {}}, headers=sid).text)
        assert (graded["output"]["reward"], graded["output"]["finished"]) == (1.0, True), graded
        assert other.post("/delete", headers=sid).status_code == 200
        assert other.post("/ping", headers=sid).status_code == 404


def test_a_killed_api_worker_takes_no_session_and_the_serve_process_killed_leaves_nothing(url):
    made = fresh("POST", f"{url}/v1/sessions", json={"runtime": "python"})
    session, maker = made.json()["id"], made.headers["X-Rewardhub-Pid"]
    keep = "import subprocess; p = subprocess.Popen(['sleep', '600']); open('scratch.txt', 'w').write('x'); k = 7"
    with _worker(url, worker=maker) as same:
        assert same.post(f"/v1/sessions/{session}/run", json={"code": keep}).json()["status"] == "ok"
    serve = int(Path(f"/proc/{maker}/stat").read_text().rsplit(")", 1)[1].split()[1])  # the workers' parent
    os.kill(int(maker), signal.SIGKILL)
    with _worker(url, other_than=maker) as other:  # the survivor, before the serve process replaces the dead one
        kept = other.post(f"/v1/sessions/{session}/run", json={"code": "k"})
        assert (kept.status_code, kept.json()["stdout"]) == (200, "7\n"), kept.text

    tree = [pid for pid in descendants(serve) if alive(pid)]
    own = os.readlink(f"/proc/{serve}/ns/mnt")
    namespaces = {_namespace(pid) for pid in tree} - {None, own}
    assert len(tree) > 10 and namespaces, "workers, pools, and sandboxes in mount namespaces of their own"
    os.kill(serve, signal.SIGKILL)  # the serve process alone: a supervisor's SIGKILL runs no clean-up
    # the kernel tears the tree down after the serve process: its processes (and any forked after the
    # snapshot above) and with the last of each sandbox's, that sandbox's mount namespace
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (any(alive(pid) for pid in tree) or namespaces & mount_namespaces_in_use()):
        time.sleep(0.05)
    assert [pid for pid in tree if alive(pid)] == []  # API workers (and so pools, sandboxes) die with it
    assert namespaces & mount_namespaces_in_use() == set()  # their tmpfs scratch went with them


def _namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None
