"""Accuracy of the ``math`` verifier against plain math-verify, on labelled cases, in one run.

    python bench/math_accuracy.py [--data FILE] [--agreement] [--errors]

1. ``math_equivalence_dev.jsonl`` (419 labelled gold/response pairs from the test suites of
   Math-Verify, inspect_ai, NeMo-Skills and lighteval) is the DEVELOPMENT set: our verifier was
   tuned on it, so its numbers flatter us, and the output says so. Math-verify 0.9.0 is called
   exactly as its own tests call it (``compare_strings`` of its ``tests/test_all.py``:
   ``parse(text, [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()])`` on
   gold and response as written, nothing wrapped, then ``verify(gold, pred, float_rounding=
   precision, strict=..., allow_set_relation_comp=...)``), with the extraction targets and
   settings each case's ``harness`` field names; our config gets the same settings.
2. ``--agreement``: precision and recall on each labelled set outside the dev set, separately:
   Math-Verify 0.9.0's own test literals (tests/data, with each test's settings), GPT-3 solutions
   to GSM8K (``is_correct``) and Qwen2.5-Math chain-of-thought on MATH (Qwen's own grader's labels),
   math-verify again called as its tests call it. rewardhub is measured in both readings: its
   default, and ``reading: "math_verify"`` (Math-Verify's verdict, asked for by the request).

Data come from ``--data-dir`` (or ``$REWARDHUB_DATA_DIR``); rows for the benchmark table
(docs/benchmarks.md) go to bench/results/math_accuracy.json.

The baseline runs in a child process with a memory limit, restarted when a case hangs it
(``2^{2^{2^{49}}}`` does); ours runs in this process, as a unit test would.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import resource
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import add_data_dir, data_file, write_rows  # noqa: E402

BASELINE_CASE_TIMEOUT_S = 10.0
BASELINE_MEMORY_BYTES = 4 * 1024**3


# -- our verifier ----------------------------------------------------------------------------------


def our_config(harness: dict[str, Any]) -> dict[str, Any]:
    """The settings a case's label assumed, in our config's terms."""
    config: dict[str, Any] = {}
    if harness.get("harness", "").startswith("math_verify.compare_strings"):
        if "expr" not in harness.get("match_types", ["latex", "expr"]):
            config["bare_numbers"] = False
        if "precision" in harness:
            config["decimal_places"] = harness["precision"]
        if "strict" in harness:
            # strict=True still equates W(n) = 1 with W(x) = 1 (its test_numina_cases) and keeps f(x) apart
            # from f(y) (test_strict): our "bound" renaming, as tests/verifiers/math/math_verify_literals.py maps it
            config["rename_variables"] = "bound" if harness["strict"] else "always"
        if "allow_set_relation_comp" in harness:
            config["relations_as_sets"] = harness["allow_set_relation_comp"]
    return config


def score_ours(
    cases: list[dict[str, Any]], reading: str = "rewardhub"
) -> tuple[list[bool], list[dict[str, Any]], float]:
    from rewardhub.types import Sample
    from rewardhub.verifiers.math.verifier import MathVerifier

    verifier = MathVerifier()
    predictions, results = [], []
    started = time.perf_counter()
    for case in cases:
        config = MathVerifier.Config(reading=reading, **our_config(case.get("harness", {})))
        result = verifier.score(Sample(response=case["response"], reference=case["gold"]), config)
        predictions.append(result.status == "ok" and result.score == 1.0)
        results.append(result.model_dump())
    return predictions, results, time.perf_counter() - started


# -- plain math-verify -----------------------------------------------------------------------------


def _baseline_one(case: dict[str, Any]) -> bool:
    """math-verify's own test helper (``compare_strings`` in its tests/test_all.py), verbatim in effect."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    harness = case.get("harness", {})
    kinds = harness.get("match_types", ["latex", "expr"]) if "compare_strings" in harness.get("harness", "") else None
    targets = [
        LatexExtractionConfig(boxed_match_priority=0) if kind == "latex" else ExprExtractionConfig()
        for kind in kinds or ["latex", "expr"]
    ]
    gold = parse(case["gold"], targets)
    answer = parse(case["response"], targets)
    return bool(
        verify(
            gold,
            answer,
            float_rounding=harness.get("precision", 6),
            strict=harness.get("strict", True),
            allow_set_relation_comp=harness.get("allow_set_relation_comp", False),
        )
    )


def _baseline_worker(connection: Any, cases: list[dict[str, Any]], start: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (BASELINE_MEMORY_BYTES, BASELINE_MEMORY_BYTES))
    logging.disable(logging.CRITICAL)
    for i in range(start, len(cases)):
        try:
            verdict = _baseline_one(cases[i])
        except (Exception, MemoryError):
            verdict = False
        connection.send((i, verdict))
    connection.close()


def score_baseline(cases: list[dict[str, Any]]) -> tuple[list[bool], float, int]:
    """Plain math-verify in a child process; a case that hangs it counts as 'no' and the child
    restarts after it."""
    context = multiprocessing.get_context("fork")
    verdicts: dict[int, bool] = {}
    hung = 0
    started = time.perf_counter()
    position = 0
    while position < len(cases):
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=_baseline_worker, args=(sender, cases, position), daemon=True)
        child.start()
        sender.close()
        while position < len(cases):
            if not receiver.poll(BASELINE_CASE_TIMEOUT_S):
                child.kill()
                verdicts[position] = False
                hung += 1
                position += 1
                break
            try:
                index, verdict = receiver.recv()
            except EOFError:  # the child died (memory limit): that case is a 'no'
                verdicts[position] = False
                position += 1
                break
            verdicts[index] = verdict
            position = index + 1
        child.join(timeout=5)
    return [verdicts[i] for i in range(len(cases))], time.perf_counter() - started, hung


# -- reporting -------------------------------------------------------------------------------------


def metrics(predictions: Iterable[bool], labels: Iterable[bool]) -> dict[str, float]:
    pairs = list(zip(predictions, labels, strict=True))
    tp = sum(p and y for p, y in pairs)
    fp = sum(p and not y for p, y in pairs)
    fn = sum(not p and y for p, y in pairs)
    tn = len(pairs) - tp - fp - fn
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "accuracy": (tp + tn) / len(pairs) if pairs else 1.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
    }


def _row(name: str, m: dict[str, float], seconds: float) -> str:
    return (
        f"{name:<22} precision {m['precision']:.3f}  recall {m['recall']:.3f}  accuracy {m['accuracy']:.3f}  "
        f"(tp {m['tp']}, fp {m['fp']}, fn {m['fn']}, tn {m['tn']})  {seconds:.1f} s"
    )


def run_dev_set(path: Path, show_errors: bool, rows: list[dict[str, Any]]) -> None:
    cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    labels = [bool(c["expected"]) for c in cases]
    baseline, baseline_s, hung = score_baseline(cases)
    ours, results, ours_s = score_ours(cases)
    read_as_theirs, _, theirs_s = score_ours(cases, reading="math_verify")
    print(f"{path.name}: {len(cases)} labelled cases ({sum(labels)} equivalent)")
    print(
        "  THIS IS THE DEVELOPMENT SET: our verifier was tuned on these cases; --agreement scores real outputs outside it"
    )
    theirs_m, ours_m = metrics(baseline, labels), metrics(ours, labels)
    print(_row("math-verify (own tests)", theirs_m, baseline_s) + (f"  [{hung} hung and were killed]" if hung else ""))
    print(_row("rewardhub math", ours_m, ours_s))
    print(_row("rewardhub math_verify", metrics(read_as_theirs, labels), theirs_s))
    both = sum(x == y for x, y in zip(baseline, ours, strict=True)) / len(cases)
    print(f"verdict agreement, rewardhub vs math-verify: {both:.1%}")
    rows.append(
        {
            "case": f"{path.name}: {len(cases)} labelled cases (DEVELOPMENT set, tuned on)",
            "baseline": "math-verify 0.9.0 as its own tests call it",
            "baseline_value": f"P {theirs_m['precision']:.3f} / R {theirs_m['recall']:.3f}",
            "ours_value": f"P {ours_m['precision']:.3f} / R {ours_m['recall']:.3f}",
            "unit": "precision / recall",
            "ratio": None,
            "note": f"verdicts agree {both:.1%}",
        }
    )
    errors = [(i, c, r) for i, (c, r, p, y) in enumerate(zip(cases, results, ours, labels, strict=True)) if p != y]
    print(f"\nour remaining errors: {len(errors)}")
    for i, case, result in errors:
        kind = "FALSE POSITIVE" if not case["expected"] else "false negative"
        details = result["details"]
        print(f"  #{i} {kind} [{case['harness'].get('harness')} {case['harness'].get('test', '')}]")
        if show_errors:
            print(f"     gold     {case['gold'][-150:]!r}")
            print(f"     response {case['response'][-150:]!r}")
        print(
            f"     read gold {details.get('gold')!r}, answer {details.get('answer')!r} "
            f"via {details.get('anchor')}: {details.get('reason')} {result.get('error') or ''}"
        )


LITERALS = Path(__file__).resolve().parents[1] / "tests" / "data" / "math_verify_0.9.0_literals.jsonl"

# Labelled sets looked for and not measured here, and why (printed with the results).
NOT_MEASURED = {
    "mario_math_testset_annotation.json": "the MATH test set's final answers with an answer type: no response, "
    "no correctness label",
    "VerifyBench-Hard (human-labelled completions, hard math items)": "neither in this repository nor in the "
    "shared data folder",
}


# Who labelled each set: a label is what the numbers are measured against, right or not.
LABELLED_BY = {
    "math-verify literals": "Math-Verify's authors (the expected value each test asserts, its own parser's quirks included)",
    "gsm8k": "OpenAI's is_correct (the final number against the gold)",
    "qwen-math": "Qwen2.5-Math's own rule grader, not a person: its 'no' to '4:30 \\text{ p.m.}' for the gold "
    "'4:30p..' and to '10000' for '10{,}000' counts against whoever says yes",
}


def labelled_sets(data_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """The labelled sets outside the dev set, each a list of ``{"gold", "response", "expected", "harness"}``:
    Math-Verify 0.9.0's own test literals (with the settings each test passes), GPT-3 solutions to
    GSM8K (``is_correct``) and Qwen2.5-Math chain-of-thought on MATH (Qwen's own grader's labels)."""
    sets: dict[str, list[dict[str, Any]]] = {}
    sets["math-verify literals"] = [json.loads(line) for line in LITERALS.read_text().splitlines() if line.strip()]
    gsm8k = []
    for line in data_file(data_dir, "gsm8k_example_model_solutions.jsonl").read_text().splitlines():
        record = json.loads(line)
        gold = record["ground_truth"].rsplit("A:", 1)[-1].strip()
        for key in ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"):
            gsm8k.append(
                {"gold": gold, "response": record[key]["solution"], "expected": bool(record[key]["is_correct"])}
            )
    sets["gsm8k"] = gsm8k
    qwen = []
    for line in data_file(data_dir, "qwen25math_math_cot_100.jsonl").read_text().splitlines():
        record = json.loads(line)
        for response, label in zip(record["code"], record["score"], strict=True):
            qwen.append({"gold": record["gt"], "response": response, "expected": bool(label)})
    sets["qwen-math"] = qwen
    for cases in sets.values():
        for case in cases:
            case.setdefault("harness", {})
    return sets


def run_labelled_sets(data_dir: Path, rows: list[dict[str, Any]]) -> None:
    """Precision and recall on each labelled set, separately: math-verify as its tests call it,
    rewardhub's default reading and its math_verify reading."""
    for name, cases in labelled_sets(data_dir).items():
        labels = [bool(c["expected"]) for c in cases]
        baseline, baseline_s, hung = score_baseline(cases)
        ours, results, ours_s = score_ours(cases)
        read_as_theirs, _, theirs_s = score_ours(cases, reading="math_verify")
        print(f"{name}: {len(cases)} labelled cases ({sum(labels)} labelled right; not the dev set)")
        print(f"  labelled by {LABELLED_BY[name]}")
        measured = {
            "math-verify": metrics(baseline, labels),
            "rewardhub": metrics(ours, labels),
            "rewardhub math_verify": metrics(read_as_theirs, labels),
        }
        print(
            _row("math-verify (own tests)", measured["math-verify"], baseline_s) + (f"  [{hung} hung]" if hung else "")
        )
        print(_row("rewardhub", measured["rewardhub"], ours_s))
        print(_row("rewardhub math_verify", measured["rewardhub math_verify"], theirs_s))
        both = sum(x == y for x, y in zip(baseline, ours, strict=True)) / len(cases)
        same = sum(x == y for x, y in zip(baseline, read_as_theirs, strict=True)) / len(cases)
        print(f"  verdicts agree with math-verify: reading rewardhub {both:.1%}, reading math_verify {same:.1%}")
        for reading, value in (("rewardhub", "rewardhub"), ("math_verify", "rewardhub math_verify")):
            m, theirs = measured[value], measured["math-verify"]
            rows.append(
                {
                    "case": f"{name}: {len(cases)} labelled cases (not the dev set), reading {reading}",
                    "baseline": "math-verify 0.9.0 as its own tests call it",
                    "baseline_value": f"P {theirs['precision']:.3f} / R {theirs['recall']:.3f}",
                    "ours_value": f"P {m['precision']:.3f} / R {m['recall']:.3f}",
                    "unit": "precision / recall",
                    "ratio": None,
                    "note": f"accuracy {m['accuracy']:.4f} vs {theirs['accuracy']:.4f}; verdicts agree "
                    f"{both if reading == 'rewardhub' else same:.1%}",
                }
            )
        _print_disagreements(cases, results, ours, labels)
        print()
    for name, why in NOT_MEASURED.items():
        print(f"not measured: {name}: {why}")


def _print_disagreements(
    cases: list[dict[str, Any]], results: list[dict[str, Any]], ours: list[bool], labels: list[bool]
) -> None:
    """Our default reading's disagreements with the labels, grouped by what was read."""
    grouped: dict[tuple[bool, str, str], int] = {}
    for case, result, predicted, label in zip(cases, results, ours, labels, strict=True):
        if predicted != label:
            key = (label, str(case["gold"])[:40], str(result["details"].get("answer"))[:60])
            grouped[key] = grouped.get(key, 0) + 1
    for (label, gold, answer), count in grouped.items():
        print(f"   {count}x labelled {label!s:<5} gold {gold!r:<16} ours read {answer!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_dir(parser)
    parser.add_argument("--data", type=Path, help="labelled cases (default: DATA_DIR/math_equivalence_dev.jsonl)")
    parser.add_argument(
        "--agreement",
        action="store_true",
        help="also measure precision and recall on the labelled sets outside the dev set, each separately",
    )
    parser.add_argument("--errors", action="store_true", help="print gold and response of each remaining error")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    rows: list[dict[str, Any]] = []
    run_dev_set(args.data or data_file(args.data_dir, "math_equivalence_dev.jsonl"), args.errors, rows)
    if args.agreement:
        print()
        run_labelled_sets(args.data_dir, rows)
    write_rows("math_accuracy", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
