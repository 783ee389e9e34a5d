"""The host limits of sessions, read from ``REWARDHUB_SESSION_*`` environment variables.

One process's :class:`~rewardhub.sessions.manager.SessionManager` enforces them; with
``--api-workers`` above 1 that is the ``rewardhub serve`` process, with ``execution: celery`` each
session worker.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["SessionSettings"]


class SessionSettings(BaseSettings):
    """Host limits of sessions: ``REWARDHUB_SESSION_*`` environment variables."""

    model_config = SettingsConfigDict(env_prefix="REWARDHUB_SESSION_", extra="forbid", frozen=True)

    max_sessions: int = Field(256, ge=1, description="Live sessions in this service process.")
    max_per_key: int = Field(64, ge=1, description="Live sessions per API key.")
    create_rate_per_s: float = Field(20.0, gt=0, description="Sustained session creations per second (all keys).")
    create_burst: int = Field(40, ge=1, description="Creations allowed at once before the rate applies.")
    idle_ttl_s: float = Field(600.0, gt=0, description="Default and largest idle time before a session expires.")
    max_lifetime_s: float = Field(4 * 3600.0, gt=0, description="Largest hard lifetime a session may ask for.")
    max_call_timeout_s: float = Field(300.0, gt=0, description="Largest per-call timeout.")
    max_memory_mb: int = Field(4096, ge=32, description="Largest memory a session may ask for.")
    preload: tuple[str, ...] = Field(
        ("json", "math", "re", "collections", "itertools", "functools"),
        description="Modules each session's server imports once (fewer: less memory per idle session).",
    )
    reap_interval_s: float = Field(1.0, gt=0, description="How often expired and dead sessions are ended.")
    spares: int = Field(
        2, ge=0, description="Sandboxes started ahead of the next creations (a creation then takes ~30 ms, not ~0.5 s)."
    )
