"""Logs a person can read: ``rewardhub serve`` in a terminal prints text lines; JSON lines come with
``--log-format json`` (or ``REWARDHUB_LOG_FORMAT=json``, which the deploy files set) and whenever
the output is not a terminal (a file, a pipe, a log collector)."""

from __future__ import annotations

import io
import json
import logging
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rewardhub.logging import configure_logging, request_context
from rewardhub.server import free_port

DEPLOY = Path(__file__).parents[1] / "deploy"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _log_one(stream: io.StringIO, log_format: str | None) -> str:
    configure_logging("info", log_format, stream)
    try:
        with request_context("req0123456789abcdef"):
            logging.getLogger("rewardhub.test").warning("scored %d samples", 3, extra={"verifier": "math"})
    finally:
        configure_logging("info", "json", sys.stderr)
    return stream.getvalue()


def test_a_terminal_gets_a_readable_line_with_extras_and_the_request_id():
    line = _log_one(_Terminal(), None)
    assert not line.startswith("{")
    assert "WARNING" in line and "rewardhub.test: scored 3 samples" in line
    assert "verifier=math" in line and "[req req012345678]" in line


def test_a_file_or_pipe_gets_json_lines_and_a_flag_overrides_either_way():
    entry = json.loads(_log_one(io.StringIO(), None))
    assert (entry["message"], entry["verifier"], entry["request_id"]) == (
        "scored 3 samples",
        "math",
        "req0123456789abcdef",
    )
    assert json.loads(_log_one(_Terminal(), "json"))["level"] == "warning"
    assert not _log_one(io.StringIO(), "text").startswith("{")


def _serve_in_a_terminal(*flags: str, env: dict[str, str] | None = None) -> list[str]:
    """Start ``rewardhub serve`` on a pseudo-terminal and return its lines up to "ready"."""
    leader, follower = pty.openpty()
    command = [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(free_port()), "--workers", "1", *flags]
    environ = {k: v for k, v in os.environ.items() if k != "REWARDHUB_LOG_FORMAT"}
    environ.update({"REWARDHUB_LOG_LEVEL": "info", **(env or {})})
    process = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, env=environ)
    os.close(follower)
    output = b""
    deadline = time.monotonic() + 60
    try:
        while b"rewardhub ready" not in output and time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    output += os.read(leader, 65536)
                except OSError:
                    break
    finally:
        process.terminate()
        process.wait(timeout=30)
        os.close(leader)
    assert b"rewardhub ready" in output, output.decode(errors="replace")[-2000:]
    return [line for line in output.decode(errors="replace").splitlines() if line.strip()]


def test_serve_in_a_terminal_prints_text_by_default():
    lines = _serve_in_a_terminal()
    ready = next(line for line in lines if "rewardhub ready" in line)
    assert not ready.startswith("{") and "INFO" in ready and "rewardhub.api.app" in ready
    assert not any(line.lstrip().startswith("{") for line in lines)


@pytest.mark.parametrize(("flags", "env"), [(("--log-format", "json"), None), ((), {"REWARDHUB_LOG_FORMAT": "json"})])
def test_serve_prints_json_lines_when_asked(flags, env):
    lines = _serve_in_a_terminal(*flags, env=env)
    entries = [json.loads(line) for line in lines if line.startswith("{")]
    assert any(entry["message"].startswith("rewardhub ready") for entry in entries)
    assert len(entries) == len(lines)


def test_the_deploy_files_ask_for_json_lines():
    for path in ("docker-compose.yml", "k8s/configmap.yaml", "Dockerfile.api", "Dockerfile.gpu", "Dockerfile.sandbox"):
        text = (DEPLOY / path).read_text()
        assert "REWARDHUB_LOG_FORMAT: json" in text or "REWARDHUB_LOG_FORMAT=json" in text, path
