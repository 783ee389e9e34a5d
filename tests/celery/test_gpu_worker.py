"""A GPU worker runs one process per device, pinned to it after the fork, and loads each model
once per process. Checked without GPUs: the devices are named in CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

from pathlib import Path

import httpx
from celery_support import ServiceThread, celery_settings, start_worker, stop_workers


def test_a_gpu_worker_runs_one_pinned_process_per_device_each_loading_its_model_once(
    redis_up: None, tmp_path: Path
) -> None:
    settings = celery_settings("gpu")
    worker = start_worker(settings, tmp_path, queues="gpu", concurrency=None, env={"CUDA_VISIBLE_DEVICES": "3,5"})
    try:
        with ServiceThread(settings) as service:
            samples = [{"response": str(i), "verifier": "test_device"} for i in range(16)]
            response = httpx.post(f"{service.url}/v1/score", json={"samples": samples}, timeout=120)
    finally:
        stop_workers([worker])
    assert response.status_code == 200, response.text
    details = [r["details"] for r in response.json()["results"]]
    devices_by_pid = {d["pid"]: d["device"] for d in details}
    assert sorted(devices_by_pid.values()) == ["3", "5"]  # two processes, one per device
    assert {d["loads"] for d in details} == {1}  # each loaded the verifier once, however many chunks it took
