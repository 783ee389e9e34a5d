"""Bad code references over HTTP: each is its own sample's ``error`` with a clear message, and the
service goes on serving the good samples of the same batch and the next requests."""

from __future__ import annotations

import base64
import json
import zlib

import httpx

ANSWER = "```python\nprint(int(input()) * 2)\n```"
GOOD = {"inputs": ["2\n"], "outputs": ["4\n"]}


def test_bad_references_are_per_sample_errors_and_the_service_keeps_serving(http: httpx.Client) -> None:
    forbidden_pickle = base64.b64encode(zlib.compress(b"cos\nsystem\n(S'id'\ntR.")).decode()
    samples = [
        {
            "response": ANSWER,
            "reference": {**GOOD, "checker": {"language": "python", "code": "while True:\n    pass\n"}},
        },
        {"response": ANSWER, "reference": {"input_output": '{"inputs": ["2\\n"], "outputs": '}},
        {"response": ANSWER, "reference": {"public_test_cases": "[]", "private_test_cases": forbidden_pickle}},
        {"response": ANSWER, "reference": {**GOOD, "checker": {"language": "cpp", "code": "int main( {"}}},
        {"response": ANSWER, "reference": GOOD},
    ]
    body = {"verifier": {"name": "code", "config": {"checker_timeout_s": 1.0}}, "samples": samples}
    response = http.post("/v1/score", json=body)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["error", "error", "error", "error", "ok"]
    assert "ran out of time" in results[0]["error"]
    assert "not JSON" in results[1]["error"]
    assert "os.system" in results[2]["error"]
    assert "does not build" in results[3]["error"]
    assert results[4]["score"] == 1.0
    assert all(r["score"] == 0.0 for r in results[:4])  # the failure score, with the error status
    assert http.get("/healthz").json()["status"] == "ok"
    again = http.post(
        "/v1/score", json={"verifier": "code", "samples": [{"response": ANSWER, "reference": json.dumps(GOOD)}]}
    )
    assert again.json()["results"][0]["score"] == 1.0
