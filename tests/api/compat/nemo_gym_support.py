"""The parent side of ``nemo_gym_side.py``: run it in a child process and read what it prints.

One child builds everything the NeMo-Gym tests send (importing NeMo-Gym costs seconds), and its
answer is kept for the session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
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


def tally_agreement(
    cases: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    convention: Callable[[dict[str, Any], dict[str, Any]], str | None],
    conventions: dict[str, str],
    label: Callable[[dict[str, Any]], str],
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, Counter[str], Counter[str]]:
    """Each case's server reward against the service's answer, printed per server with every named
    convention and every disagreement class; returns (agreed, conventions met, disagreements)."""
    differ: Counter[str] = Counter()
    met: Counter[str] = Counter()
    per_server: Counter[str] = Counter()
    agree_per_server: Counter[str] = Counter()
    for case, answer in zip(cases, answers, strict=True):
        per_server[case["server"]] += 1
        judged = answer["rewardhub"]["status"] == "ok"
        if judged and answer["reward"] == pytest.approx(case["reference_reward"], abs=1e-9):
            agree_per_server[case["server"]] += 1
        elif (name := convention(case, answer)) is not None:
            met[name] += 1
        else:
            reward = answer["reward"] if judged else f"masked ({answer['rewardhub']['error'][:100]})"
            differ[f"{label(case)}: server {case['reference_reward']:.4g}, rewardhub {reward}"] += 1
    agreed = sum(agree_per_server.values())
    with capsys.disabled():
        print(f"\nNeMo-Gym 0.7.0 servers vs rewardhub: {agreed}/{len(cases)} agree ({agreed / len(cases):.4f})")
        for server in sorted(per_server):
            print(f"  {server}: {agree_per_server[server]}/{per_server[server]}")
        for name, count in met.most_common():
            print(f"  convention {name}: {count} ({conventions[name]})")
        for what, count in differ.most_common():
            print(f"  DIFFER x{count}: {what}")
    return agreed, met, differ
