"""The ``code`` verifier's tests in a session run where the session's code never ran: what the
session's calls did to their interpreter (a built-in or ``unittest`` rewritten, the kernel's own
functions replaced, a ``unittest.py`` in its folder) does not change a test, and a function of the
session that walks the stack or scans ``gc`` for what a test expects finds nothing. One attack per
test: each made a wrong solution pass before, and earns 0 now, while a right one still earns 1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardhub.sessions import LocalSessions, SessionHost, SessionManager
from rewardhub.types import Sample
from rewardhub.verifier import CALLER_FIELD
from rewardhub.verifiers.code import CodeVerifier

OWNER = "owner-judging"
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
CHECK = {"test": "def check(candidate):\n    assert candidate(20, 22) == 42\n", "entry_point": "add"}
LOOP = {  # asserts in a loop: the whole check runs as one test, expected values and all
    "test": (
        "def check(candidate):\n    for a, b, expected in [(20, 22, 42), (2, 3, 5)]:\n"
        "        assert abs(candidate(a, b) - expected) < 1e-9\n"
    ),
    "entry_point": "add",
}


@pytest.fixture(scope="module")
def host(manager: SessionManager) -> Iterator[SessionHost]:
    served = SessionHost()
    served.local = LocalSessions(manager)
    yield served
    served.local = LocalSessions(lambda: manager)  # unopened: closing the host leaves the module's manager open
    served.close()


def _scores(
    manager: SessionManager, host: SessionHost, reference: dict, wrong: str, *cells: str, before: tuple[str, ...] = ()
) -> tuple[float, float]:
    """The code verifier's score of a session holding ``wrong`` and of one holding a right ``add``,
    each after the session ran ``cells`` (and ``before`` them, ``before``, whatever their verdicts)."""
    scores = []
    for solution in (wrong, RIGHT):
        session = manager.create(OWNER, "python").id
        try:
            for cell in before:
                manager.run(session, OWNER, {"code": cell})
            for cell in (solution, *cells):
                ran = manager.run(session, OWNER, {"code": cell})
                assert ran.verdict == "ok", ran
            sample = Sample(
                response="The function is defined.",
                reference=reference,
                session_id=session,
                metadata={CALLER_FIELD: host.grant(OWNER)},
            )
            result = CodeVerifier().score(sample, CodeVerifier.Config())
            assert result.status == "ok", result
            scores.append(result.score)
        finally:
            manager.delete(session, OWNER)
    return scores[0], scores[1]


def test_a_builtin_the_session_rewrote_does_not_change_a_check(manager, host):
    patch = "import builtins\nbuiltins.abs = lambda x: 0"
    assert _scores(manager, host, LOOP, WRONG, patch) == (0.0, 1.0)


UNITTEST_CHECK = {
    "test": (
        "import unittest\n\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n"
        "        self.assertEqual(add(2, 3), 5)\n\n\n"
        "def check(candidate):\n    suite = unittest.defaultTestLoader.loadTestsFromTestCase(TestAdd)\n"
        "    result = unittest.TextTestRunner(stream=open('/dev/null', 'w')).run(suite)\n"
        "    assert result.wasSuccessful()\n"
    ),
    "entry_point": "add",
}


def test_a_module_planted_in_the_sessions_folder_does_not_reach_a_fresh_kernels_judge(manager, host):
    planted = (  # rewrites abs, then becomes the real subprocess, so the kernel starts as usual
        "import builtins, importlib.util, os, sys, sysconfig\nbuiltins.abs = lambda x: 0\n"
        "spec = importlib.util.spec_from_file_location("
        "'subprocess', os.path.join(sysconfig.get_paths()['stdlib'], 'subprocess.py'))\n"
        "module = importlib.util.module_from_spec(spec)\nsys.modules['subprocess'] = module\n"
        "spec.loader.exec_module(module)\n"
    )
    plant = f"open('subprocess.py', 'w').write({planted!r})"
    restart = "import os\nos._exit(0)"  # the kernel ends: the next call starts a fresh one, in this folder
    assert _scores(manager, host, LOOP, WRONG, before=(plant, restart)) == (0.0, 1.0)


def test_unittest_rewritten_in_the_session_does_not_change_a_check(manager, host):
    patch = "import unittest\nunittest.TestCase.assertEqual = lambda self, first, second, msg=None: None"
    assert _scores(manager, host, UNITTEST_CHECK, WRONG, patch) == (0.0, 1.0)


def test_a_unittest_module_in_the_sessions_folder_is_not_the_tests(manager, host):
    shadow = (
        "open('unittest.py', 'w').write('class TestCase:\\n    def assertEqual(self, *a): pass\\n"
        "class TextTestRunner:\\n    def __init__(self, **k): pass\\n"
        '    def run(self, suite):\\n        return type("R", (), {"wasSuccessful": lambda self: True})()\\n'
        "class _Loader:\\n    def loadTestsFromTestCase(self, case): return case\\n"
        "defaultTestLoader = _Loader()\\n')"
    )
    assert _scores(manager, host, UNITTEST_CHECK, WRONG, shadow) == (0.0, 1.0)


def test_the_kernels_own_functions_replaced_by_the_session_do_not_judge(manager, host):
    takeover = (
        "import sys\nkernel = sys._getframe(1).f_globals\n"
        "kernel['_test_in_fork'] = lambda spec, program: (0, {'check': 'passed'})"
    )
    assert _scores(manager, host, LOOP, WRONG, takeover) == (0.0, 1.0)


def test_a_function_that_walks_the_stack_finds_no_expected_value(manager, host):
    walks = (
        "import sys\n\ndef add(a, b):\n    frame = sys._getframe(1)\n    while frame is not None:\n"
        "        if 'expected' in frame.f_locals:\n            return frame.f_locals['expected']\n"
        "        frame = frame.f_back\n    return a - b\n"
    )
    assert _scores(manager, host, LOOP, walks) == (0.0, 1.0)


def test_a_function_that_scans_gc_finds_no_expected_value(manager, host):
    scans = (  # an answer table read off the test's source, in whatever dict of the process holds it
        "import gc, re\n\ndef add(a, b):\n    for found in gc.get_objects():\n"
        "        texts = found.values() if isinstance(found, dict) else ()\n"
        "        for text in [t for t in texts if isinstance(t, str) and 'candidate(' in t]:\n"
        "            rows = re.findall(r'\\((\\d+), (\\d+), (\\d+)\\)', text)\n"
        "            table = {(int(x), int(y)): int(z) for x, y, z in rows}\n"
        "            if (a, b) in table:\n                return table[a, b]\n"
        "    return a - b\n"
    )
    assert _scores(manager, host, LOOP, scans) == (0.0, 1.0)


def test_asserts_calls_and_values_still_see_the_sessions_state(manager, host):
    """What the tests read of the session: its functions (a call, an assert, a check) and its values."""
    calls = {"fn_name": "add", "inputs": [[1, 2], [20, 22]], "outputs": [3, 42]}
    asserts = {"test": "assert add(2, 3) == scale // 2"}
    for reference in (calls, asserts, CHECK):
        assert _scores(manager, host, reference, WRONG, "scale = 10") == (0.0, 1.0)


def test_the_session_can_neither_read_the_judges_memory_nor_take_its_descriptors(manager):
    probe = (
        "import os\nme = os.getpid()\nkids = []\n"
        "for entry in os.listdir('/proc'):\n"
        "    try:\n"
        "        if entry.isdigit() and open(f'/proc/{entry}/stat').read().rsplit(')', 1)[1].split()[1] == str(me):\n"
        "            kids.append(int(entry))\n"
        "    except OSError:\n        pass\n"
        "seen = {}\n"
        "for pid in kids:\n"
        "    for what, look in (('mem', lambda p: open(f'/proc/{p}/mem', 'rb').close()),"
        " ('fd', lambda p: os.listdir(f'/proc/{p}/fd'))):\n"
        "        try:\n            look(pid)\n            seen[what] = 'open'\n"
        "        except PermissionError:\n            seen.setdefault(what, 'refused')\n"
        "print(len(kids), sorted(seen.items()))"
    )
    session = manager.create(OWNER, "python").id
    try:
        ran = manager.run(session, OWNER, {"code": probe})
    finally:
        manager.delete(session, OWNER)
    assert ran.stdout == "1 [('fd', 'refused'), ('mem', 'refused')]\n", ran  # the judge, the kernel's one child
