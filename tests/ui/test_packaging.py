"""The page needs no build step and nothing from outside: its assets ship in the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import rewardhub.ui

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ("index.html", "ui.js", "ui.css")


def test_public_names():
    assert sorted(rewardhub.ui.__all__) == ["StatsRecorder", "open_store"]


def test_the_wheel_ships_every_asset_of_the_page(tmp_path: Path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    [wheel] = tmp_path.glob("rewardhub-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in ASSETS:
            shipped = archive.read(f"rewardhub/ui/static/{name}").decode()
            assert shipped == (ROOT / "rewardhub" / "ui" / "static" / name).read_text()
