"""The service carries its sessions, typed as the one protocol, whichever process holds them.

The session routes, the ORS surface and the score pipeline read ``service.sessions`` (through
``rewardhub.api.deps``), so which implementation it is decides where a session lives: a host in
this process, or a client of the ``rewardhub serve`` process above ``--api-workers N``.
"""

from __future__ import annotations

from rewardhub.api.app import create_app
from rewardhub.api.service import Service
from rewardhub.sessions import LocalSessions, SessionClient, SessionHost, Sessions
from rewardhub.sessions.grants import granted_owner
from rewardhub.settings import Settings


def test_a_lone_service_hosts_its_sessions_and_grants_with_its_host() -> None:
    service: Service = create_app(Settings.load(workers=1)).state.service
    try:
        assert isinstance(service.sessions, LocalSessions) and isinstance(service.sessions, Sessions)
        assert isinstance(service.session_host, SessionHost) and service.sessions is service.session_host.local
        given = service.sessions.grant("owner-a")
        assert given is not None and granted_owner(service.session_host.token, given) == "owner-a"
        assert not service.sessions.opened  # an app that never opens a session starts no sandbox
    finally:
        service.close_sessions()


def test_an_api_worker_asks_the_host_above_it() -> None:
    host = SessionHost()
    host.serve()
    try:
        service: Service = create_app(Settings.load(workers=1), session_host=(host.address, host.token)).state.service
        assert isinstance(service.sessions, SessionClient) and service.session_host is None
        assert service.sessions.describe() == {
            "live": 0,
            "created": 0,
            "by_key": {},
        }  # the host answers, over its socket
        given = service.sessions.grant("owner-a")
        assert granted_owner(host.token, given) == "owner-a"  # a grant the host, not the worker, accepts
        service.close_sessions()
    finally:
        host.close()
