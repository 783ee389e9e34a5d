"""The reward cache on a judge: GRPO groups from the bundled trainer's own dumps, scored with and without it.

Late in a GRPO run a group of 16 holds many identical completions, and the same prompts come back
step after step. This bench takes the samples of every dumped step of a run of
``examples/toy_addition.yaml`` (``debug.dump: true``; the run is made here when ``--dumps`` is not
given), and scores them step by step, as the trainer sends them, with the ``judge`` verifier
(``verify`` mode) against a local OpenAI-compatible judge endpoint that counts its calls and
takes ``--judge-ms`` per call (a stand-in for a model's latency; it says True when the answer
equals the ground truth it is shown). Both sides run through the service's own scorer and local
pools, one fresh in-process cache for the cached side:

1. **no cache**: the judge's own dedupe only: identical judge prompts within one micro-batch
   window are sent once (the judge is shown the final answer, so many different responses make
   one prompt), empty responses score 0 without a call;
2. **cache**: ``"cache": true``: identical samples of a step are judged once, and a sample judged
   at an earlier step is served.

The row reports model calls on each side (the figure that costs money), the wall time, and
whether every verdict is the same on both sides.

    python bench/reward_cache.py [--dumps RUN/debug] [--steps 300] [--every 10] [--judge-ms 20]

Measured 2026-12-01 on 2 shared cores, on the dumps of steps 10-280 of a 300-step run: 14336
samples, 6660 judge calls without the cache, 3992 with it (1.67x fewer), 159 s -> 89 s, every
verdict identical.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, write_rows  # noqa: E402

from rewardhub.execution.local import LocalExecutor  # noqa: E402
from rewardhub.registry import Registry  # noqa: E402
from rewardhub.scoring import Scorer  # noqa: E402
from rewardhub.settings import Settings  # noqa: E402
from rewardhub.types import Sample, VerifierRef  # noqa: E402

GOLD = re.compile(r"<ground_truth_answer>(.*?)</ground_truth_answer>", re.S)
ANSWER = re.compile(r"<model_answer>(.*?)</model_answer>", re.S)


class CountingJudge:
    """An OpenAI-compatible chat endpoint: True when the shown answer equals the shown ground truth."""

    def __init__(self, latency_s: float) -> None:
        self.calls = 0
        lock = threading.Lock()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    judge.calls += 1
                time.sleep(latency_s)
                prompt = "\n".join(m["content"] for m in body["messages"])
                gold, answer = GOLD.search(prompt), ANSWER.search(prompt)
                same = bool(gold and answer and gold.group(1).strip() == answer.group(1).strip())
                message = {"role": "assistant", "content": "True" if same else "False"}
                data = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def make_dumps(steps: int, every: int, out: Path) -> Path:
    command = [
        sys.executable,
        "-m",
        "rewardhub.trainer.cli",
        str(ROOT / "examples" / "toy_addition.yaml"),
        f"steps={steps}",
        "debug.dump=true",
        f"debug.every={every}",
        f"output_dir={out}",
        f"eval.every={steps * 10}",
        "logging.progress=false",
    ]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return out / "debug"


def read_steps(folder: Path) -> list[list[Sample]]:
    steps = []
    for path in sorted(folder.glob("step_*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        steps.append(
            [
                Sample(
                    id=f"{r['step']}-{r['index']}",
                    prompt=r["prompt"],
                    response=r["response"],
                    reference=r["reference"],
                    group=str(r["group"]),
                )
                for r in rows
            ]
        )
    return steps


async def score_run(steps: list[list[Sample]], judge_url: str, cache: bool) -> tuple[list[Any], float]:
    settings = Settings(workers=1, cache_backend="memory", cache_max_entries=1_000_000, model_batch_size=64)
    registry = Registry.load()
    executor = LocalExecutor(settings, registry)
    await executor.start()
    spec = VerifierRef(
        name="judge",
        config={
            "model": "judge",
            "base_url": judge_url,
            "api_key_env": None,
            "max_concurrency": 16,
        },
    )
    try:
        scorer = Scorer(registry, executor, settings)
        started = time.perf_counter()
        verdicts = []
        for samples in steps:
            results = await scorer.score(samples, spec, cache=cache)
            verdicts += [(r.id, r.score, r.status) for r in results]
        return verdicts, time.perf_counter() - started
    finally:
        await executor.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dumps", type=Path, help="a run's debug/ folder (default: make one with the toy trainer)")
    parser.add_argument("--steps", type=int, default=300, help="steps of the toy run made without --dumps")
    parser.add_argument("--every", type=int, default=10, help="dump every this many steps")
    parser.add_argument("--judge-ms", type=float, default=20.0, help="latency of each judge call")
    args = parser.parse_args()
    folder = args.dumps or make_dumps(args.steps, args.every, Path(tempfile.mkdtemp(prefix="reward_cache_")))
    steps = read_steps(folder)
    n = sum(len(s) for s in steps)
    distinct_in_step = sum(len({(x.prompt, x.response, x.reference) for x in s}) for s in steps)
    distinct = len({(x.prompt, x.response, x.reference) for s in steps for x in s})
    sides = {}
    for name, cache in (("no cache", False), ("cache", True)):
        judge = CountingJudge(args.judge_ms / 1000)
        verdicts, seconds = asyncio.run(score_run(steps, judge.url, cache))
        judge.server.shutdown()
        sides[name] = {"calls": judge.calls, "seconds": seconds, "verdicts": verdicts}
        print(f"{name}: {judge.calls} judge calls for {n} samples, {seconds:.1f} s", flush=True)
    same = sides["no cache"]["verdicts"] == sides["cache"]["verdicts"]
    base, ours = sides["no cache"], sides["cache"]
    case = f"judge (verify) on {n} samples: {len(steps)} dumped steps of toy_addition, groups of 16"
    note = (
        f"distinct samples {distinct_in_step} within steps, {distinct} across the run; the baseline already sends "
        "identical judge prompts of one micro-batch once; "
        f"{args.judge_ms:g} ms per judge call; wall {base['seconds']:.1f} s -> {ours['seconds']:.1f} s; "
        f"verdicts identical: {same}"
    )
    rows = [
        {
            "case": case,
            "baseline": "the same scorer without the cache",
            "baseline_value": base["calls"],
            "ours": "cache: true (memory)",
            "ours_value": ours["calls"],
            "unit": "judge calls",
            "ratio": round(base["calls"] / max(ours["calls"], 1), 3),
            "note": note,
        }
    ]
    print(json.dumps(rows, indent=1))
    write_rows("reward_cache", rows)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
