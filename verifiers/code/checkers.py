"""Special judges: a checker program decides whether an output is right, testlib's way.

A problem with several right answers (any shortest path, any valid colouring, a float to within
1e-6 relative *or* absolute) cannot be judged by comparing with one expected output. Its
reference then carries a checker, run in the sandbox as::

    checker input.txt output.txt answer.txt

(the test's input, the program's output, the expected answer), as Codeforces' testlib and most
judges run one. Its exit status is the verdict: 0 accepted, 1 wrong answer, 2 presentation
error. Anything else (testlib's 3 "fail", a crash, a signal, a timeout, running out of memory, a
checker that does not compile) is *no judgement*: the sample gets status ``error``, never a 0,
because the reference is what is broken, not the program.

Checkers are C or C++ (compiled once per job, with the folder of their files on the include path,
so ``#include "testlib.h"`` and ``#include <testlib.h>`` both work when ``testlib.h`` comes in
``files`` or from the ``checker_include_dir`` setting) or Python (run in the warm interpreter with
the three paths in ``sys.argv``; an exception it raises is a crash, not a wrong answer).

The checker runs in a sandbox of its own, after the program's runs: the program never shares a
scratch folder with the checker's binary or files, so it cannot rewrite either.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rewardhub.sandbox import (
    COMPILE_LIMITS,
    CheckerFailed,
    Job,
    Language,
    Limits,
    RunResult,
    SandboxPool,
    default_pool,
    language,
)

from .config import Config, stop_on_failure
from .testcases import CheckerSpec, StdioTest, TestCase

__all__ = ["CheckerFailed", "CheckerVerdict", "checker_session", "include_files", "judge_checker_run", "run_checker"]

CheckerVerdict = Literal["passed", "wrong_answer", "presentation_error"]
EXIT_VERDICTS: dict[int, CheckerVerdict] = {0: "passed", 1: "wrong_answer", 2: "presentation_error"}
ARGS = ("input.txt", "output.txt", "answer.txt")
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx")
MAX_INCLUDE_BYTES = 8 << 20


def judge_checker_run(run: RunResult) -> CheckerVerdict:
    """The verdict a checker's run gives (a pure function of it); CheckerFailed when it gives none."""
    crashed = (run.record or {}).get("crashed")
    if crashed:
        raise CheckerFailed(f"the checker crashed: {str(crashed)[:500]}")
    if run.verdict in ("ok", "runtime_error") and run.exit_code in EXIT_VERDICTS:
        return EXIT_VERDICTS[run.exit_code]
    if run.verdict == "sandbox_error":
        raise CheckerFailed(f"the sandbox failed while checking: {run.details.get('message', '')}")
    if run.exit_code is not None:
        why = f"exited with status {run.exit_code} (testlib: 3 means the checker itself failed)"
    else:
        why = {"timeout": "ran out of time", "memory": "ran out of memory", "output_limit": "wrote too much"}.get(
            run.verdict, f"was killed by {run.details.get('signal', 'a signal')}"
        )
    tail = run.stderr.strip()[-300:]
    raise CheckerFailed(f"the checker {why}; no judgement" + (f": {tail}" if tail else ""))


def include_files(folder: str | None) -> dict[str, str]:
    """The headers in the ``checker_include_dir`` setting (``testlib.h``), to compile beside a checker."""
    if not folder:
        return {}
    root = Path(folder)
    if not root.is_dir():
        raise CheckerFailed(f"checker_include_dir {folder!r} is not a folder")
    files, total = {}, 0
    for path in sorted(root.iterdir()):
        if path.is_file() and path.suffix in HEADER_SUFFIXES:
            text = path.read_text(encoding="utf-8", errors="replace")
            total += len(text)
            if total > MAX_INCLUDE_BYTES:
                raise CheckerFailed(f"checker_include_dir {folder!r} holds more than {MAX_INCLUDE_BYTES >> 20} MiB")
            files[path.name] = text
    return files


@dataclass
class CheckerSession:
    """A built checker in its own sandbox, judging one output at a time."""

    job: Job
    limits: Limits

    def judge(self, stdin: str, output: str, answer: str) -> CheckerVerdict:
        files = dict(zip(ARGS, (stdin, output, answer), strict=True))
        test = {"report_crash": True} if self.job.language.in_process else None
        run = self.job.run(b"", self.limits, test, files=files, args=ARGS)
        return judge_checker_run(run)


@contextmanager
def checker_session(
    pool: SandboxPool, lang_name: str, code: str, files: dict[str, str], limits: Limits
) -> Iterator[CheckerSession]:
    """Build the checker once (its compile errors are CheckerFailed), then judge with it."""
    chosen = _with_include_path(language(lang_name))
    with pool.job(chosen, code) as job:
        build_failure = job.setup(files, COMPILE_LIMITS)
        if build_failure is not None:
            reason = build_failure.details.get("message") or build_failure.stderr.strip()[-1000:]
            raise CheckerFailed(f"the checker does not build: {reason}")
        yield CheckerSession(job, limits)


def _with_include_path(lang: Language) -> Language:
    """C and C++ checkers find headers that came with them in their own folder, with <> as with ""."""
    if lang.compile and lang.compile[0] in ("gcc", "g++", "cc", "c++", "clang", "clang++"):
        return dataclasses.replace(lang, compile=(*lang.compile, "-I."))
    return lang


def run_checker(
    checker: CheckerSpec,
    tests: list[TestCase],
    outcomes: list[dict[str, Any]],
    config: Config,
    deadline: float,
) -> None:
    """Judge each pending output with the reference's checker, in a sandbox of its own.

    Outputs not judged by the deadline count as failed, as tests not run by then do.
    """
    pending = [
        (test, outcome) for test, outcome in zip(tests, outcomes, strict=True) if outcome["verdict"] == "pending"
    ]
    if not pending:
        return
    files = {**include_files(default_pool().settings.checker_include_dir), **checker.files}
    limits = Limits(timeout_s=config.checker_timeout_s, memory_mb=max(config.memory_mb, 256))
    failed = False
    with checker_session(default_pool(), checker.language, checker.code, files, limits) as session:
        for test, outcome in pending:
            output = outcome.pop("stdout_for_checker")
            if (failed and stop_on_failure(config)) or time.monotonic() > deadline:
                outcome.update(verdict="skipped", passed=False)
                continue
            assert isinstance(test, StdioTest)
            verdict = session.judge(test.stdin, output, test.expected)
            outcome.update(verdict=verdict, passed=verdict == "passed")
            failed = failed or verdict != "passed"
