"""``reasoning_gym`` through the service against reasoning-gym's own ``score_answer``, on a generated corpus.

Every family of the pinned release gets entries from new seeds, generated with a non-default config
where the family has a curriculum (every attribute one level up: more decimal places, other time
windows, longer words; the default config where the release refuses that level). Each entry is
answered the ways models write answers (the tag, a think block holding an earlier tag, prose
around, whitespace, a wrong answer, an unclosed tag, a box, an empty tag, nothing). The reference
is reasoning-gym's own pipeline: ``extract_answer`` of the whole text, then the generating dataset's
``score_answer`` on the original entry (its tuples, its config). rewardhub gets the entry as JSON
over ``POST /v1/score`` and reads the answer as reasoning-gym does (``answer_format: answer_tag``,
``strip_think: false``). The agreement and every disagreement class are printed; below 0.99 fails.

Deliberate differences are :data:`CONVENTIONS`, each named and counted: rewardhub never evaluates
policy text (``reasoning_gym_guards``), so an answer the release would ``eval`` is scored without
evaluating it, or refused.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from typing import Any

import httpx
import pytest

from rewardhub.verifiers.reasoning_gym import TASKS

reasoning_gym = pytest.importorskip("reasoning_gym")

SEED = 4099
PER_FAMILY = 2
AGREEMENT = 0.99
READ_AS_REASONING_GYM = {"answer_format": "answer_tag", "strip_think": False, "timeout_s": 60}

CONVENTIONS = {
    "refused": "the release would evaluate this answer (eval, sympy.parse_expr); the guards score it without "
    "evaluating it or refuse it with the family's score for an unreadable answer (details.refused)",
}


def dataset(family: str, rng: random.Random) -> tuple[Any, bool]:
    """A dataset of the family with every curriculum attribute one level up, or the default config
    where the release refuses that level; and whether the config is the default."""
    from reasoning_gym.factory import create_curriculum, has_curriculum

    seed = rng.randrange(10**6)
    if has_curriculum(family):
        curriculum = create_curriculum(family)
        for name, attr in curriculum.attributes.items():
            curriculum.set_attr_level(name, min(1, len(attr.levels) - 1))
        try:
            config = curriculum.generate_configuration({"seed": seed, "size": PER_FAMILY + 1})
            data = reasoning_gym.create_dataset(
                family, **{f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
            )
            [data[i] for i in range(PER_FAMILY + 1)]
            return data, False
        except (AssertionError, ValueError, RuntimeError):
            pass
    return reasoning_gym.create_dataset(family, size=PER_FAMILY + 1, seed=seed), True


def written(gold: str, wrong: str) -> list[tuple[str, str]]:
    return [
        ("tag", f"<answer>{gold}</answer>"),
        ("think_then_tag", f"<think>first <answer>{wrong}</answer> no.</think>\n<answer>{gold}</answer>"),
        ("prose_then_tag", f"Working through it step by step.\nSo the final answer is:\n<answer>{gold}</answer>"),
        ("tag_whitespace", f"<answer>\n  {gold}  \n</answer>"),
        ("tag_wrong", f"<answer>{wrong}</answer>"),
        ("unclosed_tag", f"<answer>{gold}"),
        ("boxed", f"\\boxed{{{gold}}}"),
        ("empty_tag", "<answer></answer>"),
        ("empty", ""),
    ]


def corpus() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    cases = []
    for family in TASKS:
        data, default = dataset(family, rng)
        entries = [data[i] for i in range(PER_FAMILY + 1)]
        for index, entry in enumerate(entries[:PER_FAMILY]):
            wrong = entries[index + 1]["answer"] or "0"
            for shape, text in written(entry["answer"] or "", wrong):
                cases.append(
                    {"family": family, "default": default, "data": data, "entry": entry, "shape": shape, "text": text}
                )
    return cases


def reference(case: dict[str, Any]) -> float | str:
    from reasoning_gym.utils import extract_answer

    try:
        return float(case["data"].score_answer(extract_answer(case["text"], tag_name="answer"), case["entry"]))
    except Exception as exc:  # noqa: BLE001 - the release's scorer raising is an outcome too
        return f"raises {type(exc).__name__}"


def rewardhub(http: httpx.Client, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    samples = [
        {"id": str(i), "response": case["text"], "reference": json.loads(json.dumps(case["entry"]))}
        for i, case in enumerate(cases)
    ]
    spec = {"name": "reasoning_gym", "config": READ_AS_REASONING_GYM}
    warmed = http.post("/v1/score", json={"verifier": spec, "samples": samples[:4]})  # imports in each worker
    assert warmed.status_code == 200, warmed.text
    results: list[dict[str, Any]] = []
    for batch in batches(samples, limit=1_500_000):  # the test service takes 2 MB a request
        answer = http.post("/v1/score", json={"verifier": spec, "samples": batch})
        assert answer.status_code == 200, answer.text
        results += answer.json()["results"]
    return results


def batches(samples: list[dict[str, Any]], limit: int) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = [[]]
    size = 0
    for sample in samples:
        length = len(json.dumps(sample))
        if out[-1] and size + length > limit:
            out.append([])
            size = 0
        out[-1].append(sample)
        size += length
    return out


@pytest.fixture(scope="module")
def http(roomy_http: httpx.Client) -> httpx.Client:
    """This module's corpus goes to a service of its own, with the default worker memory (conftest)."""
    return roomy_http


def test_reasoning_gym_agrees_with_the_release_on_every_family_through_the_service(
    http: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = corpus()
    results = rewardhub(http, cases)
    agreed, conventions, refused, differ = 0, Counter(), Counter(), Counter()
    for case, result in zip(cases, results, strict=True):
        expected = reference(case)
        got: float | str = result["score"] if result["status"] == "ok" else f"status {result['status']}"
        same = (isinstance(expected, str) and result["status"] == "error") or (
            isinstance(expected, float) and result["status"] == "ok" and got == pytest.approx(expected, abs=1e-9)
        )
        if same:
            agreed += 1
        elif result["status"] == "ok" and result["details"].get("refused"):
            conventions["refused"] += 1
            refused[f"{case['family']}/{case['shape']}: release {expected}, rewardhub {got}"] += 1
        else:
            config = "default config" if case["default"] else "its config"
            error = (result.get("error") or "")[:120]
            differ[f"{case['family']} ({config})/{case['shape']}: release {expected}, rewardhub {got} {error}"] += 1
    with capsys.disabled():
        print(
            f"\nreasoning-gym {len(TASKS)} families vs rewardhub: {agreed}/{len(cases)} agree ({agreed / len(cases):.4f})"
        )
        print(f"  non-default configs: {len({c['family'] for c in cases if not c['default']})} families")
        for name, count in conventions.items():
            print(f"  convention {name}: {count} ({CONVENTIONS[name]})")
        for what, count in refused.most_common():
            print(f"    refused x{count}: {what}")
        for what, count in differ.most_common():
            print(f"  DIFFER x{count}: {what}")
    assert (agreed + conventions["refused"]) / len(cases) >= AGREEMENT, differ
