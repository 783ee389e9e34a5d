"""The session manager: every live session of one process, their limits, and the reaper.

A session is one :class:`~rewardhub.sessions.sandbox.SessionSandbox` (its own bubblewrap
namespaces, uid, cgroups, seccomp filter, scratch), owned by the API key that created it and by this
process: sandboxes are started with ``--die-with-parent`` from one long-lived thread, so a service
killed with SIGKILL takes every session's processes and scratch (tmpfs in the sandbox's own mount
namespace) with it; a later start sweeps the empty cgroups they leave. Session ids carry this
process's boot token, so after a restart an old id is refused as lost, with the reason.

What a session may use: a per-call timeout, an idle TTL, a hard lifetime (the reaper thread ends it
on time, whatever it is doing), memory and process limits for its whole life, at most
``max_per_key`` sessions per API key and ``max_sessions`` in this process, and a creation rate
(token bucket) past which creating answers 429 with Retry-After. A session whose sandbox dies
(killed from outside) ends alone: the others keep working, and its id answers "lost".

How an ended session answers (never an empty success), as the API contract has it: expired (idle
TTL or lifetime) is 410 ``session_expired``; lost (its sandbox died, the service ended it, or an
earlier run of the service made it) is 410 ``session_lost``; deleted or never known is 404
``session_not_found`` (:mod:`rewardhub.sessions.errors`). Each message says which.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import InvalidRequest, Overloaded, RewardhubError
from ..sandbox.cgroups import sweep
from ..sandbox.errors import SandboxError, SandboxUnavailable
from ..sandbox.isolation import CGROUP_PREFIX, uid_taken
from ..sandbox.settings import SandboxSettings
from ..sandbox.verdicts import RunResult, sandbox_failure
from .errors import SessionBusy, SessionExpired, SessionLost, SessionNotFound
from .fresh import ARTIFACT_FILE_BYTES, ARTIFACT_TOTAL_BYTES, artifact_paths, collect, run_fresh
from .sandbox import SessionLimits, SessionSandbox
from .settings import SessionSettings

__all__ = [
    "RUNTIMES",
    "LiveSession",
    "SessionManager",
    "SessionStats",
    "key_owner",
]

Runtime = Literal["python", "bash"]
RUNTIMES: tuple[str, ...] = ("python", "bash")
ID_SHAPE = re.compile(r"s-([0-9a-f]{8})-[0-9a-f]{16}")
"""A session id: ``s-``, the boot token of the process that made it, and 64 random bits."""
TOMBSTONES = 100_000
"""Ended sessions remembered (to say why an id is gone); older ones answer "not found"."""


def key_owner(token: str | None) -> str:
    """Who owns a session: a digest of the caller's API key (never the key itself)."""
    return hashlib.sha256((token or "").encode()).hexdigest()[:16]


@dataclass
class LiveSession:
    """One session as its manager holds it: the sandbox, its owner, its clocks and its lock.

    (Not the caller's handle on a session, :class:`rewardhub.integrations.sessions.Session`, which
    speaks HTTP to the routes that reach this.)"""

    id: str
    owner: str
    runtime: str
    limits: SessionLimits
    idle_ttl_s: float
    lifetime_s: float
    box: SessionSandbox
    created: float = field(default_factory=time.time)
    last_used: float = field(default_factory=time.monotonic)
    started: float = field(default_factory=time.monotonic)
    calls: int = 0
    busy: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    tags: dict[str, Any] = field(default_factory=dict)
    """What a protocol served on sessions keeps with one (ORS: its session id and task), found by :meth:`SessionManager.find`."""

    def expires_in(self, now: float) -> float:
        return min(self.last_used + self.idle_ttl_s, self.started + self.lifetime_s) - now

    def describe(self, now: float | None = None) -> dict[str, Any]:
        now = time.monotonic() if now is None else now
        left = max(0.0, self.expires_in(now))
        return {
            "session_id": self.id,
            "id": self.id,
            "runtime": self.runtime,
            "created_at": self.created,
            "age_s": round(now - self.started, 3),
            "idle_s": round(now - self.last_used, 3),
            "calls": self.calls,
            "busy": self.busy,
            "idle_ttl_s": self.idle_ttl_s,
            "lifetime_s": self.lifetime_s,
            "expires_in_s": round(left, 3),
            "expires_at": round(time.time() + left, 3),
            "timeout_s": self.limits.call_timeout_s,
            "limits": {"memory_mb": self.limits.memory_mb, "max_processes": self.limits.max_processes},
            **({"tags": self.tags} if self.tags else {}),
        }


@dataclass(frozen=True)
class _Ended:
    reason: str
    kind: str
    """One of :data:`END_KINDS`: which error a later call gets."""

    def error(self, session_id: str) -> RewardhubError:
        message = f"session {session_id!r} {self.reason}"
        if self.kind == "deleted":
            return SessionNotFound(message)
        return SessionExpired(message) if self.kind in ("expired", "lifetime") else SessionLost(message)


END_KINDS: tuple[str, ...] = ("deleted", "expired", "lifetime", "killed", "lost")
"""Why sessions end, as counted: deleted by their key, idle past their TTL, at their hard lifetime,
their sandbox killed from outside (or dead during a call), lost (the sandbox failed, the service stopped)."""
CALL_BUCKETS: tuple[float, ...] = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
"""Upper bounds (seconds) of the call-latency histogram."""


@dataclass
class SessionStats:
    """What the host counted since it started: the numbers behind ``/metrics``' session rows."""

    created: int = 0
    ended: dict[str, int] = field(default_factory=lambda: dict.fromkeys(END_KINDS, 0))
    calls: int = 0
    call_seconds_sum: float = 0.0
    call_buckets: list[int] = field(default_factory=lambda: [0] * len(CALL_BUCKETS))
    """Calls that took at most each bound of :data:`CALL_BUCKETS` (cumulative, as Prometheus counts)."""
    rejected: dict[str, int] = field(default_factory=lambda: {"host_full": 0, "key_full": 0, "rate": 0})

    def observe_call(self, seconds: float) -> None:
        self.calls += 1
        self.call_seconds_sum += seconds
        for i, bound in enumerate(CALL_BUCKETS):
            if seconds <= bound:
                self.call_buckets[i] += 1

    def as_dict(self, live: int) -> dict[str, Any]:
        return {
            "live": live,
            "created": self.created,
            "ended": dict(self.ended),
            "calls": self.calls,
            "call_seconds": {
                "sum": self.call_seconds_sum,
                "buckets": list(zip(CALL_BUCKETS, self.call_buckets, strict=True)),
            },
            "rejected": dict(self.rejected),
        }


class SessionManager:
    """Every live session of this process, their limits, and the reaper that ends them on time."""

    def __init__(self, settings: SessionSettings | None = None, sandbox: SandboxSettings | None = None) -> None:
        self.settings = settings or SessionSettings()
        base = sandbox or SandboxSettings()
        self.sandbox_settings = base.model_copy(update={"preload": self.settings.preload})
        self.boot = secrets.token_hex(4)
        """This process's token in every id it hands out: an id without it is from another run."""
        self._sessions: dict[str, LiveSession] = {}
        self._ended: OrderedDict[str, _Ended] = OrderedDict()
        self._lock = threading.Lock()
        self._tokens = float(self.settings.create_burst)
        self._tokens_at = time.monotonic()
        self._starting = 0
        self._starting_by: Counter[str] = Counter()  # the same creations, by owner
        self.counts = SessionStats()
        self._closed = threading.Event()
        if os.geteuid() == 0 and self.sandbox_settings.backend != "docker":
            sweep(CGROUP_PREFIX, _held)  # cgroups of sessions whose service was killed
        self._spares: list[SessionSandbox] = []
        self._want_spares = threading.Event()
        self._reaper = threading.Thread(target=self._reap_forever, name="session-reaper", daemon=True)
        self._reaper.start()
        if self.settings.spares:
            self._want_spares.set()
            threading.Thread(target=self._keep_spares, name="session-spares", daemon=True).start()
        atexit.register(self.close)

    # --- the API's operations -------------------------------------------------------------------

    def create(
        self,
        owner: str,
        runtime: str,
        files: Mapping[str, str | bytes] | None = None,
        limits: SessionLimits | None = None,
        idle_ttl_s: float | None = None,
        tags: Mapping[str, Any] | None = None,
    ) -> LiveSession:
        if runtime not in RUNTIMES:
            raise InvalidRequest(f"unknown runtime {runtime!r}: one of {', '.join(RUNTIMES)}")
        limits = limits or SessionLimits(lifetime_s=self.settings.max_lifetime_s)
        if limits.lifetime_s > self.settings.max_lifetime_s:
            raise InvalidRequest(f"lifetime_s may be at most {self.settings.max_lifetime_s:g}")
        if limits.memory_mb > self.settings.max_memory_mb:
            raise InvalidRequest(f"memory_mb may be at most {self.settings.max_memory_mb}")
        if limits.call_timeout_s > self.settings.max_call_timeout_s:
            raise InvalidRequest(f"timeout_s may be at most {self.settings.max_call_timeout_s:g}")
        ttl = self.settings.idle_ttl_s if idle_ttl_s is None else idle_ttl_s
        if ttl > self.settings.idle_ttl_s:
            raise InvalidRequest(f"ttl_s may be at most {self.settings.idle_ttl_s:g}")
        self._admit(owner)
        try:
            box = self._take_spare(limits) or SessionSandbox(self.sandbox_settings, limits)
        except BaseException:
            with self._lock:
                self._unadmit(owner)
            raise
        try:
            box.start_kernel()  # now, under the session's limits: its first call finds it warm
            failed = box.write_files(files or {})
        except BaseException:
            box.close()
            with self._lock:
                self._unadmit(owner)
            raise
        if failed is not None:
            box.close()
            with self._lock:
                self._unadmit(owner)
            raise InvalidRequest(f"could not write the session's files: {failed.details.get('message', failed.stderr)}")
        session = LiveSession(
            id=f"s-{self.boot}-{secrets.token_hex(8)}",
            owner=owner,
            runtime=runtime,
            limits=limits,
            idle_ttl_s=ttl,
            lifetime_s=limits.lifetime_s,
            box=box,
            tags=dict(tags or {}),
        )
        with self._lock:
            self._unadmit(owner)
            if self._closed.is_set():
                box.close()
                raise SandboxError("the service is shutting down")
            self._sessions[session.id] = session
            self.counts.created += 1
        return session

    def get(self, session_id: str, owner: str) -> LiveSession:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None and session.owner == owner:
                return session
            ended = self._ended.get(session_id)
        if session is not None:  # another key's: the same answer as an id that never was
            raise SessionNotFound(f"no session {session_id!r}")
        if ended is not None:
            raise ended.error(session_id)
        shape = ID_SHAPE.fullmatch(session_id)
        if shape is not None and shape.group(1) != self.boot:
            raise SessionLost(
                f"session {session_id!r} was made by an earlier run of this service (or another of its "
                "processes): sessions end with the service process that holds them"
            )
        raise SessionNotFound(f"no session {session_id!r}")

    def find(self, owner: str, tag: str, value: Any) -> LiveSession | None:
        """The owner's live session whose ``tag`` is ``value``, if any."""
        with self._lock:
            for session in self._sessions.values():
                if session.owner == owner and session.tags.get(tag) == value:
                    return session
        return None

    def run(self, session_id: str, owner: str, request: dict[str, Any], timeout_s: float | None = None) -> RunResult:
        """One call in a session (one at a time per session: a second concurrent call is 409).
        ``{"code": ...}`` is in the session's runtime: Python, or for ``bash`` a command; ``"stdin"``
        beside it is the call's standard input. ``timeout_s`` None: the session's per-call default."""
        session = self.get(session_id, owner)
        if "code" in request and session.runtime != "python":
            request = {**{k: v for k, v in request.items() if k != "code"}, "command": request["code"]}
        if timeout_s is None:
            timeout_s = session.limits.call_timeout_s
        if timeout_s > self.settings.max_call_timeout_s:
            raise InvalidRequest(f"timeout_s may be at most {self.settings.max_call_timeout_s:g}")
        if not session.lock.acquire(blocking=False):
            raise SessionBusy(f"session {session_id!r} is running another call; calls of a session run one at a time")
        try:
            session.busy = True
            left = session.started + session.lifetime_s - time.monotonic()
            if left <= 0:
                raise SessionExpired(f"session {session_id!r} reached its lifetime of {session.lifetime_s:g} s")
            began = time.monotonic()
            try:
                result: RunResult | None = session.box.call(request, min(timeout_s, left))
            except SandboxError as exc:
                result, failure = None, exc.message
            session.calls += 1
            with self._lock:
                self.counts.observe_call(time.monotonic() - began)
        finally:
            session.busy = False
            session.last_used = time.monotonic()
            session.lock.release()
        if result is None:
            self._end(session, f"was lost: its sandbox failed ({failure})", kind="lost")
            raise SessionLost(f"session {session_id!r} was lost: its sandbox failed ({failure})")
        with self._lock:
            ended_meanwhile = session_id not in self._sessions
        if ended_meanwhile:  # its lifetime ran out, or it was deleted, during the call: say so, not the kill
            self.get(session_id, owner)
        if result.verdict == "sandbox_error" and not session.box.alive:
            self._end(session, "was lost: its sandbox died during a call", kind="killed")
        return result

    def run_tests(
        self,
        session_id: str,
        owner: str,
        command: str,
        timeout_s: float,
        files: Mapping[str, str] | None = None,
        wait_s: float = 0.0,
    ) -> RunResult:
        """Judge the session's final state: ``command`` on its files, in a fresh program (the kernel stops).
        ``wait_s``: how long to wait for a call in flight (a verifier's samples of one session take turns)."""
        with self._judging(session_id, owner, wait_s) as session:
            return session.box.run_tests(command, min(timeout_s, self.settings.max_call_timeout_s), files)

    def run_tests_fresh(
        self,
        session_id: str,
        owner: str,
        command: str,
        timeout_s: float,
        files: Mapping[str, str] | None,
        artifacts: Sequence[str],
        max_file_bytes: int = ARTIFACT_FILE_BYTES,
        max_total_bytes: int = ARTIFACT_TOTAL_BYTES,
        wait_s: float = 0.0,
    ) -> RunResult:
        """Judge the session from its declared ``artifacts`` in a new sandbox (:mod:`.fresh`): its
        processes stop, the artifacts are copied out, the command runs where the session never was.
        The session's lock is held throughout (one verification per session at a time, its calls wait)."""
        try:
            declared = artifact_paths(artifacts)
        except ValueError as exc:
            raise InvalidRequest(str(exc)) from None
        if not declared:
            raise InvalidRequest("a fresh verification needs the session's artifacts declared: none were")
        with self._judging(session_id, owner, wait_s) as session:
            started = time.monotonic()
            try:
                collected = collect(session.box, declared, max_file_bytes, max_total_bytes)
            except SandboxError as exc:
                return sandbox_failure(exc.message, verification="fresh")
            if not collected.complete:
                return collected.unearned((time.monotonic() - started) * 1000.0)
            timeout_s = min(timeout_s, self.settings.max_call_timeout_s)
            spare = self._take_spare(session.limits)  # started ahead, never used by any session
            return run_fresh(self.sandbox_settings, session.limits, command, timeout_s, files, collected, spare)

    @contextmanager
    def _judging(self, session_id: str, owner: str, wait_s: float) -> Iterator[LiveSession]:
        """The session, held for a judgement: its lock (waiting at most ``wait_s`` for a call in
        flight), marked busy, and its idle clock restarted when the judgement ends."""
        session = self.get(session_id, owner)
        acquired = session.lock.acquire(timeout=wait_s) if wait_s > 0 else session.lock.acquire(blocking=False)
        if not acquired:
            raise SessionBusy(f"session {session_id!r} is running another call")
        try:
            session.busy = True
            yield session
        finally:
            session.busy = False
            session.last_used = time.monotonic()
            session.lock.release()

    def run_code_tests(
        self,
        session_id: str,
        owner: str,
        program: str,
        specs: list[dict[str, Any]],
        test_timeout_s: float,
        budget_s: float,
        stop_on_failure: bool = False,
    ) -> list[RunResult | None]:
        """The ``code`` verifier's tests in the session, each in a fork of its kernel (see
        :meth:`SessionSandbox.run_code_test`); None for a test not run (past ``budget_s``, or after
        a test that surely failed when ``stop_on_failure``)."""
        session = self.get(session_id, owner)
        test_timeout_s = min(test_timeout_s, self.settings.max_call_timeout_s)
        # Several samples of one request may name one session (a group): they take turns, each waiting
        # at most its budget, then running its tests within the budget (the sample's hard limit is the
        # pool's: a sample that waited too long is a timeout, never a 0).
        if not session.lock.acquire(timeout=budget_s):
            raise SessionBusy(f"session {session_id!r} was busy for the sample's whole time budget ({budget_s:g} s)")
        runs: list[RunResult | None] = []
        try:
            with self._lock:
                ended = session_id not in self._sessions
            if ended:  # it ended while this sample waited its turn: say why
                self.get(session_id, owner)
            session.busy = True
            deadline = time.monotonic() + budget_s
            for spec in specs:
                stopped = stop_on_failure and runs and (runs[-1] is None or not runs[-1].ok)
                if stopped or time.monotonic() > deadline:
                    runs.append(None)
                    continue
                try:
                    runs.append(session.box.run_code_test(program, spec, test_timeout_s))
                except SandboxError as exc:
                    runs.append(RunResult("sandbox_error", None, "", "", 0.0, None, {"message": exc.message}))
        finally:
            session.busy = False
            session.last_used = time.monotonic()
            session.lock.release()
        return runs

    def delete(self, session_id: str, owner: str) -> None:
        session = self.get(session_id, owner)
        self._end(session, "was deleted", wait=False, kind="deleted")

    def list(self, owner: str | None = None) -> list[LiveSession]:
        with self._lock:
            return [s for s in self._sessions.values() if owner is None or s.owner == owner]

    def describe(self) -> dict[str, Any]:
        now = time.monotonic()
        by_owner: dict[str, list[dict[str, Any]]] = {}
        for session in self.list():
            by_owner.setdefault(session.owner, []).append(session.describe(now))
        return {"live": sum(map(len, by_owner.values())), "created": self.counts.created, "by_key": by_owner}

    def stats(self) -> dict[str, Any]:
        """Counts since this manager started, and the sessions live now (``/metrics``)."""
        with self._lock:
            return self.counts.as_dict(len(self._sessions))

    def close(self) -> None:
        """End every session (the service is stopping)."""
        self._closed.set()
        self._want_spares.set()
        with self._lock:
            spares, self._spares = self._spares, []
        for spare in spares:
            spare.close()
        with self._lock:
            sessions = list(self._sessions.values())
        for session in sessions:
            self._end(session, "ended with the service", kind="lost")

    # --- limits and ends ------------------------------------------------------------------------

    def _admit(self, owner: str) -> None:
        with self._lock:
            if self._closed.is_set():
                raise SandboxError("the service is shutting down")
            live = len(self._sessions) + self._starting
            if live >= self.settings.max_sessions:
                self.counts.rejected["host_full"] += 1
                raise Overloaded(
                    f"this host holds its maximum of {self.settings.max_sessions} sessions", retry_after=5.0
                )
            # creations still starting count too: else a burst of them all pass, each seeing the same few
            mine = sum(1 for s in self._sessions.values() if s.owner == owner) + self._starting_by[owner]
            if mine >= self.settings.max_per_key:
                self.counts.rejected["key_full"] += 1
                raise Overloaded(
                    f"this API key holds its maximum of {self.settings.max_per_key} sessions: delete one first",
                    retry_after=5.0,
                )
            now = time.monotonic()
            rate, burst = self.settings.create_rate_per_s, self.settings.create_burst
            self._tokens = min(float(burst), self._tokens + (now - self._tokens_at) * rate)
            self._tokens_at = now
            if self._tokens < 1:
                self.counts.rejected["rate"] += 1
                raise Overloaded(
                    f"sessions are being created faster than {rate:g} per second", retry_after=(1 - self._tokens) / rate
                )
            self._tokens -= 1
            self._starting += 1
            self._starting_by[owner] += 1

    def _unadmit(self, owner: str) -> None:
        """A creation :meth:`_admit` let in is over (made or failed); called under the lock."""
        self._starting -= 1
        self._starting_by[owner] -= 1
        if not self._starting_by[owner]:
            del self._starting_by[owner]

    def _end(self, session: LiveSession, reason: str, kind: str, wait: bool = True) -> None:
        """Forget the session (its id answers ``reason`` from now on), stop a call in flight, close it
        (``wait=False``: in a thread of its own, so a DELETE does not wait for the sandbox to exit).
        ``kind``: one of :data:`END_KINDS`, what the counts file it under."""
        with self._lock:
            if self._sessions.pop(session.id, None) is None:
                return
            self._ended[session.id] = _Ended(reason, kind)
            self.counts.ended[kind] += 1
            while len(self._ended) > TOMBSTONES:
                self._ended.popitem(last=False)
        if not wait:
            threading.Thread(target=self._close_box, args=(session,), name="session-close", daemon=True).start()
            return
        self._close_box(session)

    def _close_box(self, session: LiveSession) -> None:
        held = session.lock.acquire(blocking=False)
        if not held:
            session.box.sandbox.kill_run()  # the call in flight answers at once (timeout, state lost)
            held = session.lock.acquire(timeout=30.0)
        try:
            session.box.close()
        finally:
            if held:
                session.lock.release()

    # --- spares --------------------------------------------------------------------------------

    def _take_spare(self, limits: SessionLimits) -> SessionSandbox | None:
        """A sandbox started ahead (no kernel yet: it starts under this session's limits)."""
        while True:
            with self._lock:
                spare = self._spares.pop() if self._spares else None
            self._want_spares.set()
            if spare is None:
                return None
            if spare.alive:
                spare.limits = limits
                return spare
            spare.close()

    def _keep_spares(self) -> None:
        while True:
            self._want_spares.wait()
            if self._closed.is_set():
                return
            with self._lock:
                room = len(self._sessions) + self._starting + len(self._spares) < self.settings.max_sessions
                missing = room and len(self._spares) < self.settings.spares
                if not missing:
                    self._want_spares.clear()
                    continue
            try:
                spare = SessionSandbox(self.sandbox_settings, SessionLimits())
            except (SandboxError, SandboxUnavailable):  # the next creation starts its own, and says why
                self._want_spares.clear()
                continue
            with self._lock:
                if not self._closed.is_set():
                    self._spares.append(spare)
                    spare = None
            if spare is not None:
                spare.close()
                return

    def _reap_forever(self) -> None:
        while not self._closed.wait(self.settings.reap_interval_s):
            self.reap()

    def reap(self) -> None:
        """End sessions past their idle TTL or lifetime, and those whose sandbox died."""
        if len(self._spares) < self.settings.spares:
            self._want_spares.set()
        now = time.monotonic()
        for session in self.list():
            if now >= session.started + session.lifetime_s:
                self._end(
                    session,
                    f"expired: it reached its lifetime of {session.lifetime_s:g} s",
                    wait=False,
                    kind="lifetime",
                )
            elif not session.busy and now >= session.last_used + session.idle_ttl_s:
                self._end(
                    session,
                    f"expired: idle for more than its TTL of {session.idle_ttl_s:g} s",
                    wait=False,
                    kind="expired",
                )
            elif not session.busy and not session.box.alive:
                self._end(
                    session,
                    "was lost: its sandbox died (killed from outside?)",
                    wait=False,
                    kind="killed",
                )


def _held(cgroup_name: str) -> bool:
    uid = cgroup_name.removeprefix(CGROUP_PREFIX)
    return not uid.isdigit() or uid_taken(int(uid))
