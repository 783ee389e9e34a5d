"""Which JSON codec the service's hot path uses, chosen by measurement on real request bodies.

    python bench/json_codecs.py --data-dir DIR [--batch 256] [--repeats 30]

A ``/v1/score`` body of ``--batch`` real chain-of-thought samples goes in, the matching
``ScoreResponse`` comes out. Compared, best of ``--repeats`` (alternating), microseconds per sample:

- in: pydantic's Rust parser validating straight from bytes (``model_validate_json``), against
  orjson or msgspec parsing to Python objects followed by pydantic validation of those;
- out: pydantic's ``model_dump_json`` against ``model_dump`` followed by orjson or msgspec; and,
  for the plain-dict answers (``/get_reward``, slime), stdlib ``json.dumps`` against orjson and msgspec.

Every side must produce the same objects / the same JSON document (checked, printed).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import add_data_dir, data_file, write_rows  # noqa: E402

from rewardhub.api.schemas import ScoreRequest, ScoreResponse  # noqa: E402
from rewardhub.types import Result  # noqa: E402


def best_us(sides: dict[str, Callable[[], object]], n: int, repeats: int) -> dict[str, float]:
    best = dict.fromkeys(sides, float("inf"))
    for r in range(repeats):
        for name in sides if r % 2 == 0 else reversed(list(sides)):
            started = time.perf_counter()
            sides[name]()
            best[name] = min(best[name], (time.perf_counter() - started) * 1e6 / n)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_dir(parser)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    samples = []
    for line in data_file(args.data_dir, "qwen25math_math_cot_100.jsonl").read_text().splitlines():
        record = json.loads(line)
        samples += [{"id": str(len(samples)), "response": r, "reference": record["gt"]} for r in record["code"]]
    raw = json.dumps({"verifier": "math", "samples": samples[: args.batch]}).encode()
    n = args.batch
    decode = msgspec.json.Decoder()
    ins = {
        "pydantic model_validate_json": lambda: ScoreRequest.model_validate_json(raw),
        "orjson.loads + model_validate": lambda: ScoreRequest.model_validate(orjson.loads(raw)),
        "msgspec decode + model_validate": lambda: ScoreRequest.model_validate(decode.decode(raw)),
    }
    parsed = {name: f() for name, f in ins.items()}
    same_in = len({p.model_dump_json() for p in parsed.values()}) == 1  # type: ignore[attr-defined]
    details = {"gold": "42", "extracted": "42", "anchor": "boxed", "answer": "42", "reason": "equivalent"}
    results = [Result(id=str(i), score=1.0, details=details, elapsed_ms=0.25) for i in range(n)]
    answer = ScoreResponse(results=results, elapsed_ms=12.5)
    encode = msgspec.json.Encoder()
    outs = {
        "pydantic model_dump_json": lambda: answer.model_dump_json().encode(),
        "model_dump + orjson.dumps": lambda: orjson.dumps(answer.model_dump()),
        "model_dump + msgspec encode": lambda: encode.encode(answer.model_dump()),
    }
    same_out = len({json.dumps(json.loads(f())) for f in outs.values()}) == 1
    plain = {"rewards": [r.score for r in results], "scores": [r.score for r in results], "extra_logs": {}}
    dicts = {
        "json.dumps (starlette JSONResponse)": lambda: json.dumps(plain, separators=(",", ":")).encode(),
        "orjson.dumps": lambda: orjson.dumps(plain),
        "msgspec encode": lambda: encode.encode(plain),
    }
    rows = []
    for title, sides, same in (("in", ins, same_in), ("out", outs, same_out), ("plain dict out", dicts, True)):
        timings = best_us(sides, n, args.repeats)
        winner = min(timings, key=timings.__getitem__)
        print(f"{title} ({n} samples; identical results: {same})")
        for name, us in timings.items():
            print(f"  {name:<38} {us:7.2f} us/sample{'   <- fastest' if name == winner else ''}")
        first = next(iter(timings))
        rows.append(
            {
                "case": f"JSON {title}, {n} real CoT samples",
                "baseline": first,
                "baseline_value": round(timings[first], 2),
                "ours_value": round(timings[winner], 2),
                "unit": "us/sample",
                "ratio": round(timings[first] / timings[winner], 2),
                "note": f"fastest: {winner}; identical output: {same}",
            }
        )
    write_rows("json_codecs", rows)


if __name__ == "__main__":
    main()
