"""rewardhub's NeMo-Gym servers against the released servers' own ``verify()``, on cases nobody wrote down.

``nemo_gym_corpus`` generates (seeded) rows and responses over the servers' behaviour: mcqa's four
grading modes (in the row, or in the server's config over another in the row: ``mcqa:{mode}``),
gpqa_diamond with and without options, and reasoning_gym entries of eighteen families and of three
non-default configs; responses written the ways models write them (think blocks, boxes,
``\\boxed{[B]}``, an option's text in the box, ``Answer: B``, tags, prose, malformed, empty).
NeMo-Gym 0.7.0's servers score each case offline in a child process (``nemo_gym_side.py
differential``); rewardhub scores the same requests through ``/v1/compat/nemo-gym/{server}/verify_batch``
of a running service. The agreement and every class of disagreement are printed; below 0.99 fails.

Deliberate differences are :data:`CONVENTIONS`, each named, counted and printed, never silent.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest
from nemo_gym_support import needs_nemo_gym, nemo_gym

AGREEMENT = 0.99

CONVENTIONS: dict[str, str] = {
    "reasoning_gym/json_tuples": "an arc_agi entry's boards arrive as JSON lists; rewardhub makes them tuples again, "
    "as the family generated them, so the right board scores 1 (the server, reading the JSON row: 0.05)",
}
"""Disagreements that are rewardhub's conventions, by class (docs/compat.md names them too)."""


def convention(case: dict[str, Any], answer: dict[str, Any]) -> str | None:
    """The convention a disagreement is, or None."""
    if case["server"] == "reasoning_gym" and case["row"]["metadata"]["source_dataset"] == "arc_agi":
        if case["reference_reward"] == pytest.approx(0.05) and answer["reward"] == 1.0:
            return "reasoning_gym/json_tuples"
    return None


def route(case: dict[str, Any]) -> str:
    """The server's name, with the server config's mode where the case sets one (``mcqa:{mode}``)."""
    return f"{case['server']}:{case['server_mode']}" if case["server_mode"] else case["server"]


def score(http: httpx.Client, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = [{}] * len(cases)
    for server in sorted({route(case) for case in cases}):
        indices = [i for i, case in enumerate(cases) if route(case) == server]
        requests = [cases[i]["request"] for i in indices]  # exactly what the server got
        if server == "reasoning_gym":  # the first sample imports reasoning-gym in each worker
            spec = {"name": "reasoning_gym", "config": {"timeout_s": 60}}
            warmed = http.post(
                f"/v1/compat/nemo-gym/{server}/verify_batch",
                json={"verify_requests": [{**requests[0], "verifier": spec}] * 4},
            )
            assert warmed.status_code == 200, warmed.text
        answer = http.post(f"/v1/compat/nemo-gym/{server}/verify_batch", json={"verify_requests": requests})
        assert answer.status_code == 200, answer.text
        for i, verified in zip(indices, answer.json()["verify_responses"], strict=True):
            answers[i] = verified
    return answers


def label(case: dict[str, Any]) -> str:
    family = case["row"].get("metadata", {}).get("source_dataset")
    mode = case["server_mode"] or case["row"].get("grading_mode") or ""
    return "/".join(part for part in (case["server"], family, mode, case["shape"]) if part)


@needs_nemo_gym
def test_the_servers_agree_with_the_released_servers_on_a_generated_corpus(
    http: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = nemo_gym("differential")
    answers = score(http, cases)
    differ: Counter[str] = Counter()
    conventions: Counter[str] = Counter()
    per_server: Counter[str] = Counter()
    agree_per_server: Counter[str] = Counter()
    for case, answer in zip(cases, answers, strict=True):
        per_server[case["server"]] += 1
        judged = answer["rewardhub"]["status"] == "ok"
        if judged and answer["reward"] == pytest.approx(case["reference_reward"], abs=1e-9):
            agree_per_server[case["server"]] += 1
        elif (name := convention(case, answer)) is not None:
            conventions[name] += 1
        else:
            reward = answer["reward"] if judged else f"masked ({answer['rewardhub']['error']})"
            differ[f"{label(case)}: server {case['reference_reward']}, rewardhub {reward}"] += 1
    agreed = sum(agree_per_server.values())
    with capsys.disabled():
        print(f"\nNeMo-Gym 0.7.0 servers vs rewardhub: {agreed}/{len(cases)} agree ({agreed / len(cases):.4f})")
        for server in sorted(per_server):
            print(f"  {server}: {agree_per_server[server]}/{per_server[server]}")
        for name, count in conventions.items():
            print(f"  convention {name}: {count} ({CONVENTIONS[name]})")
        for what, count in differ.most_common():
            print(f"  DIFFER x{count}: {what}")
    assert (agreed + sum(conventions.values())) / len(cases) >= AGREEMENT, differ
    assert (len(cases) - sum(conventions.values()) - sum(differ.values())) == agreed
    assert conventions["reasoning_gym/json_tuples"] > 0  # the corpus reaches the convention it names
