"""The model verifiers served through the real API: same scores as in process, errors per sample."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from rm_fake_judge import FakeJudge

from rewardhub.models.outcome_rm import OutcomeRM
from rewardhub.server import EmbeddedServer
from rewardhub.types import Sample


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    with EmbeddedServer(workers=1, model_batch_wait_ms=20.0) as url:
        yield url


def post(url: str, verifier: dict, samples: list[dict]) -> list[dict]:
    response = httpx.post(url + "/v1/score", json={"verifier": verifier, "samples": samples}, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def test_listed_with_their_kinds(service: str) -> None:
    listed = {v["name"]: v["kind"] for v in httpx.get(service + "/v1/verifiers").json()["verifiers"]}
    assert {k: listed.get(k) for k in ("outcome_rm", "prm", "implicit_prm", "judge", "rubric")} == {
        "outcome_rm": "model",
        "prm": "model",
        "implicit_prm": "model",
        "judge": "judge",
        "rubric": "judge",
    }


def test_concurrent_single_requests_score_as_in_process(service: str, tiny_models: dict[str, str]) -> None:
    spec = {"name": "outcome_rm", "config": {"model": tiny_models["outcome"]}}
    samples = [{"id": str(i), "prompt": "2+2?", "response": "4" * (i + 1)} for i in range(16)]

    async def run() -> list[dict]:
        async with httpx.AsyncClient(base_url=service, timeout=60) as client:
            replies = await asyncio.gather(
                *(client.post("/v1/score", json={"verifier": spec, "samples": [s]}) for s in samples)
            )
        return [r.json()["results"][0] for r in replies]

    served = asyncio.run(run())
    direct = OutcomeRM().score_batch([Sample(**s) for s in samples], OutcomeRM.Config(model=tiny_models["outcome"]))
    assert [r["id"] for r in served] == [s["id"] for s in samples]
    assert [r["score"] for r in served] == pytest.approx([r.score for r in direct], abs=1e-5)  # type: ignore[union-attr]


def test_steps_and_per_sample_errors_travel(service: str, tiny_models: dict[str, str]) -> None:
    spec = {"name": "prm", "config": {"model": tiny_models["prm"], "max_length": 200}}
    ok, too_long = post(
        service, spec, [{"prompt": "q", "response": "a\n\nb\n\nc"}, {"prompt": "q", "response": "x" * 500}]
    )
    assert ok["status"] == "ok" and len(ok["steps"]) == 3 and ok["details"]["first_error_step"] in (-1, 0, 1, 2)
    assert too_long["status"] == "error" and "max_length" in too_long["error"] and too_long["score"] == 0.0


def test_a_judge_through_the_service(service: str, fake_judge: FakeJudge) -> None:
    fake_judge.responder = lambda body: "Same value.\nTrue"
    spec = {"name": "judge", "config": {"model": "j", "base_url": fake_judge.url, "api_key_env": None}}
    good, empty = post(
        service,
        spec,
        [{"prompt": "1/2?", "response": "\\boxed{0.5}", "reference": "1/2"}, {"response": ":", "reference": "1/2"}],
    )
    assert good["score"] == 1.0 and empty["score"] == 0.0
    assert len(fake_judge.requests) == 1


def test_a_config_without_a_model_is_refused_before_any_work(service: str) -> None:
    response = httpx.post(
        service + "/v1/score", json={"verifier": "outcome_rm", "samples": [{"response": "x"}]}, timeout=30
    )
    assert response.status_code == 422


def test_a_device_that_is_not_a_device_is_refused_before_any_work(service: str, tiny_models: dict[str, str]) -> None:
    spec = {"name": "outcome_rm", "config": {"model": tiny_models["outcome"], "device": "gpu0"}}
    response = httpx.post(service + "/v1/score", json={"verifier": spec, "samples": [{"response": "x"}]}, timeout=30)
    assert response.status_code == 422
    assert "device" in response.text
    assert httpx.get(service + "/healthz").status_code == 200  # and the service keeps serving
