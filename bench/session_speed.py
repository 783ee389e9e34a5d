"""Sessions against a real ``rewardhub serve``: what a stateful sandbox costs, and what it saves.

Four rows, one service, on the same cores:

1. **creations per second**: ``POST /v1/sessions`` one after another (each its own bubblewrap
   sandbox, server and kernel), against a one-off stateless ``/v1/sandbox/run`` of a trivial program;
2. **a trivial call in a warm session**: p50 and p99 of ``POST /v1/sessions/{id}/run`` with ``1``
   (goal: under 5 ms p50), against the same program through stateless ``/v1/sandbox/run``;
3. **a 10-call tool-use episode**: ten programs, each using what the ones before it defined, as ten
   calls of one session (created and deleted on the clock) against ten stateless ``/run_code`` calls (SandboxFusion's route, what
   verl's tool calls), each of which must re-run every program before it to rebuild the state;
4. **memory per idle session**: the proportional set size (PSS) the service's process tree gains per
   idle session, with how many idle sessions fit in this machine's available memory (goal: 200);
5. **the warm call through ``--api-workers 2``**: the same trivial call on a second service whose
   sessions live in the serve process above its two API workers (each call one hop more, over the
   session host's unix socket), against row 2's single-process p50;
6. **the warm call through a Celery session worker**: the same trivial call on a service in
   ``execution: celery`` (Redis at 127.0.0.1:6379 as broker and results), whose session is pinned to
   a ``rewardhub worker --queues sessions`` process (each call a task on that worker's own queue, its
   answer popped from a Redis list), against row 2's p50. Skipped, and said so, without Redis.

    python bench/session_speed.py [--sessions 20] [--calls 300] [--episodes 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_rows  # noqa: E402
from _serve import ROOT, start_service  # noqa: E402

EPISODE = [
    "import math\nvalues = [3, 1, 4, 1, 5, 9, 2, 6]",
    "total = sum(values)",
    "squares = [v * v for v in values]",
    "mean = total / len(values)",
    "var = sum((v - mean) ** 2 for v in values) / len(values)",
    "std = math.sqrt(var)",
    "ranked = sorted(values, reverse=True)",
    "top = ranked[:3]",
    "report = {'total': total, 'std': round(std, 3), 'top': top}",
    "print(report)",
]


def pss_kb(root: int) -> int:
    """PSS of a process and all its descendants, in kB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def available_kb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--episodes", type=int, default=5)
    args = parser.parse_args()
    env = {"REWARDHUB_LOG_LEVEL": "warning", "REWARDHUB_SESSION_CREATE_RATE_PER_S": "1000"}
    env["REWARDHUB_SESSION_CREATE_BURST"] = "1000"
    service, url = start_service(env=env, timeout_s=300)
    http = httpx.Client(base_url=url, timeout=120)
    try:
        # 4 first, on a fresh service: nothing else has started a sandbox yet
        before = pss_kb(service.pid)
        started = time.perf_counter()
        ids = [http.post("/v1/sessions", json={"runtime": "python"}).json()["session_id"] for _ in range(args.sessions)]
        create_s = time.perf_counter() - started
        for session in ids:
            assert http.post(f"/v1/sessions/{session}/run", json={"code": "1"}).json()["status"] == "ok"
        time.sleep(1.0)
        per_session_kb = (pss_kb(service.pid) - before) / len(ids)
        fit = int(available_kb() / per_session_kb) if per_session_kb > 0 else 0

        one_off = [
            timed(lambda: http.post("/v1/sandbox/run", json={"code": "1"}).raise_for_status()) for _ in range(20)
        ]
        p50, p99 = warm_calls(http, ids[0], args.calls)
        stateless = sorted(
            timed(lambda: http.post("/v1/sandbox/run", json={"code": "1"}).raise_for_status())
            for _ in range(args.calls // 3)
        )

        def session_episode() -> float:
            started = time.perf_counter()  # the session's creation is on the clock too
            session = http.post("/v1/sessions", json={"runtime": "python"}).json()["session_id"]
            for code in EPISODE:
                answer = http.post(f"/v1/sessions/{session}/run", json={"code": code}).json()
                assert answer["status"] == "ok", answer
            assert http.delete(f"/v1/sessions/{session}").status_code == 204  # no body
            return (time.perf_counter() - started) * 1000.0

        def stateless_episode() -> float:
            started = time.perf_counter()
            for k in range(1, len(EPISODE) + 1):
                body = {"code": "\n".join(EPISODE[:k]), "language": "python"}
                answer = http.post("/run_code", json=body).json()
                assert answer["status"] == "Success", answer
            return (time.perf_counter() - started) * 1000.0

        episodes = {"session": [], "stateless": []}
        for r in range(args.episodes):
            for side in ("session", "stateless") if r % 2 == 0 else ("stateless", "session"):
                episodes[side].append(session_episode() if side == "session" else stateless_episode())
        ours_episode, base_episode = statistics.median(episodes["session"]), statistics.median(episodes["stateless"])
        creations = len(ids) / create_s
        one_off_ms = statistics.median(one_off)
        rows = [
            {
                "case": f"session creations, {len(ids)} one after another",
                "baseline": "one stateless /v1/sandbox/run of a trivial program",
                "baseline_value": round(1000.0 / one_off_ms, 1),
                "ours_value": round(creations, 1),
                "unit": "per second",
                "ratio": round(creations / (1000.0 / one_off_ms), 2),
                "note": "a creation starts a sandbox of its own (bubblewrap, cgroups, server, kernel)",
            },
            {
                "case": "a trivial call in a warm session, p50",
                "baseline": "the same program through stateless /v1/sandbox/run",
                "baseline_value": round(stateless[len(stateless) // 2], 2),
                "ours_value": round(p50, 2),
                "unit": "ms/call",
                "ratio": round(stateless[len(stateless) // 2] / p50, 2),
                "note": f"p99 {p99:.2f} ms over {args.calls} calls, through HTTP; goal p50 < 5 ms: "
                + ("met" if p50 < 5 else "not met"),
            },
            {
                "case": "a 10-call tool-use episode (each call uses the state before it)",
                "baseline": "10 stateless /run_code calls, each re-running the programs before it",
                "baseline_value": round(base_episode, 1),
                "ours_value": round(ours_episode, 1),
                "unit": "ms/episode",
                "ratio": round(base_episode / ours_episode, 2),
                "note": f"median of {args.episodes}; the session's side includes creating and deleting it",
            },
            {
                "case": f"memory per idle session ({len(ids)} idle)",
                "baseline": "",
                "baseline_value": "",
                "ours_value": round(per_session_kb / 1024, 1),
                "unit": "MiB PSS/session",
                "ratio": None,
                "note": f"{fit} idle sessions fit in this machine's available memory now (goal: 200)",
            },
        ]
        rows.append(forwarded_call_row(args.calls, p50, env))
        rows.append(celery_call_row(args.calls, p50, env))
        path = write_rows("session_speed", rows)
        for row in rows:
            print(row)
        print(f"rows: {path}")
    finally:
        http.close()
        service.kill()
        service.wait()
    return 0


def warm_calls(http: httpx.Client, session: str, n_calls: int) -> tuple[float, float]:
    """p50 and p99 (ms) of a trivial call in ``session``, after 20 to warm it."""
    for _ in range(20):
        http.post(f"/v1/sessions/{session}/run", json={"code": "1"})
    calls = sorted(
        timed(lambda: http.post(f"/v1/sessions/{session}/run", json={"code": "1"}).raise_for_status())
        for _ in range(n_calls)
    )
    return calls[len(calls) // 2], calls[int(len(calls) * 0.99) - 1]


def forwarded_call_row(n_calls: int, single_p50: float, env: dict[str, str]) -> dict[str, object]:
    service, url = start_service("--api-workers", "2", "--workers", "1", env=env, timeout_s=300)
    try:
        with httpx.Client(base_url=url, timeout=120) as http:
            session = http.post("/v1/sessions", json={"runtime": "python"}).json()["session_id"]
            p50, p99 = warm_calls(http, session, n_calls)
    finally:
        service.kill()  # the serve process: its workers and sessions go with it
        service.wait()
    return {
        "case": "a trivial call in a warm session through --api-workers 2, p50",
        "baseline": "the same call with one API process holding the session (row 2)",
        "baseline_value": round(single_p50, 2),
        "ours_value": round(p50, 2),
        "unit": "ms/call",
        "ratio": round(single_p50 / p50, 2),
        "note": f"p99 {p99:.2f} ms over {n_calls} calls; the session lives in the serve process, one unix-socket hop "
        "from the worker that answers",
    }


def celery_call_row(n_calls: int, single_p50: float, env: dict[str, str]) -> dict[str, object]:
    case = "a trivial call in a warm session pinned to a Celery session worker (Redis), p50"
    baseline = "the same call with one API process holding the session (row 2)"
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        note = "skipped: no Redis at 127.0.0.1:6379"
        return {"case": case, "baseline": baseline, "baseline_value": round(single_p50, 2), "ours_value": "",
                "unit": "ms/call", "ratio": None, "note": note}  # fmt: skip
    prefix = f"bench-sessions-{uuid.uuid4().hex[:8]}-"
    celery = {**env, "REWARDHUB_EXECUTION": "celery",
              "REWARDHUB_BROKER_URL": f"redis://127.0.0.1:6379/0?queue_prefix={prefix}"}  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "rewardhub.cli", "worker", "--queues", "sessions"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **celery},
    )  # fmt: skip
    service, url = start_service(env=celery, timeout_s=300, ready="/healthz")  # no cpu worker: never /readyz
    try:
        with httpx.Client(base_url=url, timeout=120) as http:
            deadline = time.monotonic() + 120
            made = http.post("/v1/sessions", json={"runtime": "python"})
            while made.status_code == 503 and time.monotonic() < deadline:  # the worker is not up yet
                time.sleep(0.5)
                made = http.post("/v1/sessions", json={"runtime": "python"})
            p50, p99 = warm_calls(http, made.json()["session_id"], n_calls)
    finally:
        for process in (service, worker):
            process.kill()  # the worker's sandboxes go with it (--die-with-parent)
            process.wait()
    return {
        "case": case,
        "baseline": baseline,
        "baseline_value": round(single_p50, 2),
        "ours_value": round(p50, 2),
        "unit": "ms/call",
        "ratio": round(single_p50 / p50, 2),
        "note": f"p99 {p99:.2f} ms over {n_calls} calls; each call a task on the worker's own queue, its answer "
        "popped from a Redis list",
    }


if __name__ == "__main__":
    sys.exit(main())
