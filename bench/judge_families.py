"""Two model families as judges on clear-cut cases: Gemma 3 270M (base) against SmolLM2-135M-Instruct.

A judge of another family than the policy is the point of a second kit model: SmolLM2 is the
trainer's policy (examples/smollm2_addition.yaml), so a SmolLM2 judge grades its own family.
Gemma 3 270M is a base model without a chat template, asked with ``chat_template: false`` (a plain
prompt ending in ``Answer:``, see rewardhub.models.judge_prompts.PLAIN_CUE).

The labelled set is 40 cases a careful reader gets right every time:

- **arithmetic** (20): ``judge`` in ``verify`` mode, ten questions each with the right final answer
  (label True) and a wrong one (label False); the judge sees the question, the reference and the
  extracted final answer;
- **topic** (20): ``rubric`` in ``explicit`` mode with one criterion, "The response answers the
  question that was asked.", ten questions each with an on-topic answer (True) and an unrelated
  true statement (False).

The judges: Gemma plain, SmolLM2 through its chat template, SmolLM2 plain, and Gemma plain with four
worked verdicts (``EXAMPLES``, on other questions) as its system prompt, the way a base model is
usually shown a task. Each runs greedy on the transformers backend (float32 on a CPU) with
``verdict: logprobs`` (P(True), the verdict True at 0.5) and ``verdict: choices`` (the likelier of
the two words). The
report gives per judge and mode: accuracy against the labels, how often it says True (a judge
that always says one word scores 0.5 here), the share of the 20 (right, wrong) pairs whose right
member gets the higher P(True) (ties half: 0.5 is chance), errors; and the agreement of the judges'
verdicts with each other. Nothing here is timed.

    python bench/judge_families.py [--json bench/results/judge_families.json] [--only LABEL ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from rewardhub.models import Judge, RubricJudge, kit
from rewardhub.types import Sample

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS  # noqa: E402

ARITHMETIC = [  # question, reference, right final answer, wrong final answer
    ("What is 7 + 5?", "12", "12", "13"),
    ("What is 6 times 4?", "24", "24", "20"),
    ("What is 15 minus 9?", "6", "6", "9"),
    ("What is 81 divided by 9?", "9", "9", "8"),
    ("What is 13 + 28?", "41", "41", "31"),
    ("What is 100 - 37?", "63", "63", "73"),
    ("What is 12 squared?", "144", "144", "124"),
    ("What is half of 50?", "25", "25", "50"),
    ("How many legs does a spider have?", "8", "8", "6"),
    ("What is 3 + 4 * 2?", "11", "11", "14"),
]
TOPIC = [  # question, an on-topic answer, an unrelated true statement
    ("What is the capital of France?", "The capital of France is Paris.", "Bananas are a good source of potassium."),
    ("How many days are in a week?", "A week has seven days.", "The Pacific is the largest ocean on Earth."),
    ("What colour is the sky on a clear day?", "On a clear day the sky is blue.", "A violin has four strings."),
    (
        "Who wrote Romeo and Juliet?",
        "William Shakespeare wrote Romeo and Juliet.",
        "Water boils at 100 degrees Celsius.",
    ),
    ("What do bees make?", "Bees make honey.", "The Eiffel Tower stands in Paris."),
    ("At what temperature does water freeze in Celsius?", "Water freezes at 0 degrees Celsius.", "Cats sleep a lot."),
    ("Which planet is closest to the Sun?", "Mercury is the planet closest to the Sun.", "Chess has 64 squares."),
    ("What is guacamole mainly made of?", "Guacamole is made mainly from avocado.", "Mount Everest is very high."),
    ("How many continents are there?", "There are seven continents.", "Python is a programming language."),
    ("What gas do plants take in from the air?", "Plants take in carbon dioxide.", "The Nile is a river in Africa."),
]
CRITERION = "The response answers the question that was asked."
EXAMPLES = """\
Examples of judged answers (questions not among those judged below):
Question: What is 2 + 2? Ground truth: 4. Model answer: 4. Correct: True
Question: What is 9 - 3? Ground truth: 6. Model answer: 5. Correct: False
Question: What is the capital of Italy? Response: Rome is the capital of Italy. Answers the question: True
Question: What is the capital of Spain? Response: Giraffes have long necks. Answers the question: False"""
"""Four worked verdicts for a base model, sent as the system prompt (the plain prompt's first part)."""
JUDGES = {  # label: (kit model, chat template, system prompt)
    "gemma3-270m (plain)": ("gemma3-270m", False, None),
    "smollm2-135m-instruct (chat)": ("smollm2-135m-instruct", True, None),
    "smollm2-135m-instruct (plain)": ("smollm2-135m-instruct", False, None),
    "gemma3-270m (plain, 4 examples)": ("gemma3-270m", False, EXAMPLES),
}
MODES = ("logprobs", "choices")


def labelled_cases() -> tuple[list[Sample], list[Sample], list[bool]]:
    """The verify samples, the rubric samples and the labels (verify first), right before wrong."""
    verify = [
        Sample(prompt=q, reference=ref, response=f"The answer is {answer}.")
        for q, ref, right, wrong in ARITHMETIC
        for answer in (right, wrong)
    ]
    rubric = [{"criterion": CRITERION, "weight": 1.0}]
    topic = [Sample(prompt=q, reference=rubric, response=r) for q, on, off in TOPIC for r in (on, off)]
    labels = [True, False] * (len(ARITHMETIC) + len(TOPIC))
    return verify, topic, labels


def judge_all(model: str, chat_template: bool, system_prompt: str | None, verdict: str) -> list[dict[str, Any]]:
    """Every case's P(True) (or 1/0 for choices) and status, in label order."""
    verify, topic, _ = labelled_cases()
    options = {"model": model, "backend": "transformers", "verdict": verdict, "chat_template": chat_template}
    options["system_prompt"] = system_prompt
    results = Judge().score_batch(verify, Judge.Config(**options))
    for result in RubricJudge().score_batch(topic, RubricJudge.Config(**options)):
        satisfied = result.details.get("criteria", [{}])[0].get("satisfied") if result.status == "ok" else None
        results.append(result.model_copy(update={"score": satisfied if satisfied is not None else result.score}))
    return [{"p_true": r.score, "status": r.status, "error": r.error} for r in results]


def summarise(cases: list[dict[str, Any]], labels: list[bool]) -> dict[str, Any]:
    said = [c["p_true"] >= 0.5 if c["status"] == "ok" else None for c in cases]
    right_first = [(cases[i], cases[i + 1]) for i in range(0, len(cases), 2)]
    ordered = [
        1.0 if a["p_true"] > b["p_true"] else 0.5 if a["p_true"] == b["p_true"] else 0.0
        for a, b in right_first
        if a["status"] == b["status"] == "ok"
    ]
    half = len(ARITHMETIC) * 2

    def accuracy(part: slice) -> float:
        pairs = list(zip(said[part], labels[part], strict=True))
        return sum(s == label for s, label in pairs) / len(pairs)

    return {
        "accuracy": accuracy(slice(None)),
        "accuracy_arithmetic": accuracy(slice(0, half)),
        "accuracy_topic": accuracy(slice(half, None)),
        "says_true": sum(s is True for s in said) / len(said),
        "pairs_ordered": sum(ordered) / len(ordered) if ordered else None,
        "errors": sum(s is None for s in said),
        "verdicts": said,
        "p_true": [round(c["p_true"], 4) for c in cases],
    }


def agreement(a: list[bool | None], b: list[bool | None]) -> float:
    return sum(x == y and x is not None for x, y in zip(a, b, strict=True)) / len(a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=RESULTS / "judge_families.json")
    parser.add_argument(
        "--only", nargs="+", choices=list(JUDGES), help="run these judges and keep the others' rows from --json"
    )
    args = parser.parse_args()
    judges = {label: JUDGES[label] for label in args.only or JUDGES}
    for model, _, _ in judges.values():
        kit.resolve_model(model)  # a judge that is not installed stops here, naming its install command
    _, _, labels = labelled_cases()
    report: dict[str, Any] = {"cases": len(labels), "judges": {}}
    if args.only and args.json.exists():
        report["judges"] = json.loads(args.json.read_text())["judges"]
    for verdict in MODES:
        for label, (model, chat_template, system_prompt) in judges.items():
            started = time.perf_counter()
            summary = summarise(judge_all(model, chat_template, system_prompt, verdict), labels)
            summary["weights"] = kit.weights_hash(kit.resolve_model(model))
            report["judges"][f"{label}, {verdict}"] = summary
            print(
                f"{label:<32} {verdict:<8}  accuracy {summary['accuracy']:.3f} (arithmetic "
                f"{summary['accuracy_arithmetic']:.3f}, topic {summary['accuracy_topic']:.3f}), says True "
                f"{summary['says_true']:.3f}, pairs ordered {summary['pairs_ordered']}, errors {summary['errors']}"
                f"  [{time.perf_counter() - started:.0f} s]",
                flush=True,
            )
    report["agreement"] = agreements(report["judges"])
    for verdict, pairs in report["agreement"].items():
        print(f"agreement ({verdict}): {json.dumps(pairs)}", flush=True)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    print(f"written to {args.json}")


def agreements(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per verdict mode, the share of cases on which each two judges give the same verdict."""
    out: dict[str, dict[str, float]] = {}
    for verdict in MODES:
        present = [label for label in JUDGES if f"{label}, {verdict}" in rows]
        out[verdict] = {
            f"{a} vs {b}": agreement(rows[f"{a}, {verdict}"]["verdicts"], rows[f"{b}, {verdict}"]["verdicts"])
            for n, a in enumerate(present)
            for b in present[n + 1 :]
        }
    return out


if __name__ == "__main__":
    main()
