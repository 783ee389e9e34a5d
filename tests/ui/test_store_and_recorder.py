"""Where processes share the page's figures, and what the score pipeline's hook keeps of a sample."""

from __future__ import annotations

import json
import socket
import uuid
from pathlib import Path

import pytest

from rewardhub.compose import Leaf
from rewardhub.errors import InvalidConfig
from rewardhub.settings import Settings
from rewardhub.types import Result, Sample
from rewardhub.ui.recorder import StatsRecorder
from rewardhub.ui.store import MemoryStore, RedisStore, SqliteStore, open_store, store_url

REDIS_URL = "redis://127.0.0.1:6379/0"


def _redis_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
        return True
    except OSError:
        return False


def _observe(recorder: StatsRecorder, n: int, run: str | None = "r1") -> None:
    samples = [
        Sample(id=str(i), prompt="What is 1+1?", response=f"secret answer {i}", reference="gold-text") for i in range(n)
    ]
    node = Leaf(name="math", config=None, key="math", traits=None)  # type: ignore[arg-type]
    results = [Result.ok(1.0, extracted="extracted-text", reason="equivalent", gold="gold-text") for _ in samples]
    recorder.observe(samples, [node] * n, results, run)


def test_the_store_follows_the_deployment():
    assert store_url(Settings.load()) == "memory"
    assert store_url(Settings.load(ui_store="sqlite:////tmp/x.db")) == "sqlite:////tmp/x.db"
    celery = Settings.load(execution="celery", broker_url="amqp://guest@localhost//", result_backend=REDIS_URL)
    assert store_url(celery) == REDIS_URL  # RabbitMQ broker, Redis results: the Redis is shared
    assert store_url(Settings.load(execution="celery", broker_url=REDIS_URL)) == REDIS_URL
    with_options = Settings.load(execution="celery", broker_url=REDIS_URL + "?visibility_timeout=3600")
    assert store_url(with_options) == REDIS_URL  # Celery's transport options are no Redis client options


def test_with_a_prometheus_multiprocess_dir_local_processes_share_a_file_there(monkeypatch, tmp_path):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    assert store_url(Settings.load()) == f"sqlite:///{tmp_path / 'rewardhub-ui.sqlite3'}"
    assert isinstance(open_store(Settings.load()), SqliteStore)


def test_an_unknown_store_is_a_config_error():
    with pytest.raises(InvalidConfig, match="ui_store"):
        open_store(Settings.load(ui_store="mysql://db"))


def _stores(tmp_path: Path):
    namespace = uuid.uuid4().hex
    yield "sqlite", SqliteStore(tmp_path / "ui.db", namespace), SqliteStore(tmp_path / "ui.db", namespace)
    if _redis_up():
        yield "redis", RedisStore(REDIS_URL, namespace), RedisStore(REDIS_URL, namespace)


def test_two_recorders_on_one_store_read_each_others_counts(tmp_path: Path):
    for kind, store_a, store_b in _stores(tmp_path):
        a, b = StatsRecorder(store_a), StatsRecorder(store_b)
        _observe(a, 3)
        _observe(b, 4, run="r2")
        assert a.read()["processes"] == 1, kind  # b has not written yet: its counts are its own until then
        b.flush()
        assert a.read()["processes"] == 2, kind
        assert a.read()["total"] == b.read()["total"] == 7, kind
        assert set(a.read()["runs"]) == {"r1", "r2"}, kind
        if isinstance(store_a, RedisStore):
            store_a.client.delete(store_a.key)


def test_namespaces_keep_services_apart(tmp_path: Path):
    a = StatsRecorder(SqliteStore(tmp_path / "ui.db", "one"))
    b = StatsRecorder(SqliteStore(tmp_path / "ui.db", "two"))
    _observe(a, 2)
    assert b.read()["total"] == 0


def test_a_sample_entry_keeps_answer_reason_and_the_full_json():
    recorder = StatsRecorder(MemoryStore())
    _observe(recorder, 1)
    [entry] = recorder.read()["recent"]
    assert (entry["answer"], entry["reason"], entry["run"], entry["verifier"]) == (
        "extracted-text",
        "equivalent",
        "r1",
        "math",
    )
    assert entry["sample"]["response"] == "secret answer 0"
    assert entry["result"]["details"]["gold"] == "gold-text"


def test_without_show_samples_no_sample_text_is_kept_even_in_the_store():
    store = MemoryStore()
    recorder = StatsRecorder(store, show_samples=False)
    _observe(recorder, 5)
    recorder.flush()
    stored = json.dumps(store.all())
    for text in ("secret answer", "What is 1+1", "gold-text", "extracted-text"):
        assert text not in stored
    [entry, *_] = recorder.read()["recent"]
    assert entry["sample"] is None and entry["answer"] is None
    assert entry["reason"] == "equivalent" and entry["score"] == 1.0  # a reason code and numbers are not text


def test_a_composite_shows_its_component_scores():
    recorder = StatsRecorder(MemoryStore(), show_samples=False)
    components = {"math": {"score": 1.0, "status": "ok", "details": {"extracted": "42"}, "weight": 0.9},
                  "format": {"score": 0.0, "status": "ok", "details": {"reason": "no think block"}, "weight": 0.1}}  # fmt: skip
    result = Result(score=0.9, details={"components": components})
    recorder.observe([Sample(response="42")], [object()], [result], None)  # type: ignore[list-item]
    [entry] = recorder.read()["recent"]
    assert entry["verifier"] == "composite"
    assert entry["components"] == {"math": 1.0, "format": 0.0}
    assert "42" not in json.dumps(entry["result"])  # component details are text: dropped when private


def test_long_texts_are_clipped_and_say_so():
    recorder = StatsRecorder(MemoryStore(), text_chars=100)
    recorder.observe(
        [Sample(response="x" * 1000)], [Leaf(name="exact", config=None, key="exact", traits=None)], [Result.ok(0.0)], None
    )  # type: ignore[arg-type]
    [entry] = recorder.read()["recent"]
    assert entry["sample"]["response"].startswith("x" * 100)
    assert entry["sample"]["response"].endswith("[900 more characters]")


def test_observing_without_a_writer_thread_keeps_memory_bounded() -> None:
    """``observe`` only queues; with nobody flushing, it counts the queue itself past a bound."""
    from rewardhub.ui.recorder import MAX_QUEUED

    recorder = StatsRecorder(MemoryStore(), recent_limit=5)
    sample, result = Sample(response="r"), Result.ok(1.0)
    for _ in range(3 * MAX_QUEUED):
        recorder.observe([sample], [Leaf(name="exact", config=None, key="exact", traits=None)], [result], None)  # type: ignore[arg-type]
    assert len(recorder._observed) < MAX_QUEUED
    assert len(recorder._unbuilt) <= 5
    assert recorder.read()["verifiers"]["exact"]["counts"]["ok"] == 3 * MAX_QUEUED
