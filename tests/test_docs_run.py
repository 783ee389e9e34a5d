"""The guides' requests to the sandbox and to sessions run as written against a real ``rewardhub serve``
(docs/sandbox.md's ``/v1/sandbox/run`` call, docs/sessions.md's four session calls)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from doc_blocks import doc_block
from serve_support import needs_bubblewrap

from rewardhub.launcher import ServiceProcess

pytestmark = pytest.mark.integration  # starts `rewardhub serve`


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    needs_bubblewrap()
    with ServiceProcess(workers=1) as url:
        yield url


def answers_of(block: str, url: str) -> list[dict]:
    """The JSON answers a block's commands print, in order, with the block pointed at ``url``."""
    script = block.replace("localhost:8000", url.removeprefix("http://"))
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # the block's `python` is this one
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "PATH": path},
    )
    decoder, text, at, answers = json.JSONDecoder(), run.stdout, 0, []
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())  # past the whitespace between answers
        answer, at = decoder.raw_decode(text, at)
        answers.append(answer)
    return answers


def test_the_sandbox_guides_request_runs_the_program(served: str) -> None:
    [answer] = answers_of(doc_block("sandbox-run"), served)
    assert (answer["status"], answer["exit_code"], answer["stdout"]) == ("ok", 0, "cba\n")


def test_the_sessions_guides_calls_keep_the_interpreters_state(served: str) -> None:
    first, second = answers_of(doc_block("sessions-curl"), served)  # the DELETE answers 204, no body
    assert first["status"] == "ok" and first["stdout"] == ""
    assert second["status"] == "ok" and second["stdout"] == "42\n"  # x from the first call
    assert httpx.get(f"{served}/v1/sessions").json()["sessions"] == []  # and the DELETE ended it
