"""Summarise runs of examples/smollm2_addition.yaml: the curves as markdown tables, and what the
responses say, read from the debug dumps (``debug.dump: true``) independently of the service.

The service's verdicts (``math`` for the reward, ``exact`` on the last number for the accuracy)
are what the trainer logged; this script reads the responses a second way, with its own regular
expressions, so a verdict that drifts from the text shows up as two columns that disagree:

- ``has_sum``: the sum appears in the response as a whole number ("79", "= 79.", not "179");
- ``last_is_sum``: the last number in the response is the sum (what ``exact``/``last_number`` pays);
- ``bare``: the response is the number and nothing else (a final "." allowed), as the prompt asks;
- ``restates``: the response writes the question's operation, "a + b" or "b + a";
- ``no_number``: the response holds no digit at all;
- ``carry`` / ``no_carry`` (greedy): the service's accuracy on the pairs whose units digits carry
  (25 of the 64 held-out pairs) and on the others;
- ``paid_wrong`` / ``unpaid_right``: the reward (``math``) paid a response whose last number is not
  the sum / paid nothing for one whose last number is (a hack, a false negative).

A run of ``examples/smollm2_addition_prime.yaml`` gets a second per-step table: its dense
(implicit PRM) rewards as the service returned them (``reward/dense_*``) and the seconds spent
writing the policy for the service. ``--json`` keeps the entries of runs not named this time.

    python bench/trainer_real_model_summary.py runs/b_seed0_tis runs/b_seed1_tis ... --json bench/results/x.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path
from typing import Any

OPERANDS = re.compile(r"What is (\d+) \+ (\d+)\?")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?![\d])")

STEP_COLUMNS = [
    ("reward", "reward/mean"),
    ("entropy", "actor/entropy"),
    ("len", "response/length_mean"),
    ("clip", "response/clip_frac"),
    ("zero-var groups", "groups/zero_variance_frac"),
    ("mm_kl", "rollout/mismatch_kl"),
    ("lr_mean", "rollout/log_ratio_mean"),
    ("abs lr mean", "rollout/log_ratio_abs_mean"),
    ("abs lr max", "rollout/log_ratio_abs_max"),
    ("is_max", "rollout/is_ratio_max"),
    ("tis_w", "rollout/tis_weight_mean"),
    ("tis_w_min", "rollout/tis_weight_min"),
    ("tis_w_max", "rollout/tis_weight_max"),
    ("trunc", "rollout/tis_truncated_frac"),
    ("s/step", "time/step_s"),
]
DENSE_COLUMNS = [
    ("dense/token mean", "reward/dense_token_mean"),
    ("dense/token abs mean", "reward/dense_token_abs_mean"),
    ("dense/token min", "reward/dense_token_min"),
    ("dense/token max", "reward/dense_token_max"),
    ("dense/sum mean", "reward/dense_sum_mean"),
    ("dense/sum std", "reward/dense_sum_std"),
    ("dense frac", "reward/dense_frac"),
    ("spread", "reward/dense_misaligned_frac"),
    ("adv std", "actor/advantage_std"),
    ("publish s", "time/publish_s"),
    ("reward wait s", "time/reward_s"),
]
EVAL_COLUMNS = [
    ("greedy accuracy", "eval/metric/accuracy/greedy_mean"),
    ("sampled accuracy", "eval/metric/accuracy/mean"),
    ("greedy `math` reward", "eval/greedy_reward_mean"),
    ("sampled `math` reward", "eval/reward_mean"),
    ("length", "eval/response_length_mean"),
]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def prompt_text(prompt: Any) -> str:
    if isinstance(prompt, list):
        return " ".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))
    return str(prompt)


def reading(prompt: Any, response: str) -> dict[str, bool]:
    """The five readings of one response to "What is a + b?"."""
    a, b = (int(x) for x in OPERANDS.search(prompt_text(prompt)).groups())
    total, numbers = a + b, [int(n) for n in NUMBER.findall(response)]
    restate = re.compile(rf"(?<!\d){a}\s*\+\s*{b}(?!\d)|(?<!\d){b}\s*\+\s*{a}(?!\d)")
    return {
        "has_sum": total in numbers,
        "last_is_sum": bool(numbers) and numbers[-1] == total,
        "bare": re.fullmatch(rf"\s*{total}\s*\.?\s*", response) is not None,
        "restates": restate.search(response) is not None,
        "no_number": not numbers,
    }


def reward_score(row: dict[str, Any]) -> float:
    """The reward's verdict in a training dump row or an eval dump row."""
    return float(row["reward_score"] if "reward_score" in row else row["reward"]["score"])


def fractions(rows: list[dict[str, Any]]) -> dict[str, float]:
    readings = []
    for r in rows:
        x = reading(r["prompt"], r["response"])
        x["paid_wrong"] = reward_score(r) > 0 and not x["last_is_sum"]
        x["unpaid_right"] = reward_score(r) == 0 and x["last_is_sum"]
        readings.append(x)
    return {key: round(statistics.fmean(x[key] for x in readings), 4) for key in readings[0]} if readings else {}


def dense_reading(rows: list[dict[str, Any]]) -> dict[str, float]:
    """PRIME's dense rewards read from a step's dump: the mean sum of a sample's dense rewards over
    the samples the reward paid and over the others, and the mean |advantage| per token in groups
    whose outcomes are all equal (``flat``: only the dense rewards move them) and in the others."""
    split: dict[str, list[float]] = {
        "dense_sum_paid": [],
        "dense_sum_unpaid": [],
        "adv_flat": [],
        "adv_informative": [],
    }
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
        if r.get("reward_steps") and r.get("reward_status") == "ok":
            split["dense_sum_paid" if reward_score(r) > 0 else "dense_sum_unpaid"].append(sum(r["reward_steps"]))
    for members in groups.values():
        flat = len({reward_score(r) for r in members}) == 1
        for r in members:
            if r.get("in_loss"):
                split["adv_flat" if flat else "adv_informative"] += [abs(a) for a in r["advantages"]]
    if not split["dense_sum_paid"] and not split["dense_sum_unpaid"]:
        return {}
    return {key: round(statistics.fmean(v), 5) for key, v in split.items() if v}


def by_carry(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The accuracy verdict's mean over the pairs whose units carry, and over the others."""
    split: dict[str, list[float]] = {"carry": [], "no_carry": []}
    for r in rows:
        a, b = (int(x) for x in OPERANDS.search(prompt_text(r["prompt"])).groups())
        verdict = r["metrics"].get("accuracy", {}).get("score")
        if verdict is not None:
            split["carry" if a % 10 + b % 10 >= 10 else "no_carry"].append(float(verdict))
    return {key: round(statistics.fmean(v), 4) for key, v in split.items() if v}


def summarise(run: Path) -> dict[str, Any]:
    steps = read_jsonl(run / "metrics.jsonl")
    evals = read_jsonl(run / "eval.jsonl")
    debug = run / "debug"
    train_text = {}
    for path in sorted(debug.glob("step_*.jsonl")):
        rows = read_jsonl(path)
        train_text[rows[0]["step"]] = {**fractions(rows), **dense_reading(rows)} if rows else {}
    eval_text: dict[int, dict[str, Any]] = {}
    for path in sorted(debug.glob("eval_step_*.jsonl")):
        rows = read_jsonl(path)
        step = int(path.stem.rsplit("_", 1)[1])
        eval_text[step] = {mode: fractions([r for r in rows if r["mode"] == mode]) for mode in ("greedy", "sampled")}
        eval_text[step]["greedy"].update(by_carry([r for r in rows if r["mode"] == "greedy"]))
        eval_text[step]["examples"] = [r["response"] for r in rows if r["mode"] == "greedy"][:8]
    return {"run": str(run), "steps": steps, "evals": evals, "train_text": train_text, "eval_text": eval_text}


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def markdown(summary: dict[str, Any]) -> str:
    out = [f"### {summary['run']}", ""]
    evals = summary["evals"]
    out += ["| held-out (64 pairs) | " + " | ".join(f"step {e['step']}" for e in evals) + " |"]
    out += ["| --- |" + " --- |" * len(evals)]
    for label, key in EVAL_COLUMNS:
        out += [f"| {label} | " + " | ".join(fmt(e.get(key)) for e in evals) + " |"]
    for mode in ("greedy", "sampled"):
        whats = ("has_sum", "last_is_sum", "bare", "restates", "no_number", "paid_wrong", "unpaid_right")
        for what in (("carry", "no_carry") if mode == "greedy" else ()) + whats:
            cells = [fmt(summary["eval_text"].get(e["step"], {}).get(mode, {}).get(what)) for e in evals]
            out += [f"| {mode}: {what} (read here) | " + " | ".join(cells) + " |"]
    read = ("has_sum", "bare", "restates", "unpaid_right", "paid_wrong")
    out += ["", "| step | " + " | ".join(c for c, _ in STEP_COLUMNS) + " | " + " | ".join(read) + " |"]
    out += ["| --- |" + " --- |" * (len(STEP_COLUMNS) + len(read))]
    for row in summary["steps"]:
        text = summary["train_text"].get(row["step"], {})
        cells = [fmt(row.get(key)) for _, key in STEP_COLUMNS] + [fmt(text.get(what)) for what in read]
        out += [f"| {row['step']} | " + " | ".join(cells) + " |"]
    if any("reward/dense_token_mean" in row for row in summary["steps"]):
        out += ["", "| step | " + " | ".join(c for c, _ in DENSE_COLUMNS) + " |"]
        out += ["| --- |" + " --- |" * len(DENSE_COLUMNS)]
        by = ("dense_sum_paid", "dense_sum_unpaid", "adv_flat", "adv_informative")
        out[-2] += " " + " | ".join(f"{b} (read here)" for b in by) + " |"
        out[-1] += " --- |" * len(by)
        for row in summary["steps"]:
            text = summary["train_text"].get(row["step"], {})
            cells = [fmt(row.get(key)) for _, key in DENSE_COLUMNS] + [fmt(text.get(b)) for b in by]
            out += [f"| {row['step']} | " + " | ".join(cells) + " |"]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help="also write the curves here")
    args = parser.parse_args()
    summaries = [summarise(run) for run in args.runs]
    for summary in summaries:
        print(markdown(summary), "\n")
        for step, text in sorted(summary["eval_text"].items()):
            print(f"greedy examples at step {step}: {text['examples']}")
        print()
    if args.json:
        keep = [key for _, key in STEP_COLUMNS] + ["actor/grad_norm", "groups/solved_frac"]
        dense = [key for _, key in DENSE_COLUMNS]
        curves = [
            {
                "run": s["run"],
                "steps": [
                    {"step": r["step"], **{k: r.get(k) for k in keep + dense if k in r or k in keep}}
                    for r in s["steps"]
                ],
                "evals": s["evals"],
                "train_responses": s["train_text"],
                "eval_responses": {k: {m: v[m] for m in ("greedy", "sampled")} for k, v in s["eval_text"].items()},
            }
            for s in summaries
        ]
        new = {c["run"]: c for c in curves}
        old = json.loads(args.json.read_text()) if args.json.exists() else []
        merged = [new.pop(c["run"], c) for c in old] + list(new.values())  # a rerun keeps its place
        args.json.write_text(json.dumps(merged, indent=1) + "\n")


if __name__ == "__main__":
    main()
