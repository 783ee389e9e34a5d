"""What the session tests share: small host limits, an app with only the session routes, that app
served on a real port in a thread (for callers that speak HTTP), and what a test of the host's
processes reads in /proc (a process's descendants, whether one is alive, mount namespaces in use)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

from fastapi import FastAPI
from serve_support import in_thread

from rewardhub.api.auth import Authenticator
from rewardhub.api.errors import install_error_handlers
from rewardhub.api.routes import sessions
from rewardhub.sessions import LocalSessions, SessionManager, SessionSettings

SMALL = SessionSettings(
    max_sessions=48, max_per_key=32, create_rate_per_s=50, create_burst=50, idle_ttl_s=60, reap_interval_s=0.2, spares=1
)


def session_service(manager: SessionManager, **fields: object) -> SimpleNamespace:
    """The fields of :class:`rewardhub.api.service.Service` the session routes read, for ``manager``'s
    sessions (an open service: the Bearer token labels the owner), and any others a test's routes read."""
    return SimpleNamespace(
        auth=Authenticator([]),
        settings=SimpleNamespace(max_request_bytes=1 << 20, sandbox_backend="bwrap"),
        sessions=LocalSessions(manager),
        **fields,
    )


def session_app(manager: SessionManager) -> FastAPI:
    app = FastAPI()
    app.state.service = session_service(manager)
    install_error_handlers(app)
    app.include_router(sessions.router)
    return app


@contextmanager
def served(manager: SessionManager) -> Iterator[str]:
    """The session routes on a free local port, in a thread of this process; the URL."""
    with in_thread(session_app(manager)) as url:
        yield url


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def mount_namespaces_in_use() -> set[str]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found.add(os.readlink(entry / "ns" / "mnt"))
            except OSError:
                continue
    return found
