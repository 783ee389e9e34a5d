"""Every boundary takes bad input: a clear 4xx in API.md's error body, and the service keeps serving."""

from __future__ import annotations

import json

import httpx
import pytest


def error_of(response: httpx.Response) -> dict:
    body = response.json()
    assert set(body) == {"error"}
    assert {"type", "message", "detail"} <= set(body["error"])
    return body["error"]


@pytest.mark.parametrize(
    ("content", "status", "error_type"),
    [
        (b"{not json", 400, "bad_request"),
        (b"", 400, "bad_request"),
        (b'{"samples": [{"response": "\xff\xfe"}], "verifier": "exact"}', 400, "bad_request"),
        (b"[" * 5000 + b"]" * 5000, 400, "bad_request"),
        (json.dumps({"samples": "nope"}).encode(), 422, "invalid_request"),
        (json.dumps({"samples": [{"response": 5}]}).encode(), 422, "invalid_request"),
        (json.dumps({"samples": [{"response": "x", "surprise": 1}]}).encode(), 422, "invalid_request"),
        (json.dumps({"verifier": "no_such_thing", "samples": [{"response": "x"}]}).encode(), 404, "unknown_verifier"),
        (
            json.dumps(
                {"verifier": {"name": "exact", "config": {"case_sensitive": "maybe"}}, "samples": [{"response": "x"}]}
            ).encode(),
            422,
            "invalid_config",
        ),
        (
            json.dumps(
                {"verifier": {"name": "exact", "config": {"no_such_option": 1}}, "samples": [{"response": "x"}]}
            ).encode(),
            422,
            "invalid_config",
        ),
        (json.dumps({"samples": [{"response": "x"}]}).encode(), 422, "invalid_request"),
    ],
    ids=[
        "syntax",
        "empty",
        "non-utf8",
        "deep-nesting",
        "wrong-type",
        "wrong-field-type",
        "unknown-field",
        "unknown-verifier",
        "bad-config-value",
        "unknown-config-key",
        "no-verifier",
    ],
)
def test_bad_bodies_get_a_clear_4xx(http: httpx.Client, content: bytes, status: int, error_type: str) -> None:
    response = http.post("/v1/score", content=content, headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    assert error_of(response)["type"] == error_type
    assert http.get("/healthz").status_code == 200


def test_a_body_over_the_size_limit_is_413(http: httpx.Client) -> None:
    huge = {"verifier": "exact", "samples": [{"response": "x" * (3 * 1024 * 1024)}]}
    response = http.post("/v1/score", json=huge)
    assert response.status_code == 413
    assert error_of(response)["type"] == "payload_too_large"


def test_a_chunked_body_over_the_limit_is_413_too(http: httpx.Client) -> None:
    def stream():
        yield b'{"verifier": "exact", "samples": [{"response": "'
        for _ in range(40):
            yield b"y" * 100_000
        yield b'"}]}'

    response = http.post("/v1/score", content=stream(), headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_too_many_samples_is_413_with_the_limit(http: httpx.Client) -> None:
    response = http.post("/v1/score", json={"verifier": "exact", "samples": [{"response": ""}] * 5001})
    assert response.status_code == 413
    assert error_of(response)["detail"] == {"limit": 5000}


def test_huge_strings_within_the_limit_are_scored(http: httpx.Client) -> None:
    response = http.post(
        "/v1/score", json={"verifier": "exact", "samples": [{"response": "z" * 1_000_000, "reference": "z"}]}
    )
    assert response.status_code == 200
    assert response.json()["results"][0]["score"] == 0.0


def test_a_bad_reference_is_that_samples_error_not_the_batchs(http: httpx.Client) -> None:
    samples = [{"response": "A", "reference": "A"}, {"response": "A", "reference": {"not": "a letter"}}]
    results = http.post("/v1/score", json={"verifier": "choice", "samples": samples}).json()["results"]
    assert results[0]["status"] == "ok" and results[0]["score"] == 1.0
    assert results[1]["status"] == "error" and "choice reference" in results[1]["error"]


def test_unknown_routes_and_methods_use_the_error_body(http: httpx.Client) -> None:
    assert error_of(http.get("/v2/nothing"))["type"] == "not_found"
    assert http.get("/v1/score").status_code == 405
