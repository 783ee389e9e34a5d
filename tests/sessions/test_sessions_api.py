"""/v1/sessions: state across calls, the sandbox's verdict words, limits across calls, and how an
ended session answers (API.md's "Sessions")."""

from __future__ import annotations

import os
import signal
import time

import pytest
from fastapi.testclient import TestClient
from session_support import SMALL, session_app

from rewardhub.sessions import SessionManager, SessionSettings


def _open(client: TestClient, **body) -> str:
    answer = client.post("/v1/sessions", json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def _run(client: TestClient, session: str, **body) -> dict:
    answer = client.post(f"/v1/sessions/{session}/run", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_python_keeps_variables_and_every_runtime_keeps_files(client):
    session = _open(client, runtime="python", files={"data/in.txt": "41"})
    assert _run(client, session, code="x = int(open('data/in.txt').read())")["status"] == "ok"
    answer = _run(client, session, code="x + 1")  # a final expression is shown, as in a REPL
    assert (answer["status"], answer["exit_code"], answer["stdout"], answer["state"]) == ("ok", 0, "42\n", "kept")
    assert _run(client, session, code="open('out.txt', 'w').write(str(x * 2))")["status"] == "ok"
    assert _run(client, session, command="cat out.txt")["stdout"] == "82"

    assert _run(client, session, command="mkdir -p work && cd work && pwd")["stdout"] == "/tmp/work\n"
    assert _run(client, session, code="import os; os.getcwd()")["stdout"] == "'/tmp/work'\n"  # cd persists

    shell = _open(client, runtime="bash", files={"a.txt": "one\n"})
    assert _run(client, shell, code="echo two >> a.txt")["status"] == "ok"
    answer = _run(client, shell, code="cat a.txt; echo oops >&2; exit 3")
    assert (answer["status"], answer["exit_code"], answer["stdout"], answer["stderr"]) == (
        "runtime_error",
        3,
        "one\ntwo\n",
        "oops\n",
    )
    assert {"status", "exit_code", "stdout", "stderr", "elapsed_ms"} <= answer.keys()


def test_each_call_ends_in_a_verdict_word_of_the_sandbox(client):
    session = _open(client, limits={"max_output_kb": 64})
    _run(client, session, code="kept = 'still here'")
    crashed = _run(client, session, code="1 / 0")
    assert (crashed["status"], crashed["exit_code"]) == ("runtime_error", 1)
    assert "ZeroDivisionError" in crashed["stderr"] and "session_kernel" not in crashed["stderr"]
    assert _run(client, session, code="def f(:")["status"] == "compile_error"
    slow = _run(client, session, code="import time; time.sleep(30)", timeout_s=0.5)
    assert (slow["status"], slow["state"]) == ("timeout", "kept")
    assert _run(client, session, code="kept")["stdout"] == "'still here'\n"
    # a call that ignores the interruption is killed from outside: variables go, files stay
    _run(client, session, code="open('note', 'w').write('on disk')")
    stubborn = _run(
        client,
        session,
        code="import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\ntime.sleep(30)",
        timeout_s=0.5,
    )
    assert (stubborn["status"], stubborn["state"]) == ("timeout", "lost")
    gone = _run(client, session, code="kept")
    assert gone["status"] == "runtime_error" and "NameError" in gone["stderr"]
    assert _run(client, session, code="open('note').read()")["stdout"] == "'on disk'\n"
    loud = _run(client, session, code="print('x' * 200_000)")
    assert (loud["status"], loud["state"]) == ("output_limit", "lost")
    shell_slow = _run(client, session, command="sleep 30", timeout_s=0.5)
    assert (shell_slow["status"], shell_slow["state"]) == ("timeout", "kept")


def test_memory_is_limited_across_calls(client):
    session = _open(client, limits={"memory_mb": 160})
    assert _run(client, session, code="a = b'x' * (100 << 20)")["status"] == "ok"
    second = _run(client, session, code="b = b'y' * (100 << 20)")  # alone it fits; with a, not
    assert second["status"] == "memory"


def test_the_tests_of_a_session_judge_its_files_in_a_fresh_program(client):
    session = _open(client)
    _run(client, session, code="open('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')")
    test = "from solution import add\nassert add(2, 3) == 5\n"
    passed = client.post(
        f"/v1/sessions/{session}/test", json={"command": "python3 test_add.py", "files": {"test_add.py": test}}
    ).json()
    assert (passed["status"], passed["reward"]) == ("ok", 1.0)
    _run(client, session, code="open('solution.py', 'w').write('def add(a, b):\\n    return a - b\\n')")
    failed = client.post(f"/v1/sessions/{session}/test", json={"command": "python3 test_add.py"}).json()
    assert (failed["status"], failed["reward"]) == ("runtime_error", 0.0)


def test_ended_sessions_say_why(client, manager):
    never = client.get("/v1/sessions/s-nope-0")
    assert (never.status_code, never.json()["error"]["type"]) == (404, "session_not_found")
    earlier = client.get("/v1/sessions/s-00000000-0123456789abcdef")
    assert (earlier.status_code, earlier.json()["error"]["type"]) == (410, "session_lost")
    assert "earlier run" in earlier.json()["error"]["message"]

    session = _open(client)
    other_key = client.get(f"/v1/sessions/{session}", headers={"Authorization": "Bearer key-b"})
    assert other_key.status_code == 404
    assert client.get(f"/v1/sessions/{session}").json()["id"] == session
    assert client.delete(f"/v1/sessions/{session}").status_code == 204
    deleted = client.post(f"/v1/sessions/{session}/run", json={"code": "1"})
    assert (deleted.status_code, deleted.json()["error"]["type"]) == (404, "session_not_found")
    assert "deleted" in deleted.json()["error"]["message"]

    short = _open(client, ttl_s=0.3)
    deadline = time.monotonic() + 10
    while client.get(f"/v1/sessions/{short}").status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    expired = client.get(f"/v1/sessions/{short}")
    assert (expired.status_code, expired.json()["error"]["type"]) == (410, "session_expired")
    assert "idle" in expired.json()["error"]["message"]


def test_a_session_killed_from_outside_ends_alone(client, manager):
    victim, bystander = _open(client), _open(client)
    _run(client, bystander, code="y = 7")
    [box] = [s.box for s in manager.list() if s.id == victim]
    os.killpg(box.sandbox._process.pid, signal.SIGKILL)  # bubblewrap; what it holds dies with it
    deadline = time.monotonic() + 10
    while client.get(f"/v1/sessions/{victim}").status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.05)
    lost = client.get(f"/v1/sessions/{victim}")
    assert (lost.status_code, lost.json()["error"]["type"]) == (410, "session_lost")
    assert "sandbox died" in lost.json()["error"]["message"]
    answer = client.post(f"/v1/sessions/{victim}/run", json={"code": "1"})
    assert (answer.status_code, answer.json()["error"]["type"]) == (410, "session_lost")
    assert _run(client, bystander, code="y * 6")["stdout"] == "42\n"


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v1/sessions", b"{not json", 400),
        ("/v1/sessions", b'{"runtime": "cobol"}', 422),
        ("/v1/sessions", b'{"files": {"../x": "1"}}', 422),
        ("/v1/sessions", b'{"limits": {"memory_mb": 999999}}', 422),
        ("/v1/sessions", b'{"ttl_s": 99999}', 422),
        ("/v1/sessions", b'{"surprise": 1}', 422),
    ],
)
def test_bad_input_is_a_4xx(client, path, body, status):
    answer = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == status, answer.text
    assert "error" in answer.json()


def test_a_call_must_name_exactly_one_program(client):
    session = _open(client)
    both = client.post(f"/v1/sessions/{session}/run", json={"code": "1", "command": "true"})
    neither = client.post(f"/v1/sessions/{session}/run", json={})
    too_long = client.post(f"/v1/sessions/{session}/run", json={"code": "1", "timeout_s": 10_000})
    assert (both.status_code, neither.status_code, too_long.status_code) == (422, 422, 422)


def test_limits_per_key_and_creation_rate_are_429_with_retry_after():
    settings = SMALL.model_copy(update={"max_per_key": 1, "create_burst": 2, "create_rate_per_s": 0.001})
    manager = SessionManager(SessionSettings(**settings.model_dump()))
    try:
        client = TestClient(session_app(manager))
        assert client.post("/v1/sessions", json={}, headers={"Authorization": "Bearer a"}).status_code == 201
        per_key = client.post("/v1/sessions", json={}, headers={"Authorization": "Bearer a"})
        assert per_key.status_code == 429 and "this API key" in per_key.json()["error"]["message"]
        assert int(per_key.headers["Retry-After"]) >= 1
        assert client.post("/v1/sessions", json={}, headers={"Authorization": "Bearer b"}).status_code == 201
        rate = client.post("/v1/sessions", json={}, headers={"Authorization": "Bearer c"})
        assert rate.status_code == 429 and "per second" in rate.json()["error"]["message"]
        assert int(rate.headers["Retry-After"]) >= 1
    finally:
        manager.close()


def test_the_operator_page_lists_live_sessions_per_key(client, manager):
    from types import SimpleNamespace

    from session_support import session_service

    from rewardhub.api.routes.ui import router as ui_router
    from rewardhub.ui.stats import merge

    session = _open(client)
    _run(client, session, code="1")
    app = session_app(manager)
    app.state.service = session_service(
        manager,
        stats=SimpleNamespace(read=lambda: merge([])),
        executor=None,
    )
    app.state.service.settings = SimpleNamespace(execution="local", ui_show_samples=False)
    app.include_router(ui_router)
    page = TestClient(app).get("/ui/api/stats").json()["sessions"]
    [mine] = [s for listed in page["by_key"].values() for s in listed if s["id"] == session]
    assert (mine["runtime"], mine["calls"]) == ("python", 1) and mine["age_s"] >= 0
    assert page["live"] >= 1


def test_a_session_has_the_sandboxs_walls(client):
    session = _open(client)
    probe = (
        "import os, socket\n"
        "walls = {'uid': os.getuid(), 'interfaces': sorted(n for _, n in socket.if_nameindex())}\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 53), timeout=1)\n"
        "    walls['network'] = 'reached'\n"
        "except OSError as exc:\n"
        "    walls['network'] = type(exc).__name__\n"
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "walls['unshare'] = 'allowed' if libc.unshare(0x10000000) == 0 else ctypes.get_errno()\n"  # CLONE_NEWUSER
        "walls"
    )
    walls = eval(_run(client, session, code=probe)["stdout"])  # the repr of a dict of plain values
    assert walls["uid"] >= 62000 and walls["interfaces"] == ["lo"]
    assert walls["network"] != "reached" and walls["unshare"] != "allowed"


def test_the_hard_lifetime_ends_a_session_that_is_in_use(client):
    session = _open(client, limits={"lifetime_s": 1.0})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # calls keep it from idling: only the lifetime can end it
        answer = client.post(f"/v1/sessions/{session}/run", json={"code": "1"})
        if answer.status_code != 200:
            break
        time.sleep(0.1)
    assert (answer.status_code, answer.json()["error"]["type"]) == (410, "session_expired")
    assert "lifetime" in answer.json()["error"]["message"]


def test_what_a_session_left_where_a_test_file_goes_does_not_block_the_tests(client):
    session = _open(client)
    _run(client, session, command="mkdir -p test_it.py/deep && touch test_it.py/deep/x")
    answer = client.post(
        f"/v1/sessions/{session}/test",
        json={"command": "python3 test_it.py", "files": {"test_it.py": "assert 1 + 1 == 3"}},
    ).json()
    assert (answer["status"], answer["reward"]) == ("runtime_error", 0.0)


def test_processes_are_limited_across_calls(client):
    session = _open(client, limits={"max_processes": 24})
    keep = "import subprocess\nkept = [subprocess.Popen(['sleep', '600']) for _ in range(12)]\nlen(kept)"
    assert _run(client, session, code=keep)["stdout"] == "12\n"
    more = _run(client, session, code="more = [subprocess.Popen(['sleep', '600']) for _ in range(12)]")
    assert more["status"] == "runtime_error" and "BlockingIOError" in more["stderr"]
    assert _run(client, session, code="[p.kill() for p in kept]; len(kept)")["stdout"] == "12\n"
