"""The session host's socket: the service's own processes reach one manager through it, with the token;
a verifier judges through it with a grant, which lets it judge its caller's sessions only, and only
until it expires; anything else is refused with the reason, and the host keeps serving."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from rewardhub.errors import InvalidRequest
from rewardhub.sandbox.errors import SandboxError
from rewardhub.sessions import (
    GRANT_S,
    LocalSessions,
    SessionClient,
    SessionHost,
    SessionManager,
    SessionNotFound,
    grant,
    judge_with_grant,
)


@pytest.fixture(scope="module")
def host(manager: SessionManager) -> Iterator[SessionHost]:
    served = SessionHost()
    served.local = LocalSessions(manager)  # the module's manager, behind a socket of its own
    served.serve()
    yield served
    served.close()  # and the manager with it, the module's last user


@pytest.fixture(scope="module")
def session(host: SessionHost) -> str:
    client = SessionClient(host.address, host.token)
    try:
        return client.create("owner-a", "python", {"answer.txt": "42"}, None, None)["id"]
    finally:
        client.close()


def test_the_token_opens_every_operation_and_a_wrong_one_none(host, session):
    with_token = SessionClient(host.address, host.token)
    wrong = SessionClient(host.address, "not-the-token")
    try:
        assert with_token.run(session, "owner-a", {"code": "open('answer.txt').read()"}, 10).stdout == "'42'\n"
        with pytest.raises(SandboxError, match="wrong session host token"):
            wrong.get(session, "owner-a")
        with pytest.raises(SessionNotFound):  # the same answer as through the routes: another key's is unknown
            with_token.get(session, "owner-b")
    finally:
        with_token.close()
        wrong.close()


def test_a_grant_judges_its_callers_sessions_until_it_expires(host, session):
    passed = judge_with_grant(session, host.grant("owner-a"), 'test "$(cat answer.txt)" = 42', 10, {})
    assert (passed.verdict, passed.exit_code) == ("ok", 0)
    with pytest.raises(SessionNotFound):
        judge_with_grant(session, host.grant("owner-b"), "true", 10, {})
    forged = {**host.grant("owner-b"), "owner": "owner-a"}
    with pytest.raises(InvalidRequest, match="not this service's"):
        judge_with_grant(session, forged, "true", 10, {})
    stale = grant(host.address, host.token, "owner-a", now=time.time() - GRANT_S - 1)
    with pytest.raises(InvalidRequest, match="expired"):
        judge_with_grant(session, stale, "true", 10, {})
    with pytest.raises(SandboxError, match="cannot be reached"):
        judge_with_grant(session, {**host.grant("owner-a"), "host": "@no-such-host"}, "true", 10, {})


def test_the_operator_pages_poll_starts_no_sandbox():
    fresh = SessionHost()
    try:
        assert fresh.local.describe() == {"live": 0, "created": 0, "by_key": {}}
        assert fresh.local.stats() is None and not fresh.local.opened  # no manager, so no spare sandbox either
    finally:
        fresh.close()
