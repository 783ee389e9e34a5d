"""The service's settings are one tree (:mod:`rewardhub.settings`), and every environment variable that
set something before the tree existed still sets the same thing in it.

The table below is the list of variables the four separate settings classes read (``Settings``,
``SandboxSettings``, ``SessionSettings``, ``OrsSettings``) plus the three the model kit, the vLLM
backend and the sql verifier read themselves, each with a value other than its default and the key of the tree it must
land on.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import rewardhub.settings as settings_module
from rewardhub.sandbox.settings import in_effect
from rewardhub.settings import SandboxSettings, Settings, current, use

OLD_VARIABLES: list[tuple[str, str, str, Any]] = [
    # variable, value, key in the tree, value read back
    ("REWARDHUB_ENVIRONMENT", "production", "environment", "production"),
    ("REWARDHUB_HOST", "::1", "host", "::1"),
    ("REWARDHUB_PORT", "8123", "port", 8123),
    ("REWARDHUB_LOG_LEVEL", "debug", "log_level", "debug"),
    ("REWARDHUB_LOG_FORMAT", "json", "log_format", "json"),
    ("REWARDHUB_API_KEYS", "a, b", "api_keys", ["a", "b"]),
    ("REWARDHUB_API_KEYS_FILE", "/etc/keys", "api_keys_file", "/etc/keys"),
    ("REWARDHUB_API_WORKERS", "3", "api_workers", 3),
    ("REWARDHUB_RATE_LIMIT_PER_S", "2.5", "rate_limit_per_s", 2.5),
    ("REWARDHUB_EXECUTION", "celery", "execution", "celery"),
    ("REWARDHUB_WORKERS", "5", "workers", 5),
    ("REWARDHUB_CODE_WORKERS", "6", "code_workers", 6),
    ("REWARDHUB_CODE_WORKERS_AT_START", "false", "code_workers_at_start", False),
    ("REWARDHUB_WORKER_MEMORY_MB", "512", "worker_memory_mb", 512),
    ("REWARDHUB_SAMPLE_TIMEOUT_S", "3", "sample_timeout_s", 3.0),
    ("REWARDHUB_CODE_TIMEOUT_S", "40", "code_timeout_s", 40.0),
    ("REWARDHUB_MODEL_TIMEOUT_S", "50", "model_timeout_s", 50.0),
    ("REWARDHUB_MAX_TIMEOUT_S", "60", "max_timeout_s", 60.0),
    ("REWARDHUB_MAX_PENDING_SAMPLES", "70", "max_pending_samples", 70),
    ("REWARDHUB_PLUGINS", "a.py,b.py", "plugins", ["a.py", "b.py"]),
    ("REWARDHUB_BROKER_URL", "redis://broker:6379/1", "broker_url", "redis://broker:6379/1"),
    ("REWARDHUB_RESULT_BACKEND", "redis://results:6379/2", "result_backend", "redis://results:6379/2"),
    ("REWARDHUB_CHUNK_SIZE", "8", "chunk_size", 8),
    ("REWARDHUB_RESULT_TTL_S", "90", "result_ttl_s", 90),
    ("REWARDHUB_JOB_RESULTS_MAX_BYTES", "2097152", "job_results_max_bytes", 2097152),
    ("REWARDHUB_HEARTBEAT_S", "2", "heartbeat_s", 2.0),
    ("REWARDHUB_LOST_AFTER_S", "30", "lost_after_s", 30.0),
    ("REWARDHUB_JOB_STORE_URL", "sqlite:////tmp/jobs.sqlite3", "job_store_url", "sqlite:////tmp/jobs.sqlite3"),
    ("REWARDHUB_MODEL_BATCH_SIZE", "4", "model_batch_size", 4),
    ("REWARDHUB_MODEL_BATCH_WAIT_MS", "1.5", "model_batch_wait_ms", 1.5),
    ("REWARDHUB_MAX_REQUEST_BYTES", "4096", "max_request_bytes", 4096),
    ("REWARDHUB_MAX_SAMPLES_PER_REQUEST", "9", "max_samples_per_request", 9),
    ("REWARDHUB_GET_REWARD_VERIFIER", "exact_match", "get_reward_verifier", "exact_match"),
    # read by the sql verifier itself before
    ("REWARDHUB_SQL_DATA_DIR", "/data/sql", "sql_data_dir", Path("/data/sql")),
    ("REWARDHUB_CACHE_BACKEND", "off", "cache_backend", "off"),
    ("REWARDHUB_CACHE_VERIFIERS", "math,code", "cache_verifiers", ["math", "code"]),
    ("REWARDHUB_CACHE_MAX_ENTRIES", "10", "cache_max_entries", 10),
    ("REWARDHUB_CACHE_TTL_S", "11", "cache_ttl_s", 11.0),
    ("REWARDHUB_CACHE_STATUSES", "ok,timeout", "cache_statuses", ["ok", "timeout"]),
    ("REWARDHUB_CACHE_SECRET", "s3cret", "cache_secret", "s3cret"),
    ("REWARDHUB_CACHE_NAMESPACE", "team-a", "cache_namespace", "team-a"),
    ("REWARDHUB_UI_ENABLED", "false", "ui_enabled", False),
    ("REWARDHUB_UI_SHOW_SAMPLES", "false", "ui_show_samples", False),
    ("REWARDHUB_UI_RECENT_SAMPLES", "12", "ui_recent_samples", 12),
    ("REWARDHUB_UI_SAMPLE_CHARS", "200", "ui_sample_chars", 200),
    ("REWARDHUB_UI_STORE", "memory", "ui_store", "memory"),
    ("REWARDHUB_UI_NAMESPACE", "team-b", "ui_namespace", "team-b"),
    # the sandbox (REWARDHUB_SANDBOX_BACKEND was read by both Settings and SandboxSettings)
    ("REWARDHUB_SANDBOX_BACKEND", "docker", "sandbox.backend", "docker"),
    ("REWARDHUB_SANDBOX_CONCURRENCY", "7", "sandbox.concurrency", 7),
    ("REWARDHUB_SANDBOX_PYTHON", "/usr/bin/python3.12", "sandbox.python", "/usr/bin/python3.12"),
    ("REWARDHUB_SANDBOX_PRELOAD", "json, math", "sandbox.preload", ("json", "math")),
    ("REWARDHUB_SANDBOX_SCRATCH_MB", "64", "sandbox.scratch_mb", 64),
    ("REWARDHUB_SANDBOX_RECYCLE_AFTER", "5", "sandbox.recycle_after", 5),
    ("REWARDHUB_SANDBOX_BUILD_CACHE_MB", "0", "sandbox.build_cache_mb", 0),
    ("REWARDHUB_SANDBOX_START_TIMEOUT_S", "9", "sandbox.start_timeout_s", 9.0),
    ("REWARDHUB_SANDBOX_MEMORY_LIMIT", "rlimit", "sandbox.memory_limit", "rlimit"),
    ("REWARDHUB_SANDBOX_UID_BASE", "70000", "sandbox.uid_base", 70000),
    ("REWARDHUB_SANDBOX_UID_COUNT", "16", "sandbox.uid_count", 16),
    ("REWARDHUB_SANDBOX_BWRAP", "/opt/bwrap", "sandbox.bwrap", "/opt/bwrap"),
    ("REWARDHUB_SANDBOX_CHECKER_INCLUDE_DIR", "/opt/testlib", "sandbox.checker_include_dir", "/opt/testlib"),
    ("REWARDHUB_SANDBOX_SYSCALL_FILTER", "false", "sandbox.syscall_filter", False),
    ("REWARDHUB_SANDBOX_SECCOMP_PYTHON", "/opt/py", "sandbox.seccomp_python", "/opt/py"),
    ("REWARDHUB_SANDBOX_DOCKER", "/opt/docker", "sandbox.docker", "/opt/docker"),
    ("REWARDHUB_SANDBOX_DOCKER_IMAGE", "runtime:1", "sandbox.docker_image", "runtime:1"),
    ("REWARDHUB_SANDBOX_DOCKER_CPUS", "0.5", "sandbox.docker_cpus", 0.5),
    ("REWARDHUB_SANDBOX_DOCKER_SOCKET_DIR", "/run/sockets", "sandbox.docker_socket_dir", "/run/sockets"),
    # sessions (singular prefix, as it always was)
    ("REWARDHUB_SESSION_MAX_SESSIONS", "8", "sessions.max_sessions", 8),
    ("REWARDHUB_SESSION_MAX_PER_KEY", "3", "sessions.max_per_key", 3),
    ("REWARDHUB_SESSION_CREATE_RATE_PER_S", "4.5", "sessions.create_rate_per_s", 4.5),
    ("REWARDHUB_SESSION_CREATE_BURST", "6", "sessions.create_burst", 6),
    ("REWARDHUB_SESSION_IDLE_TTL_S", "30", "sessions.idle_ttl_s", 30.0),
    ("REWARDHUB_SESSION_MAX_LIFETIME_S", "60", "sessions.max_lifetime_s", 60.0),
    ("REWARDHUB_SESSION_MAX_CALL_TIMEOUT_S", "20", "sessions.max_call_timeout_s", 20.0),
    ("REWARDHUB_SESSION_MAX_MEMORY_MB", "256", "sessions.max_memory_mb", 256),
    ("REWARDHUB_SESSION_PRELOAD", '["json"]', "sessions.preload", ("json",)),
    ("REWARDHUB_SESSION_REAP_INTERVAL_S", "0.5", "sessions.reap_interval_s", 0.5),
    ("REWARDHUB_SESSION_SPARES", "0", "sessions.spares", 0),
    # the Open Reward Standard environment
    ("REWARDHUB_ORS_ENVIRONMENT", "swe", "ors.environment", "swe"),
    ("REWARDHUB_ORS_TASKS_FILE", "/data/tasks.json", "ors.tasks_file", Path("/data/tasks.json")),
    ("REWARDHUB_ORS_CALL_TIMEOUT_S", "5", "ors.call_timeout_s", 5.0),
    ("REWARDHUB_ORS_TEST_TIMEOUT_S", "15", "ors.test_timeout_s", 15.0),
    # models: read by the model kit and the vLLM backend themselves before
    ("REWARDHUB_MODELS_DIR", "/models", "models.dir", Path("/models")),
    ("REWARDHUB_MODELS_MAX_LOADED", "2", "models.max_loaded", 2),
    ("REWARDHUB_VLLM_CPU_KV_CACHE_GIB", "0.5", "models.vllm_cpu_kv_cache_gib", 0.5),
]


def at(settings: Settings, key: str) -> Any:
    value: Any = settings
    for part in key.split("."):
        value = getattr(value, part)
    return value


@pytest.fixture(autouse=True)
def _no_settings_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts in a process handed no settings, and leaves it so."""
    monkeypatch.setattr(settings_module, "_in_use", None)


@pytest.mark.parametrize(("variable", "value", "key", "expected"), OLD_VARIABLES, ids=[v[0] for v in OLD_VARIABLES])
def test_every_variable_that_worked_before_sets_its_key_in_the_tree(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, key: str, expected: Any
) -> None:
    monkeypatch.setenv(variable, value)
    assert at(Settings(), key) == expected
    assert at(current(), key) == expected  # what code without a settings argument reads


def test_rewardhub_settings_names_the_variable_each_key_is_read_from() -> None:
    """What ``rewardhub settings`` prints, against the table: the same keys, each with the variable
    shown above to set it (a key added later gets a row here too)."""
    from rewardhub.settings_reference import settings_reference

    listed = {row.key: row.env for row in settings_reference()}
    assert listed == {key: variable for variable, _, key, _ in OLD_VARIABLES}


def test_a_config_file_nests_sections_and_the_environment_overrides_them_key_by_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "rewardhub.yaml"
    config.write_text(
        "workers: 2\n"
        "sandbox: {backend: unsafe, scratch_mb: 32}\n"
        "sessions: {max_per_key: 5}\n"
        "ors: {environment: swe}\n"
        "models: {dir: /models, vllm_cpu_kv_cache_gib: 1.5}\n"
    )
    for name in [name for name in os.environ if name.startswith("REWARDHUB_")]:  # the host's own (a CI's models dir)
        monkeypatch.delenv(name)
    monkeypatch.setenv("REWARDHUB_SANDBOX_SCRATCH_MB", "128")
    settings = Settings.load(config)
    assert (settings.sandbox.backend, settings.sandbox.scratch_mb) == ("unsafe", 128)
    assert settings.sessions.max_per_key == 5
    assert settings.ors.environment == "swe"
    assert (settings.models.dir, settings.models.vllm_cpu_kv_cache_gib) == (Path("/models"), 1.5)
    assert settings.workers == 2


def test_flags_override_the_environment_inside_a_section(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDHUB_SANDBOX_BACKEND", "docker")
    monkeypatch.setenv("REWARDHUB_SANDBOX_CONCURRENCY", "3")
    settings = Settings.load(sandbox={"backend": "unsafe"})
    assert (settings.sandbox.backend, settings.sandbox.concurrency) == ("unsafe", 3)


def test_the_flat_sandbox_backend_key_is_the_sandbox_sections_backend(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``sandbox_backend`` was a top-level key: config files and callers that name it keep working,
    with its old precedence (a flag above the environment, a file below it)."""
    config = tmp_path / "rewardhub.yaml"
    config.write_text("sandbox_backend: unsafe\n")
    assert Settings.load(config).sandbox.backend == "unsafe"
    assert Settings(sandbox_backend="unsafe").sandbox_backend == "unsafe"
    monkeypatch.setenv("REWARDHUB_SANDBOX_BACKEND", "docker")
    assert Settings.load(config).sandbox.backend == "docker"
    assert Settings.load(sandbox_backend="unsafe").sandbox.backend == "unsafe"


def test_a_sections_unknown_key_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "rewardhub.yaml"
    config.write_text("sandbox: {backnd: docker}\n")
    with pytest.raises(ValidationError, match="backnd"):
        Settings.load(config)


def test_the_tree_crosses_to_an_api_worker_as_json_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """``rewardhub serve --api-workers N`` hands its workers the tree as JSON: sections included."""
    settings = Settings.load(sandbox={"backend": "unsafe"}, sessions={"max_per_key": 2}, models={"dir": "/m"})
    monkeypatch.setenv("REWARDHUB_SANDBOX_BACKEND", "docker")  # a worker's environment does not undo it
    again = Settings.model_validate_json(settings.model_dump_json())
    assert again == settings


def test_current_is_what_this_process_was_handed_else_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDHUB_SANDBOX_BACKEND", "docker")
    assert current().sandbox.backend == "docker"
    monkeypatch.setenv("REWARDHUB_SANDBOX_BACKEND", "bwrap")
    assert current().sandbox.backend == "bwrap"  # the variables changed: the tree is built again
    use(Settings(sandbox=SandboxSettings(backend="unsafe")))
    assert current().sandbox.backend == "unsafe"


def test_the_sandbox_reads_its_section_of_the_tree_this_process_was_handed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox does not import the tree (tests/test_layering.py): the tree hands it the way to its section."""
    monkeypatch.setenv("REWARDHUB_SANDBOX_BACKEND", "docker")
    assert in_effect().backend == "docker"  # handed nothing: the environment's, as current() gives it
    use(Settings(sandbox=SandboxSettings(backend="unsafe", scratch_mb=64)))
    assert in_effect() == current().sandbox
    assert (in_effect().backend, in_effect().scratch_mb) == ("unsafe", 64)
