"""Auth and exposure: bearer keys compared in constant time, 401s that leak nothing, per-key
rate limits, and no open service on a public address."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterator

import httpx
import pydantic
import pytest
from starlette.requests import Request

import rewardhub.server
from rewardhub.api import auth
from rewardhub.api.auth import Authenticator
from rewardhub.cli import main
from rewardhub.errors import Unauthorized
from rewardhub.server import EmbeddedServer
from rewardhub.settings import Settings

KEYS = ["alpha-secret-0001", "beta-secret-0002", "rate-secret-0003", "other-secret-0004"]


@pytest.fixture(scope="module")
def keyed_url() -> Iterator[str]:
    with EmbeddedServer(workers=1, api_keys=KEYS, rate_limit_per_s=0.2) as url:
        yield url


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_request_without_a_key_is_401_with_a_bearer_challenge(keyed_url: str) -> None:
    response = httpx.get(f"{keyed_url}/v1/verifiers")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"]["type"] == "unauthorized"


def test_a_wrong_key_gets_the_same_answer_as_no_key_and_names_no_key(keyed_url: str) -> None:
    missing = httpx.get(f"{keyed_url}/v1/verifiers")
    wrong = httpx.get(f"{keyed_url}/v1/verifiers", headers=bearer("alpha-secret-0002"))  # close to a real one
    assert (wrong.status_code, wrong.json()) == (missing.status_code, missing.json())
    exposed = wrong.text + str(dict(wrong.headers))
    assert not any(key in exposed or key[:6] in exposed for key in KEYS)


def test_a_known_key_is_let_in_and_health_needs_none(keyed_url: str) -> None:
    assert httpx.get(f"{keyed_url}/v1/verifiers", headers=bearer("alpha-secret-0001")).status_code == 200
    assert httpx.get(f"{keyed_url}/healthz").status_code == 200


def test_every_key_is_compared_every_time_on_equal_length_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        compared.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", counting)
    authenticator = Authenticator(["k1", "a-much-longer-key-2", "k3"])
    for token in ("k1", "nope", "a-much-longer-key-2"):
        compared.clear()
        request = Request({"type": "http", "headers": [(b"authorization", f"Bearer {token}".encode())]})
        try:
            authenticator(request)
        except Unauthorized:
            pass
        assert compared == [(32, 32)] * 3  # no early exit, and the key's length does not matter


def test_each_key_has_its_own_rate_limit_and_429_says_when_to_retry(keyed_url: str) -> None:
    first = httpx.get(f"{keyed_url}/v1/verifiers", headers=bearer("rate-secret-0003"))
    second = httpx.get(f"{keyed_url}/v1/verifiers", headers=bearer("rate-secret-0003"))
    other = httpx.get(f"{keyed_url}/v1/verifiers", headers=bearer("other-secret-0004"))
    assert first.status_code == 200
    assert second.status_code == 429
    assert second.json()["error"]["type"] == "overloaded"
    assert int(second.headers["retry-after"]) >= 1
    assert other.status_code == 200


def test_the_default_bind_address_is_loopback() -> None:
    assert Settings().host == "127.0.0.1"


def test_production_refuses_a_public_address_without_keys() -> None:
    with pytest.raises(pydantic.ValidationError, match="without API keys"):
        Settings(environment="production", host="0.0.0.0")
    assert Settings(environment="production", host="0.0.0.0", api_keys=["k"]).host == "0.0.0.0"


def test_serving_a_public_address_without_keys_warns(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    started: list[Settings] = []
    monkeypatch.setattr(rewardhub.server, "serve", started.append)
    with caplog.at_level(logging.WARNING, logger="rewardhub"):
        assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 0
    assert "without API keys" in caplog.text
    assert started and started[0].host == "0.0.0.0"
