"""The trainer-facing score routes skip FastAPI's router, and nothing else about them changes.

``POST /v1/score`` and ``POST /get_reward`` are answered by :class:`rewardhub.api.middleware.hot_routes.HotRoutes`
before FastAPI matches a path or solves a dependency (that machinery costs more CPU than a
one-sample request's scoring). They still pass our own middlewares (request id, run tag,
metrics), check the key, refuse bad input with the same error bodies, and every other route and
method still reaches FastAPI.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rewardhub.api.app import create_app
from rewardhub.settings import Settings

KEY = "hot-routes-test-key"


@pytest.fixture(scope="module")
def app_and_router_calls() -> Iterator[tuple[TestClient, list[str]]]:
    app = create_app(Settings(workers=1, api_keys=[KEY], ui_enabled=False))
    router_calls: list[str] = []
    inner = app.router

    class CountingRouter:
        """FastAPI's router, counting the paths it is asked to route."""

        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                router_calls.append(f"{scope['method']} {scope['path']}")
            await inner(scope, receive, send)

    app.router = CountingRouter()  # type: ignore[assignment]
    with TestClient(app, headers={"Authorization": f"Bearer {KEY}"}) as client:
        yield client, router_calls


def test_score_and_get_reward_never_reach_fastapis_router(app_and_router_calls) -> None:
    client, router_calls = app_and_router_calls
    router_calls.clear()
    score = client.post("/v1/score", json={"verifier": "exact", "samples": [{"response": "4", "reference": "4"}]})
    reward = client.post("/get_reward", json={"query": ["Q: 4"], "prompts": ["Q: "], "labels": ["4"]})
    assert score.status_code == 200 and score.json()["results"][0]["score"] == 1.0
    assert reward.status_code == 200 and reward.json()["rewards"] == [1.0]
    assert router_calls == []
    assert client.get("/healthz").status_code == 200
    assert router_calls == ["GET /healthz"]  # the check above could see a routed request


def test_they_keep_request_ids_and_the_metrics_route_label(app_and_router_calls) -> None:
    client, _ = app_and_router_calls
    answer = client.post(
        "/v1/score",
        json={"verifier": "exact", "samples": [{"response": "a", "reference": "a"}]},
        headers={"X-Request-ID": "trainer-step-7"},
    )
    assert answer.headers["x-request-id"] == "trainer-step-7"
    assert "x-rewardhub-pid" in answer.headers
    assert client.post("/get_reward", json={"query": ["x"], "prompts": [""], "labels": ["x"]}).status_code == 200
    metrics = client.get("/metrics").text
    assert 'rewardhub_requests_total{code="200",route="/v1/score"}' in metrics
    assert 'rewardhub_requests_total{code="200",route="/get_reward"}' in metrics


def test_they_check_the_key(app_and_router_calls) -> None:
    client, _ = app_and_router_calls
    body = {"verifier": "exact", "samples": [{"response": "a", "reference": "a"}]}
    for path, payload in (("/v1/score", body), ("/get_reward", {"query": ["a"], "prompts": [""], "labels": ["a"]})):
        refused = client.post(path, json=payload, headers={"Authorization": "Bearer wrong"})
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
        assert refused.json()["error"]["type"] == "unauthorized"


@pytest.mark.parametrize(
    ("content", "status", "error_type"),
    [
        (b"", 400, "bad_request"),
        (b"{not json", 400, "bad_request"),
        (b'{"verifier": "exact", "samples": [{"reference": "no response"}]}', 422, "invalid_request"),
        (b'{"verifier": "no-such-verifier", "samples": [{"response": "a"}]}', 404, "unknown_verifier"),
    ],
)
def test_bad_input_gets_the_same_error_bodies(app_and_router_calls, content: bytes, status: int, error_type: str):
    client, _ = app_and_router_calls
    answer = client.post("/v1/score", content=content, headers={"content-type": "application/json"})
    assert answer.status_code == status
    assert answer.json()["error"]["type"] == error_type


def test_other_methods_on_these_paths_still_get_fastapis_405(app_and_router_calls) -> None:
    client, _ = app_and_router_calls
    for path in ("/v1/score", "/get_reward"):
        answer = client.get(path)
        assert answer.status_code == 405
        assert answer.json()["error"]["type"] == "method_not_allowed"


def test_a_failure_inside_the_handler_is_a_500_and_the_service_keeps_serving(app_and_router_calls, monkeypatch):
    client, _ = app_and_router_calls
    service = client.app.state.service  # type: ignore[attr-defined]

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(service.pipeline, "score", broken)
    answer = client.post("/v1/score", json={"verifier": "exact", "samples": [{"response": "a"}]})
    assert answer.status_code == 500
    assert answer.json()["error"]["type"] == "internal_error"
    assert "boom" not in answer.text  # no internals in the answer
    monkeypatch.undo()
    assert client.post("/v1/score", json={"verifier": "exact", "samples": [{"response": "a"}]}).status_code == 200
