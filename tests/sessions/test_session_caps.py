"""The cap of live sessions per key holds under a burst of concurrent creations.

2,000 concurrent ``POST /v1/sessions`` from two keys once left 72 and 71 live sessions against a cap
of 64: a creation still starting its sandbox was counted against the host's cap, not its key's,
so every creation of a burst saw the same few registered sessions and went ahead. Here the cap is
small (3) and the host's room larger (16), so the race, where it exists, shows at once.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from types import SimpleNamespace

import httpx
from fastapi import FastAPI
from serve_support import needs_bubblewrap

from rewardhub.api.auth import Authenticator
from rewardhub.api.errors import install_error_handlers
from rewardhub.api.routes import sessions
from rewardhub.sessions import LocalSessions, SessionManager, SessionSettings, key_owner

KEYS = ("key-a", "key-b")
CAP = 3
BURST = 2000
SETTINGS = SessionSettings(
    max_sessions=16, max_per_key=CAP, create_rate_per_s=1e6, create_burst=BURST, spares=0, reap_interval_s=0.2
)


def keyed_app(manager: SessionManager) -> FastAPI:
    app = FastAPI()
    app.state.service = SimpleNamespace(  # the fields of rewardhub.api.service.Service these routes read
        auth=Authenticator(list(KEYS)),
        settings=SimpleNamespace(max_request_bytes=1 << 20, sandbox_backend="bwrap"),
        sessions=LocalSessions(manager),
    )
    install_error_handlers(app)
    app.include_router(sessions.router)
    return app


async def burst(app: FastAPI) -> list[tuple[str, int, str]]:
    """Every creation at once, the two keys interleaved: (key, status, error message). In process
    (ASGI), so the burst is not queued behind a client's connection pool: the routes hand each
    creation to their thread pool, where they meet the manager's lock together."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://rewardhub", timeout=300) as client:

        async def create(key: str) -> tuple[str, int, str]:
            answer = await client.post("/v1/sessions", json={}, headers={"Authorization": f"Bearer {key}"})
            message = answer.json().get("error", {}).get("message", "") if answer.status_code != 201 else ""
            return key, answer.status_code, message

        return await asyncio.gather(*(create(KEYS[n % 2]) for n in range(BURST)))


def test_concurrent_creations_never_pass_the_cap_per_key():
    needs_bubblewrap()
    manager = SessionManager(SETTINGS)
    try:
        answers = asyncio.run(burst(keyed_app(manager)))
        live = {key: len(manager.list(key_owner(key))) for key in KEYS}
        made = Counter(key for key, status, _ in answers if status == 201)
        refusals = Counter(message.split(" of ")[0] for _, status, message in answers if status != 201)
        assert {status for _, status, _ in answers} == {201, 429}  # a clear refusal, never an error
        assert live == dict(made) and all(1 <= n <= CAP for n in live.values()), (live, refusals)
        assert set(refusals) <= {"this API key holds its maximum", "this host holds its maximum"}
    finally:
        manager.close()
