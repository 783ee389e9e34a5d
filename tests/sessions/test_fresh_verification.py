"""Verification in a fresh sandbox: a session judged from its declared artifacts only earns nothing
for what else it left behind.

One attack per test, each by an agent whose ``add`` is wrong (``a - b``). Each is scored by the
``session_tests`` verifier twice, through the session host as the service scores it: in the session
(``verify: "in_session"``), where the attack earns 1.0 unless the in-session hardening already stops
it (the test says so), and in a fresh sandbox (``verify: "fresh"``), where it earns 0. The same
command on a right ``add`` still earns 1.0 in a fresh sandbox, so a 0 is the attack's, not a broken
verification's. A missing or refused artifact is a 0 with the reason, never an ``error``: the agent
made it so; and the host is left as it was.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from session_support import SMALL, descendants

from rewardhub.sessions import LocalSessions, SessionHost, SessionManager
from rewardhub.types import Result, Sample
from rewardhub.verifier import CALLER_FIELD
from rewardhub.verifiers.session_tests import SessionTestsVerifier

OWNER = "owner-fresh"
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
CHECK = {"check.py": "from solution import add\nassert add(2, 3) == 5, 'add(2, 3)'\n"}
UNITTEST = {
    "test_add.py": (
        "import unittest\nfrom solution import add\n\n\nclass TestAdd(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    )
}
GRADER = {"grade.py": "from solution import add\nif add(2, 3) == 5:\n    open('reward.txt', 'w').write('1')\n"}
GRADED = 'python3 grade.py; test "$(cat reward.txt)" = 1'
"""A command that reads the reward its grader writes: a stale ``reward.txt`` answers for it."""
REPORTER = {
    "report.py": (
        "import json\nfrom solution import add\n"
        "json.dump({'passed': add(2, 3) == 5}, open('report.json', 'w')) if add(2, 3) == 5 else None\n"
    )
}
REPORTED = (
    "python3 report.py; python3 -c \"import json, sys; sys.exit(0 if json.load(open('report.json'))['passed'] else 1)\""
)
USER_SITE = 'd=$(python3 -c \'import site; print(site.getusersitepackages())\') && mkdir -p "$d" && cd "$d"'
EXITS = "import os; os._exit(0)\n"


@pytest.fixture(scope="module")
def host(manager: SessionManager) -> Iterator[SessionHost]:
    served = SessionHost()
    served.local = LocalSessions(manager)
    yield served
    served.local = LocalSessions(lambda: manager)  # unopened: closing the host leaves the module's manager open
    served.close()


def _judged(
    manager: SessionManager, host: SessionHost, solution: str, plant: str, config: SessionTestsVerifier.Config
) -> Result:
    """``session_tests``' result for a session holding ``solution`` that ran ``plant``."""
    session = manager.create(OWNER, "python", {"solution.py": solution}).id
    try:
        if plant:
            ran = manager.run(session, OWNER, {"command": plant})
            assert ran.verdict == "ok", ran
        sample = Sample(response="done", metadata={"session": session, CALLER_FIELD: host.grant(OWNER)})
        return SessionTestsVerifier().score(sample, config)
    finally:
        manager.delete(session, OWNER)


def _rewards(
    manager: SessionManager,
    host: SessionHost,
    plant: str,
    command: str,
    files: dict[str, str],
    artifacts: list[str],
    right_passes: bool = True,
) -> tuple[float, float]:
    """The wrong solution's reward in the session and in a fresh sandbox, after ``plant``; the right
    one's in a fresh sandbox must be 1.0 (unless ``right_passes`` is False: the command needs a tool
    that only the attack provided)."""
    in_session = SessionTestsVerifier.Config(command=command, files=files, verify="in_session")
    fresh = SessionTestsVerifier.Config(command=command, files=files, verify="fresh", artifacts=artifacts)
    rewards = []
    for config in (in_session, fresh):
        result = _judged(manager, host, WRONG, plant, config)
        assert result.status == "ok", result
        rewards.append(result.score)
    if right_passes:
        right = _judged(manager, host, RIGHT, plant, fresh)
        assert (right.status, right.score) == ("ok", 1.0), right
    return rewards[0], rewards[1]


# --- forged results ----------------------------------------------------------------------------------


def test_a_forged_reward_file_earns_nothing(manager, host):
    assert _rewards(manager, host, "echo 1 > reward.txt", GRADED, GRADER, ["solution.py"]) == (1.0, 0.0)


def test_a_forged_report_file_earns_nothing(manager, host):
    plant = "echo '{\"passed\": true}' > report.json"
    assert _rewards(manager, host, plant, REPORTED, REPORTER, ["solution.py"]) == (1.0, 0.0)


# --- a patched test runner ---------------------------------------------------------------------------


def test_a_pytest_module_planted_where_pytest_is_not_installed_earns_nothing(manager, host):
    """The sandbox's Python has no pytest, so ``python3 -m pytest`` finds a ``pytest.py`` the session
    left (the working directory is last on ``sys.path``, after the standard library, not gone). Where
    pytest is installed, a ``conftest.py`` that exits 0 on import is the same attack."""
    probe = _judged(manager, host, RIGHT, "", SessionTestsVerifier.Config(command="python3 -c 'import pytest'"))
    if probe.score == 1.0:
        plant, command = f"printf '{EXITS}' > conftest.py", "python3 -m pytest -q test_add.py"
        assert _rewards(manager, host, plant, command, UNITTEST, ["solution.py"]) == (1.0, 0.0)
        return
    plant = "printf 'print(\"1 passed in 0.01s\")\\n' > pytest.py"
    command = "python3 -m pytest -q test_add.py"
    assert _rewards(manager, host, plant, command, UNITTEST, ["solution.py"], right_passes=False) == (1.0, 0.0)


def test_a_unittest_module_beside_the_tests_earns_nothing(manager, host):
    """Already stopped in the session (its ``python3`` puts the standard library first)."""
    plant = "printf 'import sys\\nsys.exit(0)\\n' > unittest.py"
    assert _rewards(manager, host, plant, "python3 -m unittest test_add", UNITTEST, ["solution.py"]) == (0.0, 0.0)


def test_a_unittest_module_found_by_a_versioned_interpreter_earns_nothing(manager, host):
    """``python3.11`` is not the session's isolated ``python3``: in the session it puts the working
    directory first, where the planted ``unittest.py`` is."""
    plant = "printf 'import sys\\nsys.exit(0)\\n' > unittest.py"
    command = "python3.11 -m unittest test_add"
    assert _rewards(manager, host, plant, command, UNITTEST, ["solution.py"]) == (1.0, 0.0)


def test_a_glob_never_carries_the_startup_files_of_python_or_pytest(manager, host):
    """A glob lets the agent choose what travels: ``*.py`` would carry a planted ``conftest.py`` or
    ``sitecustomize.py`` too, so a glob never does (they travel when named exactly)."""
    plant = f"printf '{EXITS}' > conftest.py && cp conftest.py sitecustomize.py && printf '{EXITS}' > hook.pth"
    config = SessionTestsVerifier.Config(command="python3 check.py", files=CHECK, artifacts=["*.py", "*.pth"])
    result = _judged(manager, host, WRONG, plant, config)
    assert (result.status, result.score) == ("ok", 0.0), result
    left_out = result.details["artifacts"]["left_out"]
    assert {"conftest.py", "sitecustomize.py", "hook.pth"} <= set(left_out), left_out
    assert result.details["artifacts"]["copied"] == {"solution.py": len(WRONG)}


# --- a patched interpreter ---------------------------------------------------------------------------


def test_a_python3_earlier_on_a_path_from_the_environment_earns_nothing(manager, host):
    """The session's ``python3`` is a shell function, which ``sh`` (dash) does not inherit: a ``PATH``
    the command loads from the session's ``.env`` leads ``sh``'s ``python3`` to a planted program."""
    plant = "mkdir -p bin && printf '#!/bin/sh\\nexit 0\\n' > bin/python3 && chmod +x bin/python3"
    plant += " && printf 'PATH=/tmp/bin:/usr/bin:/bin\\n' > .env"
    command = "set -a; . ./.env 2>/dev/null; set +a; sh -c 'python3 check.py'"
    assert _rewards(manager, host, plant, command, CHECK, ["solution.py"]) == (1.0, 0.0)


@pytest.mark.parametrize("hook", ["sitecustomize.py", "usercustomize.py", "zz_hook.pth"])
def test_an_interpreter_hook_in_the_user_site_earns_nothing(manager, host, hook):
    """Already stopped in the session (no user site for its tests' Python)."""
    plant = f"{USER_SITE} && printf '{EXITS}' > {hook}"
    assert _rewards(manager, host, plant, "python3 check.py", CHECK, ["solution.py"]) == (0.0, 0.0)


# --- what outlives a call ----------------------------------------------------------------------------


def test_a_daemon_that_keeps_the_reward_file_earns_nothing_and_is_gone(manager, host):
    """The daemon itself is killed in both modes (the session's processes all stop first); in the
    session what it wrote still answers for the grader."""
    plant = "setsid sh -c 'while :; do echo 1 > reward.txt; sleep 0.01; done' >/dev/null 2>&1 </dev/null & sleep 0.3"
    assert _rewards(manager, host, plant, GRADED, GRADER, ["solution.py"]) == (1.0, 0.0)
    session = manager.create(OWNER, "python", {"solution.py": WRONG}).id
    try:
        assert manager.run(session, OWNER, {"command": plant.replace("reward.txt", "beat.txt")}).verdict == "ok"
        fresh = manager.run_tests_fresh(session, OWNER, GRADED, 30.0, GRADER, ["solution.py"])
        assert fresh.verdict == "runtime_error", fresh
        # nothing of the session runs on: the file it kept rewriting stays gone once removed
        after = manager.run(session, OWNER, {"command": "rm -f beat.txt; sleep 0.3; test ! -e beat.txt"})
        assert after.verdict == "ok", after
    finally:
        manager.delete(session, OWNER)


# --- artifacts that are not regular files ------------------------------------------------------------


def test_a_symlink_artifact_to_the_tests_expected_output_earns_nothing(manager, host):
    files = {"expected.txt": "5\n"}
    plant = "ln -s expected.txt answer.txt"
    assert _rewards(manager, host, plant, "cmp answer.txt expected.txt", files, ["answer.txt"], right_passes=False) == (
        1.0,
        0.0,
    )


@pytest.mark.parametrize(
    ("plant", "reason"),
    [
        ("ln -s /etc/passwd answer.txt", "symbolic link"),
        ("ln -s /dev/zero answer.txt", "symbolic link"),
        ("mkfifo answer.txt", "fifo"),
        ("python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('answer.txt')\"", "socket"),
    ],
)
def test_an_artifact_that_is_not_a_regular_file_is_refused_with_a_zero(manager, host, plant, reason):
    """In the session, a fifo makes the tests wait out their whole time; a link to /etc or a device
    reads the system. Fresh, it is refused at once, a 0 with the reason (the agent's doing: never an
    error, which a trainer would mask)."""
    config = SessionTestsVerifier.Config(command="cat answer.txt", verify="fresh", artifacts=["answer.txt"])
    result = _judged(manager, host, WRONG, plant, config)
    assert (result.status, result.score, result.details["verdict"]) == ("ok", 0.0, "runtime_error"), result
    artifacts = result.details["artifacts"]
    assert reason in artifacts["refused"].get("answer.txt", ""), artifacts
    assert artifacts["copied"] == {}


def test_an_artifact_behind_a_linked_folder_is_refused(manager, host):
    plant = "mkdir -p real && cp solution.py real/solution.py && ln -s real src"
    config = SessionTestsVerifier.Config(command="cat src/solution.py", artifacts=["src/solution.py"])
    result = _judged(manager, host, RIGHT, plant, config)
    assert (result.status, result.score) == ("ok", 0.0), result
    assert "link" in result.details["artifacts"]["refused"]["src/solution.py"]


def test_a_huge_artifact_is_refused_with_a_zero(manager, host):
    plant = "head -c 3000000 /dev/zero | tr '\\0' '#' > answer.txt && cat solution.py >> answer.txt"
    config = SessionTestsVerifier.Config(command="true", artifacts=["answer.txt"])
    result = _judged(manager, host, RIGHT, plant, config)
    assert (result.status, result.score) == ("ok", 0.0), result
    assert "larger than the cap" in result.details["artifacts"]["refused"]["answer.txt"]


def test_artifacts_past_the_total_cap_are_refused_with_a_zero(manager, host):
    plant = "for i in 1 2 3; do head -c 60000 /dev/zero > part$i.bin; done"
    config = SessionTestsVerifier.Config(
        command="true", artifacts=["part*.bin"], max_artifact_bytes=100_000, max_artifacts_bytes=150_000
    )
    result = _judged(manager, host, RIGHT, plant, config)
    assert (result.status, result.score) == ("ok", 0.0), result
    assert "together exceed" in result.details["artifacts"]["refused"]["part3.bin"]


def test_a_missing_artifact_is_a_zero_not_an_error(manager, host):
    config = SessionTestsVerifier.Config(command="python3 check.py", files=CHECK, artifacts=["solution.py", "notes.md"])
    result = _judged(manager, host, RIGHT, "", config)
    assert (result.status, result.score) == ("ok", 0.0), result
    assert result.details["artifacts"]["missing"] == ["notes.md"]
    assert "notes.md: missing" in result.details["stderr"]


# --- what the fresh sandbox is -----------------------------------------------------------------------


def test_the_tests_files_are_never_inside_the_session(manager, host):
    """The tests' files go to the fresh sandbox only; the session never sees them, before or after."""
    session = manager.create(OWNER, "python", {"solution.py": RIGHT}).id
    try:
        fresh = manager.run_tests_fresh(session, OWNER, "python3 check.py", 30.0, CHECK, ["solution.py"])
        assert fresh.verdict == "ok", fresh
        after = manager.run(session, OWNER, {"command": "test ! -e check.py && ls -a"})
        assert after.verdict == "ok", after
    finally:
        manager.delete(session, OWNER)


def test_the_fresh_sandbox_carries_nothing_of_the_sessions_environment(manager, host):
    """Only the artifacts and the tests' files are there: no home, no other file, the fixed PATH."""
    plant = "echo secret > notes.txt && mkdir -p .local bin && echo x > .local/hook && echo 'PATH=/tmp/bin' > .env"
    command = "ls -A | sort | tr '\\n' ' '; echo; echo $PATH; echo $HOME"
    session = manager.create(OWNER, "python", {"solution.py": RIGHT}).id
    try:
        assert manager.run(session, OWNER, {"command": plant}).verdict == "ok"
        shown = manager.run_tests_fresh(session, OWNER, command, 30.0, CHECK, ["solution.py"])
    finally:
        manager.delete(session, OWNER)
    listing, path, home = shown.stdout.splitlines()[:3]
    assert listing.split() == ["check.py", "solution.py"], shown.stdout
    assert "/tmp/bin" not in path.split(":") and home.endswith("/home"), shown.stdout


def test_a_fresh_sandbox_keeps_the_artifacts_folders_and_executable_bits(manager, host):
    plant = "mkdir -p src/pkg && cp solution.py src/pkg/solution.py && printf '#!/bin/sh\\necho 5\\n' > run.sh"
    plant += " && chmod +x run.sh"
    command = 'test "$(./run.sh)" = 5 && cd src/pkg && python3 -c "from solution import add; assert add(2, 3) == 5"'
    config = SessionTestsVerifier.Config(command=command, artifacts=["src", "run.sh"])
    result = _judged(manager, host, RIGHT, plant, config)
    assert (result.status, result.score) == ("ok", 1.0), result
    assert set(result.details["artifacts"]["copied"]) == {"src/pkg/solution.py", "run.sh"}


def test_fresh_verification_leaves_the_host_as_it_was(tmp_path: Path):
    """No process of the fresh sandbox (nor of the session's, stopped) outlives it, and a host file
    the session names is never read nor written. (Mount namespaces are not counted: on a shared host
    other sandboxes come and go meanwhile; a process of the fresh sandbox's own user id would be there.)"""
    canary = tmp_path / "canary.txt"
    canary.write_text("unchanged\n")
    settings = SMALL.model_copy(update={"spares": 0})
    manager = SessionManager(settings)
    try:
        session = manager.create(OWNER, "python", {"solution.py": RIGHT}).id
        plant = f"ln -s {canary} answer.txt; setsid sh -c 'sleep 300' >/dev/null 2>&1 </dev/null &"
        assert manager.run(session, OWNER, {"command": plant}).verdict == "ok"
        assert _processes_of(manager.get(session, OWNER).box.uid) != []  # its kernel and its daemon, for now
        refused = manager.run_tests_fresh(session, OWNER, "cat answer.txt", 30.0, {}, ["answer.txt"])
        assert refused.verdict == "runtime_error" and "symbolic link" in refused.stderr, refused
        command = "echo changed > answer.txt; setsid sh -c 'sleep 300' >/dev/null 2>&1 </dev/null & python3 check.py"
        passed = manager.run_tests_fresh(session, OWNER, command, 30.0, CHECK, ["solution.py"])
        assert passed.verdict == "ok", passed
        fresh_uid, session_uid = passed.details["uid"], manager.get(session, OWNER).box.uid
        assert fresh_uid != session_uid  # a sandbox of its own, under a user id of its own
        assert _processes_of(fresh_uid) == [] and _processes_of(session_uid) == []  # servers run as root
        assert not [pid for pid in descendants(os.getpid()) if f"--program-uid {fresh_uid} " in _cmdline(pid)]
        assert canary.read_text() == "unchanged\n"
    finally:
        manager.close()


def _processes_of(uid: int) -> list[int]:
    """Processes whose real user id is ``uid`` (a sandbox's programs run as its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            real = next((line.split()[1] for line in status.splitlines() if line.startswith("Uid:")), None)
            if real == str(uid):
                found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_a_sample_that_declares_no_artifacts_for_a_fresh_verification_is_refused():
    with pytest.raises(ValueError, match="needs artifacts"):
        SessionTestsVerifier.Config(command="true", verify="fresh")
    with pytest.raises(ValueError, match="only by a fresh verification"):
        SessionTestsVerifier.Config(command="true", verify="in_session", artifacts=["a.py"])
    with pytest.raises(ValueError, match="contradicts"):
        SessionTestsVerifier.Config(command="true", verify="in_session", fresh=True, artifacts=["a.py"])
    for path in ("/etc/passwd", "../up.py", "a/../../b", "src/**/x.py", ""):
        with pytest.raises(ValueError, match="relative"):
            SessionTestsVerifier.Config(command="true", artifacts=[path])
    assert SessionTestsVerifier.Config(command="true", fresh=True, artifacts=["a.py"]).mode == "fresh"
    assert SessionTestsVerifier.Config(command="true", artifacts=["a.py"]).mode == "fresh"
    assert SessionTestsVerifier.Config(command="true").mode == "in_session"


def test_the_test_route_verifies_fresh_when_given_artifacts(client):
    made = client.post("/v1/sessions", json={"runtime": "python", "files": {"solution.py": WRONG}})
    session = made.json()["session_id"]
    try:
        assert client.post(f"/v1/sessions/{session}/run", json={"command": "echo 1 > reward.txt"}).status_code == 200
        body = {"command": GRADED, "files": GRADER}
        fresh = client.post(f"/v1/sessions/{session}/test", json={**body, "artifacts": ["solution.py"]}).json()
        assert (fresh["reward"], fresh["verification"], fresh["artifacts"]["copied"]) == (
            0.0,
            "fresh",
            {"solution.py": len(WRONG)},
        )
        in_session = client.post(f"/v1/sessions/{session}/test", json=body).json()
        assert (in_session["reward"], in_session["verification"]) == (1.0, "in_session")
        for bad in ({"verify": "fresh"}, {"artifacts": ["../x"]}, {"verify": "in_session", "artifacts": ["a"]}):
            refused = client.post(f"/v1/sessions/{session}/test", json={**body, **bad})
            assert refused.status_code == 422, refused.text
    finally:
        client.delete(f"/v1/sessions/{session}")


def test_the_tests_files_win_a_name_the_agent_also_used(manager, host):
    """With the whole working directory as artifacts, the agent's own ``check.py`` travels too; the
    tests' ``check.py`` is written over it."""
    plant = "printf 'print(\"ok\")\\n' > check.py"
    config = SessionTestsVerifier.Config(command="python3 check.py", files=CHECK, artifacts=["."])
    result = _judged(manager, host, WRONG, plant, config)
    assert (result.status, result.score) == ("ok", 0.0), result
    assert "check.py" in result.details["artifacts"]["copied"]
