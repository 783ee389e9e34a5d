"""TRL's ``GRPOTrainer`` runs the README's snippet for two steps, with the sync and the async reward
function, on the oldest TRL that pyproject allows and on the newest release.

Each version runs in its own Python process with that release first on the path (installed
without dependencies: both use this environment's transformers, accelerate and datasets).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from contract_support import REPO, installed, readme_block

OLDEST = "0.29.1"  # pyproject's floor: the dev extra says trl>=0.29.1
NEWEST = "1.16.0"
HERE = Path(__file__).parent


def test_pyproject_floor_is_the_oldest_version_tested() -> None:
    assert f'"trl>={OLDEST}"' in (REPO / "pyproject.toml").read_text()


@pytest.mark.parametrize("version", [OLDEST, NEWEST])
def test_grpo_trainer_trains_two_steps_with_the_readme_reward_functions(
    version: str, served: str, tmp_path: Path
) -> None:
    folder = installed(
        f"trl-{version}", [f"trl=={version}", "requests==2.34.2", "urllib3==2.8.0", "charset-normalizer==3.5.3"]
    )
    snippet = tmp_path / "snippet.py"
    snippet.write_text(readme_block("trl"))
    env = {**os.environ, "REWARDHUB_URL": served, "PYTHONPATH": os.pathsep.join([str(folder), str(REPO)])}
    run = subprocess.run(
        [sys.executable, str(HERE / "trl_readme_run.py"), str(snippet), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["version"] == version
    assert report["file"].startswith(str(folder))
    steps = [entry for entry in report["log_history"] if "rewards/rewardhub_math/mean" in entry]
    assert len(steps) == 2  # both steps were rewarded
    for entry in steps:
        for name in ("rewardhub_math", "rewardhub_format"):  # the sync and the async function
            assert math.isfinite(entry[f"rewards/{name}/mean"])  # None everywhere would log NaN
            if version != OLDEST:  # TRL hands reward functions log_metric from 1.0 on
                assert entry[f"{name}/status/ok"] == 1.0  # every completion was judged by the service
