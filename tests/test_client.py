"""RewardClient and AsyncRewardClient: same methods, retries on what is worth retrying."""

from __future__ import annotations

import httpx
import pytest

from rewardhub.client import AsyncRewardClient, ClientError, RewardClient
from rewardhub.types import Sample

OK_BODY = {"results": [{"score": 1.0, "status": "ok"}], "elapsed_ms": 1.0}


def flaky(statuses: list[int], headers: dict[str, str] | None = None):
    """A transport answering the given statuses in turn, then 200; it counts the calls."""
    calls = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] <= len(statuses):
            status = statuses[calls["n"] - 1]
            body = {"error": {"type": "overloaded", "message": "busy", "detail": None}}
            return httpx.Response(status, json=body, headers=headers or {})
        return httpx.Response(200, json=OK_BODY)

    return handler, calls


def test_retries_429_and_5xx_then_succeeds():
    handler, calls = flaky([429, 503, 500])
    with RewardClient("http://svc", backoff_s=0.001, transport=httpx.MockTransport(handler)) as client:
        results = client.score([Sample(response="x")], "exact")
    assert calls["n"] == 4
    assert results[0].score == 1.0


def test_a_4xx_other_than_429_raises_at_once_with_the_error_body():
    handler, calls = flaky([422])
    with (
        RewardClient("http://svc", transport=httpx.MockTransport(handler)) as client,
        pytest.raises(ClientError) as info,
    ):
        client.score([{"response": "x"}], "exact")
    assert calls["n"] == 1
    assert info.value.status_code == 422 and info.value.error["type"] == "overloaded"


def test_gives_up_after_max_retries():
    handler, calls = flaky([503] * 10)
    with (
        RewardClient("http://svc", max_retries=2, backoff_s=0.001, transport=httpx.MockTransport(handler)) as client,
        pytest.raises(ClientError),
    ):
        client.health()
    assert calls["n"] == 3


def test_waits_at_least_retry_after_on_429():
    client = RewardClient("http://svc", backoff_s=0.001)
    busy = httpx.Response(429, headers={"retry-after": "3"})
    assert client._delay(0, busy) >= 3.0
    assert client._delay(0, httpx.Response(503)) < 0.01


def test_connection_errors_are_retried_then_reported():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    with (
        RewardClient("http://svc", max_retries=1, backoff_s=0.001, transport=httpx.MockTransport(refuse)) as client,
        pytest.raises(ClientError, match="cannot reach"),
    ):
        client.health()


async def test_the_async_twin_behaves_the_same():
    handler, calls = flaky([429])
    async with AsyncRewardClient("http://svc", backoff_s=0.001, transport=httpx.MockTransport(handler)) as client:
        results = await client.score([Sample(response="x")], {"name": "exact"})
    assert calls["n"] == 2 and results[0].status == "ok"


def test_against_the_real_service(service_url):
    with RewardClient(service_url) as client:
        assert client.health()["status"] == "ok"
        assert "exact" in {v["name"] for v in client.verifiers()}
        results = client.score([{"response": "a", "reference": "a"}, {"response": "b", "reference": "a"}], "exact")
        assert [r.score for r in results] == [1.0, 0.0]
        job = client.submit_job([{"response": "a", "reference": "a"}], "exact")
        assert [r.score for r in client.wait_job(job, poll_s=0.05)] == [1.0]
