"""Helpers of the contract tests: released upstream code at pinned versions, and the guides' snippets.

Each upstream is installed once per machine with ``pip install --no-deps --target`` into a cache
(``REWARDHUB_CONTRACT_CACHE``, default ``~/.cache/rewardhub-contract``): their own dependency pins
(CUDA builds of torch, vLLM, DeepSpeed) cannot install on a CPU machine, so only the modules on
the reward path are loaded, next to the few pure-Python packages they import. A test that cannot
reach the package index is skipped with the reason, never passed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import doc_block

CACHE = Path(os.environ.get("REWARDHUB_CONTRACT_CACHE", Path.home() / ".cache" / "rewardhub-contract"))
REPO = Path(__file__).resolve().parents[2]


def installed(name: str, requirements: list[str]) -> Path:
    """A folder holding ``requirements`` (exact pins) installed without their dependencies."""
    target = CACHE / name
    done = target / ".installed"
    if done.exists() and done.read_text() == "\n".join(requirements):
        return target
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade", "--target", str(target)]
    run = subprocess.run([*command, *requirements], capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        pytest.skip(f"could not install {requirements}: {run.stderr.strip()[-400:]}")
    done.write_text("\n".join(requirements))
    return target


def doc_command_lines(name: str, *command: str) -> list[list[str]]:
    """Each ``python COMMAND ...`` line of the block marked ``name`` (README.md or docs/), run by bash,
    as the argument list COMMAND would receive (``...`` left in for the caller to expand). Other commands the block
    runs: ``python`` runs for real, ``rewardhub`` is a no-op (its lines start the service)."""
    tests = " && ".join(f'[ "${{{i}}}" = {word} ]' for i, word in enumerate(command, 1))
    catcher = (
        "rewardhub() { :; }\n"
        f'python() {{ if {tests}; then shift {len(command)}; printf "%s\\0" "$@"; printf "\\n\\0"; '
        'else "$PYTHON" "$@"; fi; }\n'
    )
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", catcher + doc_block(name)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHON": sys.executable},
    )
    lines: list[list[str]] = []
    current: list[str] = []
    for token in run.stdout.split("\0")[:-1]:
        if token == "\n":
            lines.append(current)
            current = []
        else:
            current.append(token)
    return lines
