"""The one protocol of a service's sessions: every implementation declares it and keeps its signatures.

The routes, the ORS surface and the score pipeline hold a :class:`rewardhub.sessions.Sessions` and
never ask which one; these tests are what lets them. A parameter renamed, dropped or reordered in one
implementation (``create``'s ``tags``, ``run_tests``' ``files``) fails here, not in production on the
one deployment shape that uses it.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from rewardhub.sessions import LocalSessions, SessionClient, SessionHost, SessionManager, Sessions
from rewardhub.sessions.grants import granted_owner
from rewardhub.sessions.protocol import OPERATIONS

ROOT = Path(__file__).resolve().parents[2]


def implementations() -> list[type]:
    found: list[type] = [LocalSessions, SessionClient]
    try:
        from rewardhub.execution.celery_sessions import CelerySessions
    except ImportError:  # celery is an extra
        return found
    return [*found, CelerySessions]


def test_the_protocol_names_the_eleven_operations_and_the_grant() -> None:
    declared = {name for name, _ in inspect.getmembers(Sessions, inspect.isfunction) if not name.startswith("_")}
    assert declared == set(OPERATIONS)
    assert len(OPERATIONS) == 12 and OPERATIONS[-1] == "grant"
    assert "run_tests_fresh" in OPERATIONS  # verification in a fresh sandbox, wherever the session lives


@pytest.mark.parametrize("implementation", implementations(), ids=lambda cls: cls.__name__)
def test_each_implementation_declares_the_protocol(implementation: type) -> None:
    assert issubclass(implementation, Sessions)
    missing = [name for name in OPERATIONS if getattr(implementation, name) is getattr(Sessions, name)]
    assert not missing, f"{implementation.__name__} inherits the protocol's empty {missing}"


@pytest.mark.parametrize("implementation", implementations(), ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_each_operation_takes_the_protocols_parameters(implementation: type, operation: str) -> None:
    """The same names in the same order with the same defaults; an implementation may add parameters
    of its own only after them and only with a default (a caller of the protocol never passes them)."""
    wanted = list(inspect.signature(getattr(Sessions, operation)).parameters.values())
    given = list(inspect.signature(getattr(implementation, operation)).parameters.values())
    assert [(p.name, p.default) for p in given[: len(wanted)]] == [(p.name, p.default) for p in wanted]
    extra = given[len(wanted) :]
    assert all(p.default is not inspect.Parameter.empty for p in extra), extra


def test_a_manager_no_host_serves_grants_nothing() -> None:
    """A sample judged in such sessions carries no grant: no verifier could reach them."""
    sessions = LocalSessions(lambda: SessionManager())
    assert sessions.grant("owner-a") is None
    assert not sessions.opened  # asking for a grant starts no manager


def test_the_hosts_sessions_grant_what_the_host_accepts() -> None:
    host = SessionHost()
    try:
        given = host.local.grant("owner-a")
        assert given is not None and given["host"] == host.address
        assert granted_owner(host.token, given) == "owner-a"
        assert not host.local.opened
    finally:
        host.close()


def test_one_class_named_session_in_rewardhub() -> None:
    """The caller's handle (rewardhub.integrations.sessions.Session) is the only ``Session``; the
    manager's record of a live one is ``LiveSession``."""
    found = []
    for folder in ("rewardhub", "verifiers", "rm_models", "trainer_client"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno}"
                for node in ast.walk(tree)
                if isinstance(node, ast.ClassDef) and node.name == "Session"
            ]
    assert len(found) == 1 and found[0].startswith("rewardhub/integrations/sessions.py:"), found
