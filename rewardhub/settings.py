"""Server settings: one pydantic-settings tree, read from flags, environment variables and a YAML
config file (in that order of precedence), with safe defaults.

The top level reads ``REWARDHUB_*``; each section keeps the prefix it has always had, so every
variable name that ever worked still does: ``sandbox`` reads ``REWARDHUB_SANDBOX_*``, ``sessions``
``REWARDHUB_SESSION_*``, ``ors`` ``REWARDHUB_ORS_*``, ``models`` ``REWARDHUB_MODELS_*``. In a config
file a section is a mapping (``sandbox: {backend: docker}``), and the environment overrides it key by
key, as it does the top level. ``rewardhub settings`` lists every key with its variable, default and
meaning (:mod:`rewardhub.settings_reference`).

The tree is built once, where a process starts serving (``rewardhub serve``, an API worker, a Celery
worker), and handed down: the service and its executors take it as an argument, and a pool's worker
processes receive it when they start (:func:`use`). Code that has no settings argument (the model
kit) asks :func:`current`: the tree this process was handed, or, in a process that was handed none (a
test, a script, a fork server), one built from its environment. The sandbox, whose section the tree
imports, reads that section through the way in this module hands it
(:func:`rewardhub.sandbox.settings.read_from`), never by importing the tree. Nothing passes a setting
on by writing ``os.environ``.

The defaults are the embedded mode on a laptop: bind to loopback, local process pools sized to the
cores, no broker. Production-only hazards are refused rather than warned about: a non-loopback
bind without API keys outside ``environment: development`` is an error at start-up.
"""

from __future__ import annotations

import functools
import ipaddress
import os
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from rewardhub.sandbox.settings import SandboxSettings, read_from
from rewardhub.sessions.settings import SessionSettings

__all__ = ["ModelSettings", "OrsSettings", "SandboxSettings", "SessionSettings", "Settings", "current", "use"]

_config_file: ContextVar[str | None] = ContextVar("rewardhub_config_file", default=None)


class OrsSettings(BaseSettings):
    """``REWARDHUB_ORS_*``: the Open Reward Standard environment the service serves (:mod:`rewardhub.api.compat.ors`)."""

    model_config = SettingsConfigDict(env_prefix="REWARDHUB_ORS_", extra="forbid", frozen=True)

    environment: str = Field("code", description="The environment's name in ORS paths (``/{name}/call``).")
    tasks_file: Path | None = Field(None, description="JSON {split: [task, ...]}: what split and index name.")
    call_timeout_s: float = Field(30.0, gt=0, description="Wall-clock limit of one python or bash call.")
    test_timeout_s: float = Field(120.0, gt=0, description="Wall-clock limit of submit's tests.")


class ModelSettings(BaseSettings):
    """``REWARDHUB_MODELS_*``: where the model kit keeps models, and how model backends size themselves."""

    model_config = SettingsConfigDict(
        env_prefix="REWARDHUB_MODELS_", extra="forbid", frozen=True, validate_by_name=True
    )

    dir: Path | None = Field(
        None,
        description="Folder of the model kit's installed models (`rewardhub models install`); unset: "
        "~/.cache/rewardhub/models.",
    )
    max_loaded: int = Field(
        4,
        ge=1,
        description="Models a process keeps loaded; past it the least recently used one is closed once no batch "
        "uses it (a trainer's PRIME policy is a new model every step).",
    )
    vllm_cpu_kv_cache_gib: float | None = Field(
        None,
        gt=0,
        validation_alias="REWARDHUB_VLLM_CPU_KV_CACHE_GIB",
        description="KV cache of a vLLM engine on CPU, in GiB; unset: 2 (vLLM's own VLLM_CPU_KVCACHE_SPACE wins where set).",
    )


SECTIONS: dict[str, type[BaseSettings]] = {
    "sandbox": SandboxSettings,
    "sessions": SessionSettings,
    "ors": OrsSettings,
    "models": ModelSettings,
}
"""The sections of the tree and the class (with its own environment prefix) of each."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="REWARDHUB_", extra="forbid", validate_default=True)

    # --- serving ---
    environment: Literal["development", "production"] = Field(
        "development", description="production refuses insecure exposure (no API keys on a public bind)."
    )
    host: str = Field("127.0.0.1", description="Bind address. Loopback unless API keys are configured.")
    port: int = Field(8000, ge=0, le=65535, description="Bind port.")
    log_level: str = Field("info", description="Python log level name.")
    log_format: Literal["text", "json"] | None = Field(
        None,
        description="Console log lines: text for people, json for collectors; unset: text on a terminal, else json.",
    )
    api_keys: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Accepted bearer tokens (comma-separated in the environment)."
    )
    api_keys_file: str | None = Field(None, description="File with one accepted bearer token per line.")
    api_workers: int = Field(
        1,
        ge=1,
        description="API processes sharing the one port (uvicorn workers); each runs its own local pools. "
        "Past one, jobs live in a shared job store (job_store_url, or a file in a temporary directory).",
    )
    rate_limit_per_s: float | None = Field(
        None, gt=0, description="Per-key request rate limit (token bucket); none when unset."
    )

    # --- execution ---
    execution: Literal["local", "celery"] = Field(
        "local", description="local: embedded process pools; celery: workers on a broker."
    )
    workers: int | None = Field(
        None, ge=1, description="Worker processes for CPU verifiers; the number of cores when unset."
    )
    code_workers: int | None = Field(
        None, ge=1, description="Worker processes for code verifiers; the number of cores when unset."
    )
    code_workers_at_start: bool = Field(
        True,
        description="Start the code workers, each with a warm sandbox, in the background once the service is "
        "ready, so the first code batch does not wait for them (false: on the first code call).",
    )
    worker_memory_mb: int = Field(4096, ge=256, description="Address-space limit of each CPU worker process.")
    sample_timeout_s: float = Field(
        10.0, gt=0, description="Default hard wall-clock limit per sample for CPU verifiers."
    )
    code_timeout_s: float = Field(
        120.0, gt=0, description="Default hard wall-clock limit per sample for code verifiers."
    )
    model_timeout_s: float = Field(300.0, gt=0, description="Default limit per sample for model and judge verifiers.")
    max_timeout_s: float = Field(600.0, gt=0, description="Largest per-sample limit a request's config may ask for.")
    max_pending_samples: int = Field(
        200_000, ge=1, description="Bounded queue per API process: past it requests get 429 with Retry-After."
    )
    plugins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Python files whose Verifier subclasses are registered (like --plugin)."
    )
    broker_url: str = Field(
        "redis://127.0.0.1:6379/0", description="Celery broker (Redis or RabbitMQ) for execution=celery."
    )
    result_backend: str | None = Field(None, description="Celery result backend; the broker URL when it is Redis.")
    chunk_size: int = Field(64, ge=1, description="Samples per Celery task when a batch is split across workers.")
    result_ttl_s: int = Field(3600, ge=1, description="How long finished jobs and results are kept.")
    job_results_max_bytes: int = Field(
        1 << 30,
        ge=1 << 20,
        description="Memory that finished jobs' results may hold in one API process (estimated, ~1 KB a "
        "result); past it the oldest leave memory: answered from job_store_url's journal where one is set.",
    )
    heartbeat_s: float = Field(
        1.0, gt=0, le=30, description="Celery mode: how often workers and API processes refresh their liveness key."
    )
    lost_after_s: float = Field(
        10.0,
        gt=0,
        le=300,
        description="Celery mode: a worker or API process whose liveness key is this old is presumed gone "
        "(its chunks are dispatched again).",
    )
    job_store_url: str | None = Field(
        None,
        description="Where /v1/jobs records live, shared by every API process and replica that names the same "
        "store: redis://host:port/db or sqlite:////abs/path/jobs.sqlite3 (one machine; three slashes for a relative path). Unset: in process with "
        "one API worker; the Celery engine's Redis with execution=celery; a temporary sqlite file shared by "
        "this server's API workers otherwise.",
    )
    model_batch_size: int = Field(32, ge=1, description="Largest micro-batch for model verifiers.")
    model_batch_wait_ms: float = Field(5.0, ge=0, description="How long a model micro-batch waits to fill.")

    # --- limits and compatibility ---
    max_request_bytes: int = Field(64 * 1024 * 1024, ge=1024, description="Largest request body (413 above it).")
    max_samples_per_request: int = Field(100_000, ge=1, description="Most samples in one request (413 above it).")
    get_reward_verifier: Any = Field(
        "math",
        description="The VerifierSpec that answers OpenRLHF's POST /get_reward and slime's POST /v1/compat/slime when the request names none.",
    )

    # --- verifiers ---
    sql_data_dir: Path | None = Field(
        None,
        description="Folder of the SQLite databases the sql verifier may open by name (BIRD's and Spider's layout); "
        "unset: only inline databases.",
    )

    # --- reward cache ---
    cache_backend: str | None = Field(
        None,
        description="Where cached verdicts live: off, memory, sqlite:///PATH or redis://...; unset: the Celery "
        "engine's Redis in celery mode, a file in PROMETHEUS_MULTIPROC_DIR when set (--api-workers), else memory.",
    )
    cache_verifiers: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description='Verifiers whose verdicts are cached on every request (a request\'s "cache": false still opts out); '
        'others only when a request says "cache": true.',
    )
    cache_max_entries: int = Field(
        100_000, ge=1, description="Most entries the cache keeps (least recently used go first)."
    )
    cache_ttl_s: float = Field(7 * 24 * 3600.0, gt=0, description="Age past which a cached verdict is not served.")
    cache_statuses: Annotated[list[Literal["ok", "timeout", "error"]], NoDecode] = Field(
        default_factory=lambda: ["ok"],
        description="Statuses whose results are cached (only ok by default: a timeout or a crash is judged again).",
    )
    cache_secret: str | None = Field(
        None, description="Key of the MAC on each entry; entries written without it are ignored (set it with Redis)."
    )
    cache_namespace: str = Field(
        "default",
        pattern=r"^[A-Za-z0-9_.:-]{1,64}$",
        description="Services sharing a cache store and namespace share entries.",
    )

    # --- sections, each with its own environment prefix ---
    sandbox: SandboxSettings = Field(
        default_factory=SandboxSettings,
        description="How code runs isolated (REWARDHUB_SANDBOX_*): the backend, its limits and warm sandboxes.",
    )
    sessions: SessionSettings = Field(
        default_factory=SessionSettings, description="Host limits of stateful sessions (REWARDHUB_SESSION_*)."
    )
    ors: OrsSettings = Field(
        default_factory=OrsSettings, description="The Open Reward Standard environment served (REWARDHUB_ORS_*)."
    )
    models: ModelSettings = Field(
        default_factory=ModelSettings, description="The model kit's folder and model backends (REWARDHUB_MODELS_*)."
    )

    # --- operator page (GET /ui) ---
    ui_enabled: bool = Field(True, description="Serve the live operator page at /ui and its JSON at /ui/api/*.")
    ui_show_samples: bool = Field(
        True,
        description="Show sample text (prompt, response, reference, extracted answer) on the page; false keeps none.",
    )
    ui_recent_samples: int = Field(200, ge=0, le=10_000, description="Last samples kept per API process for the page.")
    ui_sample_chars: int = Field(4000, ge=100, description="Longest text kept per field of a sample on the page.")
    ui_store: str | None = Field(
        None,
        description="Where API processes share page statistics: memory, sqlite:///PATH or redis://...; unset: "
        "Redis in celery mode, a file in PROMETHEUS_MULTIPROC_DIR when set, else memory.",
    )
    ui_namespace: str = Field(
        "default", pattern=r"^[A-Za-z0-9_.:-]{1,64}$", description="Services sharing a store and namespace add up."
    )

    def __init__(self, **values: Any) -> None:
        """``sandbox_backend=`` (a caller's flag) is ``sandbox.backend``, above the environment as every flag is."""
        if "sandbox_backend" in values:
            values["sandbox"] = {**_given(values.get("sandbox")), "backend": values.pop("sandbox_backend")}
        super().__init__(**values)

    @model_validator(mode="before")
    @classmethod
    def _flat_sandbox_backend(cls, values: Any) -> Any:
        """A config file's ``sandbox_backend`` (the key before the sandbox section existed) is
        ``sandbox.backend``, below the environment and the file's own ``sandbox.backend``."""
        if isinstance(values, dict) and "sandbox_backend" in values:
            values = dict(values)
            values["sandbox"] = {"backend": values.pop("sandbox_backend"), **_given(values.get("sandbox"))}
        return values

    @field_validator("job_store_url")
    @classmethod
    def _known_job_store(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("redis://", "rediss://", "unix://", "sqlite:///")):
            raise ValueError(
                f"job_store_url must be redis://..., rediss://..., unix://... or sqlite:///path, not {value!r}"
            )
        return value

    @field_validator("api_keys", "plugins", "cache_verifiers", "cache_statuses", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @model_validator(mode="after")
    def _heartbeat_fits_in_the_window(self) -> Settings:
        if self.lost_after_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"lost_after_s={self.lost_after_s:g} must be at least twice heartbeat_s={self.heartbeat_s:g}"
            )
        return self

    @model_validator(mode="after")
    def _refuse_insecure_exposure(self) -> Settings:
        if self.environment == "production" and not self.is_loopback() and not self.all_api_keys():
            raise ValueError("refusing to bind a public address in production without API keys")
        return self

    @property
    def sandbox_backend(self) -> str:
        """The sandbox section's backend, under the flat name older callers read."""
        return self.sandbox.backend

    def is_loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def all_api_keys(self) -> list[str]:
        keys = list(self.api_keys)
        if self.api_keys_file:
            lines = Path(self.api_keys_file).read_text().splitlines()
            keys += [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        return keys

    def cpu_workers(self) -> int:
        return self.workers or os.cpu_count() or 1

    def code_worker_count(self) -> int:
        return self.code_workers or os.cpu_count() or 1

    @classmethod
    def load(cls, config_file: str | Path | None = None, **overrides: Any) -> Settings:
        """Settings from flags (``overrides``, None values ignored) > environment > config file > defaults."""
        token = _config_file.set(str(config_file) if config_file else None)
        try:
            return cls(**{key: value for key, value in overrides.items() if value is not None})
        finally:
            _config_file.reset(token)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources = [init_settings, env_settings, _SectionsFromEnvironment(settings_cls)]
        path = _config_file.get()
        if path:
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=path))
        return tuple(sources)


def _given(section: Any) -> dict[str, Any]:
    """A section as given (a mapping, a built section or nothing) as the mapping of what was set."""
    if isinstance(section, BaseSettings):
        return section.model_dump(exclude_unset=True)
    return dict(section or {})


class _SectionsFromEnvironment(PydanticBaseSettingsSource):
    """Each section's variables, read under the section's own prefix (``REWARDHUB_SANDBOX_*``, …).

    A section is itself a pydantic-settings class and reads its variables when it is built, but a
    value given for it (a config file's ``sandbox:`` mapping) would then win over the environment;
    read here, they are merged key by key between the flags above and the config file below, so a
    section follows the same order of precedence as the top level."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads whole sections

    def __call__(self) -> dict[str, Any]:
        found = {name: EnvSettingsSource(section)() for name, section in SECTIONS.items()}
        return {name: values for name, values in found.items() if values}


_in_use: Settings | None = None


def use(settings: Settings) -> None:
    """Hand this process its settings: called once where a process starts serving (``rewardhub
    serve``, an API worker, a Celery worker, a pool's worker process), before any verifier runs."""
    global _in_use
    _in_use = settings


def current() -> Settings:
    """The settings this process was handed (:func:`use`); in a process handed none (a test, a
    script, a fork server), the tree as its environment gives it now."""
    if _in_use is not None:
        return _in_use
    return _from_environment(
        tuple(sorted(item for item in os.environ.items() if item[0].upper().startswith("REWARDHUB_")))
    )


@functools.lru_cache(maxsize=8)
def _from_environment(variables: tuple[tuple[str, str], ...]) -> Settings:
    """The tree these variables give (built once per set of them: building reads every section's
    variables, some milliseconds, and a verifier may ask for every sample)."""
    return Settings()


def _sandbox_section() -> SandboxSettings:
    return current().sandbox


read_from(_sandbox_section)  # the sandbox's pools read their section of this tree without importing it
