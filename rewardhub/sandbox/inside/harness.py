"""Runs one Python program, or one test of it, in a freshly forked child of the fork server.

By the time these functions run, the child already *is* the program: its own session, the test's
pipes on fds 0-2, an unprivileged user, its limits. What remains is to execute the submission the
way ``python main.py`` would (``__name__ == "__main__"``, ``sys.argv``, exit codes, atexit,
waiting for non-daemon threads) and, for function-call and assert tests, to report what it
computed.

What goes back on the record channel is *values*, never verdicts: the expected outputs are not in
the sandbox, so the parent compares. The channel is a private pipe (fd 3), not stdout, so printing
something that looks like a result changes nothing. One test produces exactly one record; the
parent treats none (the program exited before its test ran) or several (someone else wrote on the
pipe) as a failure.

Standard library only (with :mod:`wire`, which sits beside this file).
"""

from __future__ import annotations

import os
import shutil
import sys
import traceback
import types
from time import perf_counter as _clock
from typing import Any

try:
    from . import batch, check_process, pristine, stdio_cases, wire
except ImportError:  # run as a plain script inside the sandbox
    import batch  # type: ignore[no-redef]
    import check_process  # type: ignore[no-redef]
    import pristine  # type: ignore[no-redef]
    import stdio_cases  # type: ignore[no-redef]
    import wire  # type: ignore[no-redef]

pristine.seal(globals())  # what runs after the program looks up nothing the program can rebind

__all__ = ["RECORD_FD", "reseed", "run_native_batch", "run_python"]

RECORD_FD = 3
"""Where a Python test writes its one result record."""

COMPILE_ERROR_EXIT = 3
"""Exit status after a ``SyntaxError``: the parent reads the verdict from the record, not from this."""


def run_python(spec: dict[str, Any], builtins_snapshot: dict[str, Any]) -> int:
    """Execute the submission as ``__main__`` and then the test ``spec`` asks for; the exit status."""
    path = spec["path"]
    pristine.forget_harness()
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__dict__["__builtins__"] = sys.modules["builtins"]
    sys.modules["__main__"] = module
    sys.argv = [path, *spec.get("args", [])]
    sys.orig_argv = [sys.executable, *sys.argv]  # as `python main.py` has it, not the server's command line
    sys.path.insert(0, os.path.dirname(path))
    try:
        code = compile(spec["code"], path, "exec")
    except (SyntaxError, ValueError) as exc:  # ValueError: source with NUL bytes
        traceback.print_exception(exc, limit=0)  # as Python prints it: no frame at all
        _record({"compile_error": "".join(traceback.format_exception_only(exc)).strip()})
        return _finish(COMPILE_ERROR_EXIT)
    if spec["mode"] == "series":  # asserts and calls after one run of the program; the parent keeps each clock
        tests = [(int(index), test) for index, test in spec["tests"]]
        _run_series(code, module, tests, builtins_snapshot)
        return 0  # no atexit, no joining threads: once its last test is reported, this process is done
    if spec["mode"] == "batch":  # every test of the submission in this one run, each in a fork of its own

        def one(test: dict[str, Any]) -> int:  # reseeded by run_batch's prepare, before its test began
            whole = {"in_batch": True}  # the coordinator never holds a whole test: it runs on its own
            return _run_test(code, module, {**spec, **test, "mode": test["kind"], **whole}, builtins_snapshot)

        def cases(tests: list[tuple[int, dict[str, Any]]], report: Any) -> int:
            """The program once per stdin/stdout case (:mod:`stdio_cases`), each reported as it ends."""
            run_main = lambda module: _exec_main(code, module)  # noqa: E731
            indexes = [index for index, _ in tests]
            return stdio_cases.run_cases(indexes, run_main, _at_exit, report, path, builtins_snapshot, reseed)

        return _finish(batch.run_batch(spec, one, cases, _record, prepare=reseed))
    return _run_test(code, module, spec, builtins_snapshot)


def _run_series(
    code: types.CodeType,
    module: types.ModuleType,
    tests: list[tuple[int, dict[str, Any]]],
    builtins_snapshot: dict[str, Any],
) -> None:
    """The program once, then each assert or call test in turn, each reported as one line on the
    result channel as it ends (:func:`batch.report`): the trusted parent reads the lines as they
    come and keeps each test's clock from the line before it (:mod:`rewardhub.sandbox.batch`)."""
    started = _clock()
    status = _exec_main(code, module)
    for index, test in tests:
        if _exited or status != 0:
            why = "exited" if _exited else "raised an exception"
            record = {"error": f"the program {why} before its test ran"}
        elif test["kind"] == "call":
            record = _call_test(module, test["fn_name"], test["args"])
        else:
            record = _assert_test(module, test["setup"], test["leaves"], builtins_snapshot)
        ended = _clock()
        batch.report(index, record, (ended - started) * 1000.0)
        started = ended


def run_native_batch(spec: dict[str, Any]) -> int:
    """Every stdin/stdout case of a built native program (``spec["argv"]``, its language's run
    command) in this one run, each spawned with its own clock (:func:`batch.run_native_batch`); the
    environment is the sandbox's with the language's (``spec["env"]``), as the server gives a run of
    its own, and the program is looked up on that ``PATH`` the same way."""
    env = {**os.environ, **spec.get("env", {})}
    argv = [str(part) for part in spec["argv"]]
    path = shutil.which(argv[0], path=env.get("PATH")) or argv[0]
    return batch.run_native_batch(spec, (path, argv, env), _record)


def _run_test(
    code: types.CodeType, module: types.ModuleType, spec: dict[str, Any], builtins_snapshot: dict[str, Any]
) -> int:
    """Run the compiled program and the one test ``spec`` asks for; the exit status."""
    mode = spec["mode"]
    if mode == "stdio":
        status = _exec_main(code, module)
        if spec.get("report_crash") and _crashed is not None:  # a checker: its crash is no judgement
            _record({"crashed": _crashed})
        return _finish(status)
    if mode == "check":
        if "source" in spec or spec.get("in_batch"):  # the program's memory would hold it: see check_process
            _record({"check": "failed", "message": "a whole test comes on its run's stdin, never with the program"})
            return 1
        program = check_process.Program(module, lambda: (_exec_main(code, module), _exited), _finish, _exit_status)
        return _finish(check_process.run_whole_check(spec, program, builtins_snapshot, _record, RECORD_FD))
    status = _exec_main(code, module)
    if _exited or status != 0:
        why = "exited" if _exited else "raised an exception"
        _record({"error": f"the program {why} before its test ran"})
        return _finish(status or 1)
    if mode == "call":
        _record(_call_test(module, spec["fn_name"], spec["args"]))
    elif mode == "assert":
        _record(_assert_test(module, spec["setup"], spec["leaves"], builtins_snapshot))
    else:
        _record({"error": f"unknown test mode {mode!r}"})
    return _finish(0)


def reseed() -> None:
    """A fresh interpreter starts with fresh random state; a fork of a warm one must too.

    CPython reseeds ``random`` after fork by itself; numpy's global generator, imported once by
    the server, would otherwise give every run the same numbers. Called once in every forked child,
    with 256 bits from the system (``seed()`` with no argument draws 128 through a SeedSequence,
    four times slower).
    """
    numpy, numpy_random = sys.modules.get("numpy"), sys.modules.get("numpy.random")
    if numpy is not None and numpy_random is not None:
        numpy_random.seed(numpy.frombuffer(os.urandom(32), dtype=numpy.uint32))


_exited = False
_crashed: str | None = None


def _exec_main(code: types.CodeType, module: types.ModuleType) -> int:
    """Run the module body like the interpreter would; the exit status it asks for."""
    global _exited, _crashed
    try:
        exec(code, module.__dict__)
    except SystemExit as exc:
        _exited = True
        return _exit_status(exc.code)
    except BaseException as exc:  # the program's own crash: report it as Python would
        pristine.report_uncaught(exc)
        _crashed = _described(exc)
        return 1
    return 0


def _described(exc: BaseException) -> str:
    try:
        return f"{type(exc).__name__}: {exc}"[:2000]
    except BaseException:  # an exception whose __str__ fails
        return type(exc).__name__


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _call_test(module: types.ModuleType, fn_name: str, args: list[Any]) -> dict[str, Any]:
    """Call ``fn_name(*args)`` (or ``Solution().fn_name``, LeetCode style) and encode what it returns."""
    function = module.__dict__.get(fn_name)
    if function is None and isinstance(module.__dict__.get("Solution"), type):
        try:
            function = getattr(module.__dict__["Solution"](), fn_name, None)
        except BaseException as exc:  # the program's constructor crashed
            pristine.display(exc)
            return {"error": f"Solution() raised {_described(exc)}"}
    if not callable(function):
        return {"error": f"the program defines no function {fn_name!r}"}
    try:
        value = function(*args)
    except BaseException as exc:  # includes SystemExit from inside the function
        pristine.display(exc)
        return {"error": _described(exc)}
    return _encoded(value)


def _assert_test(
    module: types.ModuleType, setup: str, leaves: list[str], builtins_snapshot: dict[str, Any]
) -> dict[str, Any]:
    """Run the test's setup, then evaluate each leaf expression and encode its value.

    The test's own code runs with the built-ins as they were before the submission ran, so a
    program that rebinds ``builtins.abs`` or ``builtins.sorted`` does not rewrite its tests.
    """
    namespace = dict(module.__dict__)
    namespace["__builtins__"] = dict(builtins_snapshot)
    try:
        exec(compile(setup, "<test setup>", "exec"), namespace)
    except BaseException as exc:
        pristine.display(exc)
        return {"error": f"test setup raised {_described(exc)}"}
    values = []
    for leaf in leaves:
        try:
            values.append(_encoded(eval(compile(leaf, "<test>", "eval"), namespace)))
        except BaseException as exc:
            values.append({"error": _described(exc)})
    return {"values": values}


def _encoded(value: Any) -> dict[str, Any]:
    try:
        return {"value": wire.encode_value(value)}
    except (wire.NotPlain, ValueError, RecursionError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:2000]}


def _record(record: dict[str, Any]) -> None:
    """Write the one record of this test and close the channel, so nothing can follow it."""
    data = wire.dumps(record) + b"\n"
    try:
        while data:
            data = data[pristine.write(RECORD_FD, data) :]
        pristine.close(RECORD_FD)
    except OSError:  # the program closed or replaced fd 3: no record, so the test fails
        pass


def _finish(status: int) -> int:
    """What the interpreter does on the way out: join threads, atexit, flush."""
    try:
        pristine.join_threads()
    except BaseException as exc:  # a thread's or a hook's own crash
        pristine.display(exc)
    return _at_exit(status)


def _at_exit(status: int) -> int:
    """The interpreter's way out after its threads are joined: atexit functions, flushed streams."""
    try:
        pristine.run_exitfuncs()
    except BaseException as exc:
        pristine.display(exc)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError, AttributeError):
            status = status or 120  # Python's own status when flushing stdout fails at exit
    return status
