"""With ``execution: celery``, sessions are pinned to one session worker; a lost worker loses its own alone.

Two real ``rewardhub worker --queues sessions`` processes on the real broker (Redis, then RabbitMQ),
and the real API in celery mode. Sessions are placed on the two in turn; each keeps its state across calls through
its worker (calls, GET, DELETE, ORS, and samples the score pipeline judges in it). kill -9 of one
worker: its sessions answer 410 ``session_lost`` naming it within seconds, a call in flight included
(its liveness key expires; no broker timeout is waited for), a sample judged in one is a per-sample
error, never a 0, the other worker's sessions keep working, and no process of the killed worker's
sandboxes is left on the host.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import psutil
import pytest
from celery_support import (
    ServiceThread,
    Worker,
    celery_settings,
    launch_worker,
    rabbit_url,
    redis_result_url,
    stop_workers,
    wait_for_worker,
)
from serve_support import needs_bubblewrap

from rewardhub.execution.celery_executor import CeleryExecutor

pytestmark = pytest.mark.integration

SOLUTION = {"solution.py": "def add(a, b):\n    return a + b\n"}
TESTS = {"name": "session_tests", "config": {"command": "python3 -c 'from solution import add; assert add(2, 3) == 5'"}}
IN_SESSION = {"response": "done", "verifier": "code", "reference": {"test": "assert n == 42"}}


@pytest.fixture(scope="module", params=["redis", "rabbitmq"])
def service(
    redis_up: None, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[str, list[Worker], object]]:
    """Two session workers and the API, on Redis as the broker, then on RabbitMQ (results in Redis)."""
    needs_bubblewrap()
    settings = celery_settings("sessions", heartbeat_s=0.25, lost_after_s=1.5)
    if request.param == "rabbitmq":
        request.getfixturevalue("rabbit_up")
        broker = {"broker_url": rabbit_url("sessions-amqp"), "result_backend": redis_result_url()}
        settings = celery_settings("sessions-amqp", heartbeat_s=0.25, lost_after_s=1.5, **broker)
    tmp = tmp_path_factory.mktemp("session-workers")
    workers: list[Worker] = []
    try:
        workers = [launch_worker(settings, tmp, "sessions", concurrency=8) for _ in range(2)]  # side by side
        for worker in workers:
            worker.hostname = wait_for_worker(settings, worker.process)
        with ServiceThread(settings) as api:
            executor = api.app.state.service.executor
            assert isinstance(executor, CeleryExecutor)
            yield api.url, workers, executor.sessions.records
    finally:
        stop_workers(workers)


@pytest.fixture
def http(service: tuple[str, list[Worker], object]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service[0], timeout=60) as client:
        yield client


def _create(http: httpx.Client, **body: object) -> str:
    made = http.post("/v1/sessions", json={"runtime": "python", **body})
    assert made.status_code == 201, made.text
    return made.json()["session_id"]


def _score(http: httpx.Client, sample: dict) -> dict:
    answer = http.post("/v1/score", json={"samples": [sample]})
    assert answer.status_code == 200, answer.text
    [result] = answer.json()["results"]
    return result


def test_sessions_are_placed_on_the_workers_in_turn_and_keep_their_state_there(http, service):
    _, workers, records = service
    ids = [_create(http, files=SOLUTION) for _ in range(2)]
    assert {records.where(i).node for i in ids} == {w.hostname for w in workers}  # one on each
    for session in ids:
        assert http.post(f"/v1/sessions/{session}/run", json={"code": "n = 41"}).json()["status"] == "ok"
        ran = http.post(f"/v1/sessions/{session}/run", json={"code": "n += 1; print(n)"}).json()
        assert (ran["status"], ran["stdout"]) == ("ok", "42\n"), ran
        assert http.get(f"/v1/sessions/{session}").json()["calls"] == 2
        assert _score(http, {**IN_SESSION, "session_id": session})["score"] == 1.0  # the code verifier, in its state
        judged = _score(http, {"response": "done", "verifier": TESTS, "metadata": {"session": session}})
        assert (judged["score"], judged["status"]) == (1.0, "ok"), judged
    listed = {s["session_id"] for s in http.get("/v1/sessions").json()["sessions"]}
    assert set(ids) <= listed  # the listing reaches both workers, and so do the operator page and /metrics
    page = http.get("/ui/api/stats").json()["sessions"]
    assert set(ids) <= {s["session_id"] for sessions in page["by_key"].values() for s in sessions}
    live = next(line for line in http.get("/metrics").text.splitlines() if line.startswith("rewardhub_sessions_live "))
    assert float(live.split()[1]) >= 2, live
    assert http.delete(f"/v1/sessions/{ids[0]}").status_code == 204
    gone = http.post(f"/v1/sessions/{ids[0]}/run", json={"code": "n"})
    assert gone.status_code == 404 and "deleted" in gone.json()["error"]["message"]


def test_a_session_is_judged_in_a_fresh_sandbox_through_its_worker(http, service):
    """``session_tests`` with ``verify: "fresh"`` and ``/test`` with ``artifacts``: the session worker
    stops the session, copies its artifacts out and runs the tests in a new sandbox, where a reward
    file the agent forged is not (in the session it still answers for the grader)."""
    session = _create(http, files={"solution.py": "def add(a, b):\n    return a - b\n"})
    assert http.post(f"/v1/sessions/{session}/run", json={"command": "echo 1 > reward.txt"}).json()["status"] == "ok"
    grader = {"grade.py": "from solution import add\nif add(2, 3) == 5:\n    open('reward.txt', 'w').write('1')\n"}
    config = {"command": 'python3 grade.py; test "$(cat reward.txt)" = 1', "files": grader}
    fresh = {"name": "session_tests", "config": {**config, "verify": "fresh", "artifacts": ["solution.py"]}}
    judged = _score(http, {"response": "done", "verifier": fresh, "metadata": {"session": session}})
    assert (judged["score"], judged["status"], judged["details"]["verification"]) == (0.0, "ok", "fresh"), judged
    assert judged["details"]["artifacts"]["copied"] == {"solution.py": 32}
    in_session = {"name": "session_tests", "config": config}
    assert _score(http, {"response": "done", "verifier": in_session, "metadata": {"session": session}})["score"] == 1.0
    tested = http.post(f"/v1/sessions/{session}/test", json={**config, "artifacts": ["solution.py"]}).json()
    assert (tested["reward"], tested["verification"]) == (0.0, "fresh"), tested


def test_another_keys_session_and_bad_bodies_are_4xx(http, service):
    session = _create(http)
    other = http.get(f"/v1/sessions/{session}", headers={"Authorization": "Bearer another-key"})
    assert (other.status_code, other.json()["error"]["type"]) == (404, "session_not_found")
    assert http.get("/v1/sessions/s-00000000-0000000000000000").status_code == 404
    assert http.post("/v1/sessions", json={"runtime": "cobol"}).status_code == 422
    assert http.post(f"/v1/sessions/{session}/run", json={"nothing": 1}).status_code == 422
    too_long = http.post("/v1/sessions", json={"runtime": "python", "ttl_s": 10**9})
    assert too_long.status_code == 422, too_long.text  # the worker's limit, answered through the broker


def test_without_a_session_worker_creating_a_session_says_so(redis_up):
    with ServiceThread(celery_settings("no-session-workers")) as api:
        answer = httpx.post(f"{api.url}/v1/sessions", json={"runtime": "python"}, timeout=30)
    assert (answer.status_code, answer.json()["error"]["type"]) == (503, "sandbox_unavailable"), answer.text
    assert "rewardhub worker --queues sessions" in answer.json()["error"]["message"]


def test_a_session_worker_takes_no_other_queue():
    mixed = subprocess.run(
        [sys.executable, "-m", "rewardhub.cli", "worker", "--queues", "sessions,cpu"], capture_output=True, text=True
    )
    assert mixed.returncode == 2 and "takes no other queue" in mixed.stderr, mixed.stderr


def test_an_ors_session_lives_on_a_worker(http):
    sid = {"X-Session-ID": "ors-on-a-session-worker"}
    task = {"prompt": "p", "files": {"n.txt": "2"}, "test_command": 'test "$(cat out.txt)" = 4'}
    assert http.post("/create", json={"task_spec": task}, headers=sid).json() == {"sid": sid["X-Session-ID"]}
    call = {"name": "python", "input": {"code": "open('out.txt', 'w').write(str(int(open('n.txt').read()) * 2))"}}
    assert '"ok": true' in http.post("/code/call", json=call, headers=sid).text
    graded = http.post("/code/call", json={"name": "submit", "input": {}}, headers=sid).text
    assert '"reward": 1.0' in graded, graded
    assert http.post("/delete", headers=sid).status_code == 200


def test_kill_9_of_a_worker_loses_its_sessions_alone_and_leaves_no_sandbox(http, service):
    _, workers, records = service
    ids = [_create(http) for _ in range(2)]
    where = {records.where(i).node: i for i in ids}
    doomed = next(w for w in workers if w.hostname in where)
    lost, kept = where[doomed.hostname], next(i for n, i in where.items() if n != doomed.hostname)
    for session in ids:
        assert http.post(f"/v1/sessions/{session}/run", json={"code": "k = 7"}).json()["status"] == "ok"
    keep = "import subprocess; p = subprocess.Popen(['sleep', '600']); open('scratch.txt', 'w').write('x')"
    assert http.post(f"/v1/sessions/{lost}/run", json={"code": keep}).json()["status"] == "ok"
    sandboxed = psutil.Process(doomed.process.pid).children(recursive=True)
    namespaces = {_mount_namespace(p.pid) for p in sandboxed} - {_mount_namespace(doomed.process.pid), None}
    assert namespaces, "the worker's sessions run in mount namespaces of their own"
    print(f"{len(sandboxed)} processes under the worker, {len(namespaces)} mount namespaces of its sessions")

    in_flight: dict[str, httpx.Response] = {}
    call = threading.Thread(target=lambda: in_flight.update(answer=_long_call(http, lost)))
    call.start()
    while not http.get(f"/v1/sessions/{lost}").json()["busy"]:  # the call is running on the worker
        time.sleep(0.05)

    # every process in the sessions' mount namespaces now, the in-flight call's included: a namespace is
    # gone once the last of them is (its number alone cannot tell: the kernel hands a freed number to
    # the next namespace made, and the other tests in this run make sandboxes all the time)
    holders = [p for p in psutil.process_iter() if _mount_namespace(p.pid) in namespaces]
    os.kill(doomed.process.pid, signal.SIGKILL)  # the worker alone: its sandboxes must go with it
    killed = time.monotonic()
    doomed.process.wait(timeout=10)
    call.join(timeout=30)
    print(f"the call in flight answered {time.monotonic() - killed:.2f} s after its worker was killed")
    answer = in_flight["answer"]
    assert (answer.status_code, answer.json()["error"]["type"]) == (410, "session_lost"), answer.text
    assert doomed.hostname in answer.json()["error"]["message"]
    later = http.post(f"/v1/sessions/{lost}/run", json={"code": "k"})
    assert (later.status_code, later.json()["error"]["type"]) == (410, "session_lost"), later.text
    assert http.get(f"/v1/sessions/{lost}").status_code == 410

    ran = http.post(f"/v1/sessions/{kept}/run", json={"code": "print(k)"}).json()
    assert (ran["status"], ran["stdout"]) == ("ok", "7\n"), ran  # the other worker's session is untouched

    judged = _score(http, {"response": "done", "verifier": TESTS, "metadata": {"session": lost}})
    assert (judged["status"], judged["details"].get("error_type")) == ("error", "session_lost"), judged
    in_code = _score(http, {**IN_SESSION, "session_id": lost})
    assert in_code["status"] == "error" and "session_lost" in in_code["error"], in_code

    # the kernel tears the sandboxes down after the worker: their processes (the in-flight call's too,
    # forked after the first snapshot) and with the last of them their mount namespaces
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in sandboxed + holders):
        time.sleep(0.1)
    assert not [p.pid for p in sandboxed if _alive(p)], "a sandbox process outlived its worker"
    assert not [p.pid for p in holders if _alive(p)], "a session's scratch (its mount namespace) outlived its worker"


def _long_call(http: httpx.Client, session: str) -> httpx.Response:
    return http.post(f"/v1/sessions/{session}/run", json={"code": "import time; time.sleep(60)", "timeout_s": 90})


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _mount_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None
