"""The parent side of ``nemo_gym_side.py``: run it in a child process and read what it prints.

One child builds everything the NeMo-Gym tests send (importing NeMo-Gym costs seconds), and its
answer is kept for the session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

SIDE = Path(__file__).with_name("nemo_gym_side.py")

needs_nemo_gym = pytest.mark.skipif(find_spec("nemo_gym") is None, reason="nemo-gym is not installed (see .ci/run)")


def nemo_gym(command: str, stdin: Any = None) -> Any:
    done = subprocess.run(
        [sys.executable, str(SIDE), command],
        input=None if stdin is None else json.dumps(stdin),
        capture_output=True,
        text=True,
        timeout=240,
        cwd=SIDE.parent,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.split("@@JSON@@", 1)[1])


@cache
def built() -> dict[str, Any]:
    """``{"requests": {name: body}, "rollouts": {server: {...}}}`` (see ``nemo_gym_side.build``)."""
    return nemo_gym("build")
