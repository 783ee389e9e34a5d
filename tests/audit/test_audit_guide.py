"""The auditing guide's command (docs/auditing.md) runs as written and says what the guide says."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def guide_command() -> list[str]:
    section = ROOT.joinpath("docs", "auditing.md").read_text().split("## Run an audit", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    [line] = [line for line in block.splitlines() if line.startswith("rewardhub audit")]
    return shlex.split(line)


def test_the_guides_audit_command_runs(tmp_path: Path) -> None:
    command = guide_command()
    assert command[:3] == ["rewardhub", "audit", "math"]
    args = [str(ROOT / a) if a.startswith("examples/") else a for a in command[1:]]
    done = subprocess.run(
        [sys.executable, "-m", "rewardhub.cli", *args, "--workers", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "precision 1.000  recall 1.000  accuracy 1.000" in done.stdout
    assert re.search(r"exploits: 0 of \d+ rewarded", done.stdout)
    assert (tmp_path / "audit.png").read_bytes()[:4] == b"\x89PNG"
