"""Observability across processes: request ids from the API into worker logs, JSON log lines,
Prometheus metrics summed over several API processes."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from celery_support import CeleryService

from rewardhub.logging import JsonFormatter, request_context


def test_a_log_line_is_one_json_object_with_the_current_request_id() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("rewardhub.test.json")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with request_context("req-42"):
            logger.warning("scored %d samples", 3, extra={"verifier": "math"})
    finally:
        logger.removeHandler(handler)
    entry = json.loads(stream.getvalue())
    assert (entry["message"], entry["level"], entry["request_id"], entry["verifier"]) == (
        "scored 3 samples",
        "warning",
        "req-42",
        "math",
    )


def test_the_request_id_follows_a_sample_from_the_api_into_the_worker_logs(celery_service: CeleryService) -> None:
    request_id = f"trace-{os.getpid()}-{time.monotonic_ns()}"
    response = httpx.post(
        f"{celery_service.url}/v1/score",
        headers={"X-Request-ID": request_id},
        json={"samples": [{"response": "0", "verifier": "test_sleepy"}]},
        timeout=60,
    )
    assert response.status_code == 200
    assert response.headers["x-request-id"] == request_id
    lines = [
        json.loads(line) for w in celery_service.workers for line in w.log_text().splitlines() if line.startswith("{")
    ]
    assert any(
        entry.get("request_id") == request_id and entry["message"].startswith("scoring chunk") for entry in lines
    )


def test_a_malformed_request_id_is_replaced_not_logged(celery_service: CeleryService) -> None:
    for bad in ("id with spaces {and} braces", "x" * 500):
        response = httpx.get(f"{celery_service.url}/healthz", headers={"X-Request-ID": bad})
        assert response.headers["x-request-id"] != bad
        assert len(response.headers["x-request-id"]) == 32


WRITER = """
import sys
from rewardhub.api.metrics import Metrics
metrics = Metrics()
metrics.requests.labels("/v1/score", "200").inc(int(sys.argv[1]))
metrics.watch_queue(lambda: int(sys.argv[2]))
if sys.argv[3] == "render":
    sys.stdout.write(metrics.render().decode())
"""


def test_metrics_of_several_api_processes_add_up_in_multiprocess_mode(tmp_path: Path) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", WRITER, "3", "5", "exit"], env=env, check=True)  # a process that has exited
    text = subprocess.run(
        [sys.executable, "-c", WRITER, "4", "7", "render"], env=env, check=True, capture_output=True, text=True
    ).stdout
    values = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }
    assert values['rewardhub_requests_total{code="200",route="/v1/score"}'] == 7.0  # both processes' requests
    assert values["rewardhub_queue_depth"] == 7.0  # only live processes' queues
