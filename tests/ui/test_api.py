"""``GET /ui`` and its JSON on a real service: the counts after traffic, per verifier and per run,
bad input answered with 4xx while the service serves on, API keys, and ``ui_show_samples: false``."""

from __future__ import annotations

import base64
import json

import httpx
import pytest
from conftest import PLUGIN, stats

from rewardhub.server import EmbeddedServer

MATH = [
    {"id": "right", "prompt": "1+1?", "response": "The answer is \\boxed{2}", "reference": "2"},
    {"id": "wrong", "prompt": "1+1?", "response": "The answer is \\boxed{3}", "reference": "2"},
]


@pytest.fixture(scope="module")
def service():
    with EmbeddedServer(workers=1, plugins=[PLUGIN], sample_timeout_s=2.0) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            yield client


@pytest.fixture(scope="module")
def traffic(service: httpx.Client) -> dict:
    """Traffic of two runs, one tagged by header and one by field, with errors and a timeout."""
    ok = service.post("/v1/score", json={"verifier": "math", "samples": MATH}, headers={"X-Rewardhub-Run": "run-a"})
    assert ok.status_code == 200
    boom = service.post("/v1/score", json={"verifier": "test_boom", "run": "run-b", "samples": [{"response": "x"}] * 3})
    assert boom.status_code == 200 and {r["status"] for r in boom.json()["results"]} == {"error"}
    slow = service.post(
        "/v1/score",
        json={"verifier": {"name": "test_sleepy", "config": {"seconds": 30}}, "samples": [{"response": "s"}]},
        headers={"X-Rewardhub-Run": "run-b"},
    )
    assert slow.json()["results"][0]["status"] == "timeout"
    job = service.post(
        "/v1/jobs", json={"verifier": "exact", "run": "run-a", "samples": [{"response": "a", "reference": "a"}]}
    )
    assert job.status_code == 202
    return stats(service)


def test_the_page_and_its_assets_come_from_the_service(service: httpx.Client):
    page = service.get("/ui")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/ui/static/ui.js" in page.text and "http" not in page.text.replace("http-equiv", "")  # nothing external
    for name, kind in (("ui.js", "javascript"), ("ui.css", "css")):
        asset = service.get(f"/ui/static/{name}")
        assert asset.status_code == 200 and kind in asset.headers["content-type"]
        text = asset.text.replace('"http://www.w3.org/2000/svg"', "")  # a namespace name, never fetched
        assert "https://" not in text and "http://" not in text and "//cdn" not in text
    assert service.get("/ui/static/../app.py").status_code == 404
    assert service.get("/ui/static/secrets.txt").status_code == 404


def test_per_verifier_counts_and_statuses(service: httpx.Client, traffic: dict):
    from conftest import wait_for

    figures = wait_for(lambda: stats(service), lambda s: "exact" in s["verifiers"])["verifiers"]
    assert figures["math"]["samples"] == 2 and figures["math"]["status"] == {"ok": 2, "timeout": 0, "error": 0}
    assert figures["math"]["reward_mean"] == 0.5
    assert (
        figures["math"]["reward_histogram"]["counts"][0] == 1 and figures["math"]["reward_histogram"]["counts"][-1] == 1
    )
    assert figures["math"]["latency_ms"]["p50"] is not None and figures["math"]["latency_ms"]["p99"] is not None
    assert figures["test_boom"]["status"] == {"ok": 0, "timeout": 0, "error": 3}
    [top] = figures["test_boom"]["top_errors"]
    assert top["count"] == 3 and "verifier bug" in top["message"]
    assert figures["test_sleepy"]["status"]["timeout"] == 1
    assert figures["exact"]["samples"] == 1  # a job counts when it is scored


def test_per_run_counts_from_header_and_field(service: httpx.Client, traffic: dict):
    runs = traffic["runs"]
    assert runs["run-a"]["samples"] >= 2 and runs["run-a"]["status"]["ok"] == runs["run-a"]["samples"]
    assert runs["run-b"]["status"] == {"ok": 0, "timeout": 1, "error": 3}


def test_last_samples_are_searchable_and_link_their_full_json(service: httpx.Client, traffic: dict):
    found = service.get("/ui/api/samples", params={"q": "boxed{3"}).json()["samples"]
    assert [s["id"] for s in found] == ["wrong"]
    row = found[0]
    assert (row["answer"], row["reason"], row["run"], row["score"]) == ("3", "not_equivalent", "run-a", 0.0)
    full = service.get(row["json_url"]).json()
    assert full["sample"]["response"] == "The answer is \\boxed{3}" and full["sample"]["reference"] == "2"
    assert full["result"]["details"]["extracted"] == "3"
    errors = service.get("/ui/api/samples", params={"status": "error", "run": "run-b"}).json()["samples"]
    assert len(errors) == 3 and all(s["error"] for s in errors)
    assert service.get("/ui/api/samples", params={"verifier": "math", "limit": 1}).json()["samples"][0]["id"] == "wrong"


@pytest.mark.parametrize(
    ("request_kwargs", "code"),
    [
        ({"url": "/ui/api/samples", "params": {"status": "great"}}, 422),
        ({"url": "/ui/api/samples", "params": {"limit": 0}}, 422),
        ({"url": "/ui/api/samples", "params": {"q": "x" * 501}}, 422),
        ({"url": "/ui/api/samples/no-such-key"}, 404),
        ({"url": "/ui/nothing"}, 404),
    ],
)
def test_bad_queries_are_4xx_and_the_page_serves_on(service: httpx.Client, request_kwargs: dict, code: int):
    answer = service.get(**request_kwargs)
    assert answer.status_code == code and "error" in answer.json()
    assert service.get("/ui/api/stats").status_code == 200


@pytest.mark.parametrize("tag", ["has space", "x" * 129, "<script>", "ü"])
def test_a_malformed_run_tag_is_400_by_header_or_field(service: httpx.Client, tag: str):
    by_field = service.post("/v1/score", json={"verifier": "exact", "run": tag, "samples": [{"response": "a"}]})
    assert by_field.status_code == 400 and by_field.json()["error"]["type"] == "bad_request"
    if tag.isascii():
        by_header = service.post(
            "/v1/score", json={"verifier": "exact", "samples": [{"response": "a"}]}, headers={"X-Rewardhub-Run": tag}
        )
        assert by_header.status_code == 400
    assert service.post("/v1/score", json={"verifier": "exact", "samples": [{"response": "a"}]}).status_code == 200


def test_with_keys_the_page_and_its_data_need_one_and_a_browser_may_give_it_as_basic_password():
    with EmbeddedServer(workers=1, api_keys=["k-123"]) as url, httpx.Client(base_url=url) as client:
        for path in ("/ui", "/ui/static/ui.js", "/ui/api/stats", "/ui/api/samples"):
            refused = client.get(path)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Basic")
            wrong = client.get(path, headers={"Authorization": "Basic " + base64.b64encode(b"op:nope").decode()})
            assert wrong.status_code == 401
            assert client.get(path, headers={"Authorization": "Basic !!"}).status_code == 401
            basic = client.get(path, headers={"Authorization": "Basic " + base64.b64encode(b"op:k-123").decode()})
            assert basic.status_code == 200
            assert client.get(path, headers={"Authorization": "Bearer k-123"}).status_code == 200
        assert client.get("/v1/verifiers").headers["www-authenticate"] == "Bearer"  # the API's challenge is unchanged


def test_without_show_samples_no_sample_text_reaches_the_page():
    with EmbeddedServer(workers=1, ui_show_samples=False) as url, httpx.Client(base_url=url) as client:
        client.post("/v1/score", json={"verifier": "math", "samples": MATH})
        page_data = json.dumps([stats(client), client.get("/ui/api/samples").json()])
        rows = client.get("/ui/api/samples").json()["samples"]
        full = json.dumps([client.get(row["json_url"]).json() for row in rows])
        assert len(rows) == 2 and {r["score"] for r in rows} == {0.0, 1.0}
        for text in ("boxed", "1+1", "The answer"):
            assert text not in page_data and text not in full
        assert all(r["answer"] is None and r["response"] is None for r in rows)


def test_the_page_can_be_switched_off():
    with EmbeddedServer(workers=1, ui_enabled=False) as url, httpx.Client(base_url=url) as client:
        assert client.get("/ui").status_code == 404
        assert client.post("/v1/score", json={"verifier": "exact", "samples": [{"response": "a"}]}).status_code == 200


def test_an_unreachable_store_is_a_503_on_the_page_and_scoring_goes_on():
    with EmbeddedServer(workers=1, ui_store="redis://127.0.0.1:1/0") as url, httpx.Client(base_url=url) as client:
        scored = client.post("/v1/score", json={"verifier": "exact", "samples": [{"response": "a", "reference": "a"}]})
        assert scored.status_code == 200 and scored.json()["results"][0]["score"] == 1.0
        answer = client.get("/ui/api/stats")
        assert answer.status_code == 503 and "statistics store" in answer.json()["error"]["message"]
        assert client.get("/ui").status_code == 200
