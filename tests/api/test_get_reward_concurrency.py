"""/get_reward under OpenRLHF's current load shape: many concurrent one-sample requests.

Each answer must be its own sample's, whatever else is in flight (batched requests included),
and every sample must reach a verifier in the worker pool. No timings here: bench/ measures speed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from rewardhub.server import EmbeddedServer

CONCURRENT = 200


@pytest.fixture(scope="module")
def pooled_url() -> Iterator[str]:
    """/get_reward scored by ``f1``, a verifier that runs in the worker pool (not inline)."""
    with EmbeddedServer(workers=2, get_reward_verifier="f1") as url:
        yield url


def body(i: int) -> dict[str, Any]:
    # sample i answers i % 7 against the label i % 5: right exactly when they agree
    return {"query": [f"Q{i}: {i % 7}"], "prompts": [f"Q{i}: "], "labels": [str(i % 5)]}


def expected(i: int) -> float:
    return float(i % 7 == i % 5)


async def fire(url: str, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        responses = await asyncio.gather(*(client.post("/get_reward", json=b) for b in bodies))
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses if r.status_code != 200][:3]
    return [r.json() for r in responses]


def test_concurrent_single_sample_requests_each_get_their_own_answer(pooled_url: str) -> None:
    answers = asyncio.run(fire(pooled_url, [body(i) for i in range(CONCURRENT)]))
    assert [a["rewards"] for a in answers] == [[expected(i)] for i in range(CONCURRENT)]
    assert all(a["status"] == ["ok"] and a["extra_logs"]["status/ok"] == [1.0] for a in answers)


def test_single_and_batched_requests_mix_without_crosstalk(pooled_url: str) -> None:
    batch = {key: [value for i in range(50) for value in body(i)[key]] for key in ("query", "prompts", "labels")}
    answers = asyncio.run(fire(pooled_url, [batch] + [body(i) for i in range(50, 150)]))
    assert answers[0]["rewards"] == [expected(i) for i in range(50)]
    assert [a["rewards"] for a in answers[1:]] == [[expected(i)] for i in range(50, 150)]


def test_bare_strings_and_one_element_lists_are_the_same_sample(pooled_url: str) -> None:
    as_lists = httpx.post(f"{pooled_url}/get_reward", json=body(35), timeout=60).json()
    as_strings = httpx.post(f"{pooled_url}/get_reward", json={k: v[0] for k, v in body(35).items()}, timeout=60).json()
    assert as_lists["rewards"] == as_strings["rewards"] == [1.0]


def test_every_single_request_is_counted_as_scored_samples(pooled_url: str) -> None:
    metrics = httpx.get(f"{pooled_url}/metrics", timeout=60).text
    line = next(
        line for line in metrics.splitlines() if line.startswith('rewardhub_samples_total{status="ok",verifier="f1"}')
    )
    assert float(line.rsplit(" ", 1)[1]) >= CONCURRENT + 150
