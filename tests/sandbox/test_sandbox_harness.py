"""A program that rebinds what the harness would use runs like any other, and no frame or file of the
harness reaches what it prints (``rewardhub/sandbox/inside/pristine.py``).

SandboxFusion's anti-hack header (its ``sandbox/utils/antihack.py``) sets ``exit``, ``os._exit`` and
``sys.exit`` to ``None`` before a dataset's code: the harness must still finish that run, in every
test mode, as ``python main.py`` would.
"""

from __future__ import annotations

import pytest
from sandbox_support import QUICK

from rewardhub.sandbox import language

ANTI_HACK = "import os\nimport sys\nexit = None\nos._exit = None\nsys.exit = None\n"
"""SandboxFusion's ``PY_HEADER``, as it puts it before a program."""

REBINDINGS = {
    "SandboxFusion's anti-hack header": ANTI_HACK,
    "signal": "import signal\nsignal.signal = signal.alarm = signal.setitimer = None\n",
    "atexit": "import atexit\natexit.register = atexit._run_exitfuncs = atexit._clear = None\n",
    "threading": "import threading\nthreading._shutdown = None\n",
    "built-ins": "import builtins\nbuiltins.isinstance = builtins.SystemExit = builtins.getattr = None\n",
    "json and traceback": "import json, traceback\njson.dumps = traceback.print_exception = None\n",
    "the excepthooks": "import sys\nsys.excepthook = sys.__excepthook__ = None\n",
}
HARNESS_TRACES = ("/opt/rewardhub", "inside/", "driver.py", "harness.py", "child.py", "check_process.py")


def run(pool, code: str, test: dict | None = None, files: dict | None = None):
    with pool.job(language("python"), code) as job:
        job.setup(files or {})
        return job.run(b"", QUICK, test=test, last=True)


def assert_no_harness_in(text: str) -> None:
    assert not [trace for trace in HARNESS_TRACES if trace in text], text


@pytest.mark.parametrize("rebinding", list(REBINDINGS))
def test_a_program_that_rebinds_what_the_harness_uses_runs_like_any_other(pool, rebinding):
    result = run(pool, REBINDINGS[rebinding] + "print('hello')\n")
    assert (result.verdict, result.exit_code, result.stdout, result.stderr) == ("ok", 0, "hello\n", "")


def test_atexit_functions_registered_before_the_rebinding_still_run(pool):
    code = "import atexit\natexit.register(print, 'bye')\n" + REBINDINGS["atexit"] + ANTI_HACK + "print('hello')\n"
    result = run(pool, code)
    assert (result.verdict, result.stdout) == ("ok", "hello\nbye\n")


@pytest.mark.parametrize(
    ("test", "record"),
    [
        ({"mode": "call", "fn_name": "add", "args": [1, 2]}, {"value": 3}),
        ({"mode": "assert", "setup": "", "leaves": ["add(1, 2)"]}, {"values": [{"value": 3}]}),
        ({"mode": "check", "source": "assert add(1, 2) == 3\n", "names": ["add"]}, {"check": "passed"}),
    ],
)
def test_a_program_with_every_rebinding_at_once_is_tested_in_every_mode(pool, test, record):
    code = "".join(REBINDINGS.values()) + "def add(a, b):\n    return a + b\n"
    result = run(pool, code, test)
    assert (result.verdict, result.record, result.stderr) == ("ok", record, "")


def test_exiting_through_a_rebound_exit_fails_as_it_would_under_python(pool):
    """SandboxFusion's own expectation: with its header, ``sys.exit(0)`` is a crash, not a pass."""
    result = run(pool, ANTI_HACK + "sys.exit(0)\n")
    assert (result.verdict, result.exit_code) == ("runtime_error", 1)
    assert "TypeError: 'NoneType' object is not callable" in result.stderr
    assert_no_harness_in(result.stderr)


def test_a_crash_shows_only_the_programs_own_frames(pool):
    code = "def inner():\n    raise ValueError('boom')\ntry:\n    inner()\nexcept ValueError as e:\n    raise KeyError('k') from e\n"
    result = run(pool, code)
    assert result.verdict == "runtime_error"
    assert result.stderr.count('File "/tmp/main.py"') == 3 and "ValueError: boom" in result.stderr
    assert_no_harness_in(result.stderr)


@pytest.mark.parametrize(
    "test",
    [
        {"mode": "call", "fn_name": "broken", "args": []},
        {"mode": "assert", "setup": "", "leaves": ["broken()"]},
        {"mode": "check", "source": "assert broken() == 1\n", "names": ["broken"]},
    ],
)
def test_a_crash_inside_a_tested_function_shows_no_harness_frame(pool, test):
    result = run(pool, "def broken():\n    return 1 / 0\n", test)
    assert "ZeroDivisionError" in result.stderr + str(result.record)
    assert_no_harness_in(result.stderr)


def test_the_programs_own_excepthook_gets_its_uncaught_exception(pool):
    code = "import sys\nsys.excepthook = lambda t, e, tb: print('hooked', t.__name__, tb.tb_frame.f_code.co_filename)\n1 / 0\n"
    result = run(pool, code)
    assert (result.verdict, result.stdout, result.stderr) == (
        "runtime_error",
        "hooked ZeroDivisionError /tmp/main.py\n",
        "",
    )


def test_a_programs_own_module_named_like_a_harness_module_is_the_one_it_imports(pool):
    files = {f"{name}.py": f"NAME = {name!r}\n" for name in ("wire", "harness", "child", "pristine", "check_process")}
    code = "import wire, harness, child, pristine, check_process\nprint(wire.NAME, harness.NAME, pristine.NAME)\n"
    result = run(pool, code, files=files)
    assert (result.verdict, result.stdout) == ("ok", "wire harness pristine\n")


def test_the_harness_is_off_the_programs_import_path(pool):
    # the harness's own folder: the checkout's venv may sit under a path that says rewardhub too
    result = run(
        pool, "import sys\nprint([p for p in sys.path if p.startswith('/opt/rewardhub/inside')])\nimport wire\n"
    )
    assert (result.verdict, result.stdout) == ("runtime_error", "[]\n")
    assert "No module named 'wire'" in result.stderr


def test_the_command_line_the_program_sees_is_its_own(pool):
    result = run(pool, "import sys\nprint(sys.argv, sys.orig_argv[1:])\n")
    assert (result.verdict, result.stdout) == ("ok", "['/tmp/main.py'] ['/tmp/main.py']\n")
