"""Cost of judging tool calls: ``tool_call`` with BFCL possible answers against BFCL's own AST checker.

    python bench/tool_call_vs_bfcl.py [--rounds 9] [--repeats 200]

The cases are the table of ``tests/verifiers/test_tool_call_bfcl.py`` (simple, multiple and
parallel calls; types, strings, lists, dicts; right and wrong), each call as an OpenAI
``tool_calls`` turn with JSON-string arguments, as a trainer sends it.

(a) BFCL (``bfcl-eval``, the checker of its released package): decode the turn's calls the way its
    function-calling handlers do (``json.loads`` of each call's arguments into ``[{name: args}]``),
    then ``ast_checker`` in the case's category.
(b) rewardhub: ``ToolCallVerifier().score(sample, config)`` on the same turn, with the function
    descriptions in the reference; the sample is built beforehand, as the service's edge builds it.

Both run in this one process on one core, in alternating rounds (a noisy neighbour penalises both
alike); each round times every case ``--repeats`` times. Prints the median over rounds of the
mean time per case for each side, their ratio, and how many verdicts agree (the one case known to
differ is named in the test: BFCL matches parallel calls greedily, we find a full matching).
The same figures go to ``bench/results/tool_call_vs_bfcl.json``, the row of the benchmark table
(``bench/run_all.py``), whose ratio is BFCL's time over ours (above 1: ours is faster).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "verifiers"))
from _common import write_rows  # noqa: E402
from bfcl_checker import load  # noqa: E402
from test_tool_call_bfcl import CASES, openai_turn  # noqa: E402

from rewardhub.types import Sample  # noqa: E402
from rewardhub.verifiers.tool_call import ToolCallVerifier  # noqa: E402


def bfcl_side():
    checker = load()
    from bfcl_eval.constants.enums import Language

    prepared = []
    for _, functions, answer, calls, _ in CASES:
        turn = openai_turn(calls)
        category = "parallel" if len(answer) > 1 else ("multiple" if len(functions) > 1 else "simple")
        prepared.append((functions, turn, answer, category))

    def judge(index: int) -> bool:
        functions, turn, answer, category = prepared[index]
        decoded = [{c["function"]["name"]: json.loads(c["function"]["arguments"])} for c in turn["tool_calls"]]
        result = checker.ast_checker(functions, decoded, answer, Language.PYTHON, category, "gpt-4o-2024-11-20-FC")
        return bool(result["valid"])

    return judge


def our_side():
    verifier, config = ToolCallVerifier(), ToolCallVerifier.Config()
    samples = [
        Sample.model_validate(
            {
                "messages": [{"role": "user", "content": "q"}, openai_turn(calls)],
                "reference": {"possible_answer": answer, "functions": functions},
            }
        )
        for _, functions, answer, calls, _ in CASES
    ]

    def judge(index: int) -> bool:
        return verifier.score(samples[index], config).score == 1.0

    return judge


def time_side(judge, repeats: int) -> float:
    """Mean seconds per case over ``repeats`` passes through all cases."""
    start = time.perf_counter()
    for _ in range(repeats):
        for index in range(len(CASES)):
            judge(index)
    return (time.perf_counter() - start) / (repeats * len(CASES))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    sides = {"bfcl-eval ast_checker": bfcl_side(), "rewardhub tool_call": our_side()}
    verdicts = {name: [judge(i) for i in range(len(CASES))] for name, judge in sides.items()}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_index in range(args.rounds):
        order = list(sides) if round_index % 2 == 0 else list(sides)[::-1]
        for name in order:
            times[name].append(time_side(sides[name], args.repeats))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name:24s} {value * 1e6:8.1f} us per case (median of {args.rounds} rounds)")
    ours, theirs = medians["rewardhub tool_call"], medians["bfcl-eval ast_checker"]
    print(f"ratio rewardhub / bfcl: {ours / theirs:.2f}")
    a, b = verdicts.values()
    differ = [CASES[i][0] for i in range(len(CASES)) if a[i] != b[i]]
    print(f"verdict agreement: {len(CASES) - len(differ)}/{len(CASES)}; differ: {differ}")
    write_rows(
        "tool_call_vs_bfcl",
        [
            {
                "case": f"{len(CASES)} tool-call cases (simple, multiple, parallel), one OpenAI tool_calls turn each",
                "baseline": "bfcl-eval ast_checker, the turn decoded as its FC handlers do",
                "baseline_value": round(theirs * 1e6, 1),
                "ours_value": round(ours * 1e6, 1),
                "unit": "us/case",
                "ratio": round(theirs / ours, 2),
                "note": f"ratio = BFCL / ours time; verdicts agree on {len(CASES) - len(differ)} of {len(CASES)}"
                + (f" (differ: {', '.join(map(str, differ))})" if differ else ""),
            }
        ],
    )


if __name__ == "__main__":
    main()
