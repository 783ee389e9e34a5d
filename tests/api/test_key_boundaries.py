"""What one API key reaches: only its own sessions and jobs, whatever other headers a request
carries, and not the API's description without a key.

The owner of what a request makes is the key its route checked, on every route: a valid
``X-API-Key`` beside ``Authorization: Junk owner-N`` once made a new owner per request on the ORS
routes (80 sessions against a cap of 64 per key), and beside ``Authorization: Bearer <other key>``
it made sessions in the other key's name. A job was readable with any key.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from serve_support import needs_bubblewrap

from rewardhub.api.app import create_app
from rewardhub.settings import Settings

KEYS = ["key-a", "key-b"]
CAP = 2
A = [("authorization", "Bearer key-a")]
B = [("authorization", "Bearer key-b")]
TASK = {"prompt": "p", "files": {}, "test_command": "true"}
SESSION_ENV = {"REWARDHUB_SESSION_MAX_PER_KEY": str(CAP), "REWARDHUB_SESSION_SPARES": "0"}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    needs_bubblewrap()
    saved = {key: os.environ.get(key) for key in SESSION_ENV}
    os.environ.update(SESSION_ENV)  # read when the app's session manager is first used
    try:
        with TestClient(create_app(Settings(api_keys=KEYS))) as test_client:
            yield test_client
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)


def sessions_of(client: TestClient, key: list[tuple[str, str]]) -> set[str]:
    listed = client.get("/v1/sessions", headers=key)
    assert listed.status_code == 200, listed.text
    return {session["session_id"] for session in listed.json()["sessions"]}


def delete_all(client: TestClient) -> None:
    for key in (A, B):
        for session in sessions_of(client, key):
            assert client.delete(f"/v1/sessions/{session}", headers=key).status_code == 204


# --- sessions: the key checked owns them ----------------------------------------------------------

SESSION_AS_A = {
    "Bearer": A,
    "lower-case bearer": [("authorization", "bearer key-a")],
    "Bearer and another key as X-API-Key": [*A, ("x-api-key", "key-b")],
    "two Authorization headers, Bearer first": [*A, ("authorization", "Junk owner-1")],
}
SESSION_REFUSED = {
    "Junk scheme": [("authorization", "Junk key-a")],
    "Basic scheme": [("authorization", "Basic eDprZXktYQ==")],  # x:key-a
    "X-API-Key alone": [("x-api-key", "key-a")],
    "a bogus Bearer beside a valid X-API-Key": [("authorization", "Bearer owner-2"), ("x-api-key", "key-a")],
    "no scheme": [("authorization", "key-a")],
}


@pytest.mark.parametrize("name", sorted(SESSION_AS_A))
def test_a_session_belongs_to_the_key_that_was_checked(client, name):
    made = client.post("/v1/sessions", json={}, headers=SESSION_AS_A[name])
    assert made.status_code == 201, made.text
    try:
        assert made.json()["session_id"] in sessions_of(client, A)
        assert made.json()["session_id"] not in sessions_of(client, B)
    finally:
        delete_all(client)


@pytest.mark.parametrize("name", sorted(SESSION_REFUSED))
def test_a_session_route_without_a_checked_key_is_401(client, name):
    assert client.post("/v1/sessions", json={}, headers=SESSION_REFUSED[name]).status_code == 401
    assert sessions_of(client, A) == set()


# --- ORS: X-API-Key is the key, whatever Authorization says ---------------------------------------

ORS_AS_A = {
    "X-API-Key": [("x-api-key", "key-a")],
    "Bearer": A,
    "lower-case bearer": [("authorization", "bearer key-a")],
    "X-API-Key and a Junk Authorization": [("x-api-key", "key-a"), ("authorization", "Junk owner-3")],
    "X-API-Key and another key as Bearer": [("x-api-key", "key-a"), *B],
    "X-API-Key and Basic": [("x-api-key", "key-a"), ("authorization", "Basic b3duZXI6eA==")],
    "X-API-Key and an empty Authorization": [("x-api-key", "key-a"), ("authorization", "")],
    "two Authorization headers, Bearer first": [*A, ("authorization", "Junk owner-4")],
}
ORS_REFUSED = {
    "Junk scheme": [("authorization", "Junk key-a")],
    "Basic scheme": [("authorization", "Basic eDprZXktYQ==")],
    "a bogus X-API-Key beside a valid Bearer": [("x-api-key", "owner-5"), *A],
    "nothing": [],
}


def ors_create(client: TestClient, headers: list[tuple[str, str]]):
    return client.post("/create", json={"task_spec": TASK}, headers=[*headers, ("x-session-id", secrets.token_hex(8))])


@pytest.mark.parametrize("name", sorted(ORS_AS_A))
def test_an_ors_session_belongs_to_the_key_that_was_checked(client, name):
    made = ors_create(client, ORS_AS_A[name])
    assert made.status_code == 200, made.text
    try:
        assert (len(sessions_of(client, A)), len(sessions_of(client, B))) == (1, 0)
    finally:
        delete_all(client)


@pytest.mark.parametrize("name", sorted(ORS_REFUSED))
def test_an_ors_route_without_a_checked_key_is_401(client, name):
    assert ors_create(client, ORS_REFUSED[name]).status_code == 401
    assert sessions_of(client, A) == set()


def test_a_junk_authorization_per_request_does_not_lift_the_cap_per_key(client):
    """The finding: one valid X-API-Key and ``Authorization: Junk owner-N`` made a new owner per request."""
    answers = [
        ors_create(client, [("x-api-key", "key-a"), ("authorization", f"Junk owner-{n}")]) for n in range(CAP + 2)
    ]
    try:
        assert [a.status_code for a in answers] == [200] * CAP + [429] * 2
        assert "this API key" in answers[-1].json()["error"]["message"]
        assert len(sessions_of(client, A)) == CAP
    finally:
        delete_all(client)


# --- jobs: readable by the key that made them only ------------------------------------------------

JOB = {"verifier": "exact", "samples": [{"id": "s", "response": "4", "reference": "4"}]}


def test_a_job_is_read_only_with_the_key_that_submitted_it(client):
    accepted = client.post("/v1/jobs", json=JOB, headers=A)
    assert accepted.status_code == 202, accepted.text
    job = f"/v1/jobs/{accepted.json()['job_id']}"
    assert client.get(job, headers=A).status_code == 200
    assert client.get(job, headers=[("authorization", "bearer key-a"), ("x-api-key", "key-b")]).status_code == 200
    for other in (B, [*B, ("x-api-key", "key-a")], [*B, *A]):  # two Authorization headers: the first is checked
        answer = client.get(job, headers=other)
        assert answer.status_code == 404 and "no job" in answer.json()["error"]["message"]
    assert client.get(job, headers=[("authorization", "Junk key-a")]).status_code == 401
    assert client.get(job).status_code == 401


# --- the API's description -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/docs", "/openapi.json", "/redoc"])
def test_the_api_docs_follow_the_keys(client, path):
    refused = client.get(path)
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Basic")
    assert "/v1/score" not in refused.text
    assert client.get(path, headers=A).status_code == 200
    assert client.get(path, auth=("anyone", "key-b")).status_code == 200  # a browser's answer to the challenge
    assert client.get(path, auth=("anyone", "owner-6")).status_code == 401


def test_the_schema_still_describes_the_routes():
    with TestClient(create_app(Settings())) as open_client:  # no keys: open, as FastAPI's own was
        paths = open_client.get("/openapi.json").json()["paths"]
    assert {"/v1/score", "/v1/jobs", "/v1/sessions"} <= set(paths)
    assert not {"/docs", "/redoc", "/openapi.json"} & set(paths)
