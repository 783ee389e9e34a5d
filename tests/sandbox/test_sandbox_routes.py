"""POST /v1/sandbox/run: API.md's answer, its error bodies, and its place in the real app."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import rewardhub.api.routes.sandbox as routes
import rewardhub.sandbox.service as sandbox_service
from rewardhub.api.app import create_app
from rewardhub.api.errors import install_error_handlers
from rewardhub.sandbox import SandboxUnavailable
from rewardhub.settings import Settings


@pytest.fixture
def client(pool, monkeypatch) -> TestClient:
    monkeypatch.setattr(sandbox_service, "default_pool", lambda: pool)
    app = FastAPI()
    app.state.service = SimpleNamespace(  # the fields of rewardhub.api.service.Service the route reads
        auth=lambda request: None, settings=SimpleNamespace(max_request_bytes=1 << 20, sandbox_backend=None)
    )
    install_error_handlers(app)
    app.include_router(routes.router)
    return TestClient(app)


def test_a_run_answers_in_the_shape_of_api_md(client):
    answer = client.post("/v1/sandbox/run", json={"language": "python", "code": "print(input()[::-1])", "stdin": "abc"})
    body = answer.json()
    assert answer.status_code == 200
    assert {"status", "exit_code", "stdout", "stderr", "elapsed_ms"} <= body.keys()
    assert (body["status"], body["exit_code"], body["stdout"]) == ("ok", 0, "cba\n")
    assert body["sandbox"]["backend"] == "bwrap"


def test_verdicts_are_the_status(client):
    slow = client.post("/v1/sandbox/run", json={"code": "while True: pass", "timeout_s": 0.5}).json()
    hungry = client.post("/v1/sandbox/run", json={"code": "x = bytearray(1 << 30)", "memory_mb": 64}).json()
    broken = client.post("/v1/sandbox/run", json={"language": "c", "code": "int main( {"}).json()
    assert (slow["status"], hungry["status"], broken["status"]) == ("timeout", "memory", "compile_error")


def test_files_are_given_to_the_program(client):
    body = client.post(
        "/v1/sandbox/run", json={"code": "print(open('in/data.txt').read())", "files": {"in/data.txt": "42"}}
    ).json()
    assert body["stdout"] == "42\n"


@pytest.mark.parametrize(
    ("body", "status", "error_type"),
    [
        (b"{not json", 400, "bad_request"),
        (b'{"code": 5}', 422, "invalid_request"),
        (b'{"code": "1", "surprise": true}', 422, "invalid_request"),
        (b'{"code": "1", "language": "cobol"}', 422, "unsupported_language"),
        (b'{"code": "1", "files": {"/etc/passwd": "x"}}', 422, "invalid_request"),
        (b'{"code": "1", "files": {"../up": "x"}}', 422, "invalid_request"),
        (b'{"code": "1", "files": {"main.py": "x"}}', 422, "invalid_request"),
        (b'{"code": "1", "timeout_s": 100000}', 422, "invalid_request"),
        (b'{"code": "' + b"x" * (2 << 20) + b'"}', 413, "payload_too_large"),
    ],
)
def test_caller_errors_use_the_error_body(client, body, status, error_type):
    answer = client.post("/v1/sandbox/run", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status
    assert answer.json()["error"]["type"] == error_type


def test_a_server_that_cannot_isolate_refuses_with_503_and_the_reason(client, monkeypatch):
    def unavailable():
        raise SandboxUnavailable("code execution is disabled: bubblewrap ('bwrap') is not installed")

    monkeypatch.setattr(sandbox_service, "default_pool", unavailable)
    answer = client.post("/v1/sandbox/run", json={"code": "print(1)"})
    assert answer.status_code == 503
    assert answer.json()["error"]["type"] == "sandbox_unavailable"
    assert "bubblewrap" in answer.json()["error"]["message"]


def test_the_service_app_serves_the_route_behind_its_api_keys(pool, monkeypatch):
    monkeypatch.setattr(sandbox_service, "default_pool", lambda: pool)
    app = create_app(Settings(api_keys=["sandbox-test-key"], sandbox_backend="bwrap"))
    client = TestClient(app)
    refused = client.post("/v1/sandbox/run", json={"code": "print(1)"})
    served = client.post(
        "/v1/sandbox/run", json={"code": "print(1)"}, headers={"authorization": "Bearer sandbox-test-key"}
    )
    assert refused.status_code == 401
    assert (served.status_code, served.json()["stdout"]) == (200, "1\n")
