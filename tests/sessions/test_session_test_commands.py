"""A session's test command runs with the interpreter's user-level hooks off: what the session left
in its user site, in an environment file the command loads, or beside the tests under a standard
module's name does not run before the tests. One attack per test, each against a wrong ``add``
(``a - b``) that earns 0, and the same command on a right one still earns 1."""

from __future__ import annotations

import pytest

from rewardhub.sessions import LocalSessions, SessionHost, SessionManager
from rewardhub.types import Sample
from rewardhub.verifier import CALLER_FIELD
from rewardhub.verifiers.session_tests import SessionTestsVerifier

RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
CHECK = {"check.py": "from solution import add\nassert add(2, 3) == 5, 'add(2, 3)'\n"}
UNITTEST = {
    "test_add.py": (
        "import unittest\nfrom solution import add\n\n\nclass TestAdd(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    )
}
EXITS = "import os; os._exit(0)\n"
USER_SITE = 'd=$(python3 -c \'import site; print(site.getusersitepackages())\') && mkdir -p "$d" && cd "$d"'


OWNER = "owner-tests"


def _session(manager: SessionManager, solution: str, *commands: str) -> str:
    session = manager.create(OWNER, "python", {"solution.py": solution}).id
    for command in commands:
        ran = manager.run(session, OWNER, {"command": command})
        assert ran.verdict == "ok", ran
    return session


def _rewards(manager: SessionManager, command: str, files: dict[str, str], *planted: str) -> tuple[float, float]:
    """The reward of a wrong and of a right solution, each in a session that ran ``planted`` first."""
    rewards = []
    for solution in (WRONG, RIGHT):
        session = _session(manager, solution, *planted)
        try:
            result = manager.run_tests(session, OWNER, command, 30.0, files)
        finally:
            manager.delete(session, OWNER)
        assert result.verdict != "sandbox_error", result
        rewards.append(float(result.ok))
    return rewards[0], rewards[1]


def test_a_usercustomize_in_the_user_site_does_not_run(manager):
    plant = f"{USER_SITE} && printf '{EXITS}' > usercustomize.py"
    assert _rewards(manager, "python3 check.py", CHECK, plant) == (0.0, 1.0)


def test_a_usercustomize_does_not_pass_the_session_tests_verifier(manager: SessionManager):
    plant = f"{USER_SITE} && printf '{EXITS}' > usercustomize.py"
    wrong = _session(manager, WRONG, plant)
    host = SessionHost()
    host.local = LocalSessions(manager)
    config = SessionTestsVerifier.Config(command="python3 check.py", files=CHECK)
    sample = Sample(response="done", metadata={"session": wrong, CALLER_FIELD: host.grant(OWNER)})
    try:
        result = SessionTestsVerifier().score(sample, config)
    finally:
        host.local = LocalSessions(lambda: manager)  # unopened: closing the host leaves the module's manager open
        host.close()
        manager.delete(wrong, OWNER)
    assert (result.score, result.status) == (0.0, "ok"), result


def test_a_sitecustomize_or_a_pth_file_in_the_user_site_does_not_run(manager):
    site = f"{USER_SITE} && printf '{EXITS}' > sitecustomize.py"
    pth = f"{USER_SITE} && printf '{EXITS}' > zz_hook.pth"
    assert _rewards(manager, "python3 check.py", CHECK, site) == (0.0, 1.0)
    assert _rewards(manager, "python3 check.py", CHECK, pth) == (0.0, 1.0)


def test_python_variables_from_an_environment_file_the_command_loads_are_ignored(manager):
    plant = (
        "mkdir -p hooks && printf '" + EXITS + "' > hooks/sitecustomize.py && cp hooks/sitecustomize.py startup.py"
        " && printf 'PYTHONPATH=/tmp/hooks\\nPYTHONSTARTUP=/tmp/startup.py\\nPYTHONINSPECT=1\\n' > .env"
    )
    command = "set -a && . ./.env && set +a && python3 check.py"
    assert _rewards(manager, command, CHECK, plant) == (0.0, 1.0)


def test_a_path_from_an_environment_file_does_not_lead_python3_to_a_planted_program(manager):
    plant = "mkdir -p bin && printf '#!/bin/sh\\nexit 0\\n' > bin/python3 && chmod +x bin/python3"
    plant += " && printf 'PATH=/tmp/bin:/usr/bin:/bin\\n' > .env"
    command = "set -a && . ./.env && set +a && python3 check.py"
    assert _rewards(manager, command, CHECK, plant) == (0.0, 1.0)


def test_a_unittest_module_beside_the_tests_does_not_shadow_the_standard_one(manager):
    plant = "printf 'import sys\\nsys.exit(0)\\n' > unittest.py"
    assert _rewards(manager, "python3 -m unittest test_add", UNITTEST, plant) == (0.0, 1.0)
    assert _rewards(manager, "python -m unittest -v test_add", UNITTEST, plant) == (0.0, 1.0)


@pytest.mark.parametrize(
    "command",
    ["python3 -c 'from solution import add; assert add(2, 3) == 5'", "python3 -u check.py", "cat check.py | python3 -"],
)
def test_the_usual_command_shapes_still_find_the_sessions_modules(manager, command):
    plant = f"{USER_SITE} && printf '{EXITS}' > usercustomize.py"
    assert _rewards(manager, command, CHECK, plant) == (0.0, 1.0)
