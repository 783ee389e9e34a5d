"""The service's run folder: gone when its process exits; after a kill, gone at the next sweep,
which never takes a folder a live process holds."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewardhub.run_folder import PREFIX, sweep

ENTER_AND_WRITE = """
import sys, tempfile
from rewardhub.run_folder import enter_run_folder
path = enter_run_folder()
with open(tempfile.mkdtemp(prefix="pymp-") + "/listener", "w"):
    pass
print(path, tempfile.gettempdir(), flush=True)
if sys.argv[1] == "wait":
    sys.stdin.read()
"""


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder with room under it for the fork server's socket path (pytest's tmp_path may have none)."""
    folder = Path(tempfile.mkdtemp(prefix="rh-test-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def enter(parent: Path, how: str) -> tuple[subprocess.Popen[str], Path, str]:
    process = subprocess.Popen(
        [sys.executable, "-c", ENTER_AND_WRITE, how],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(parent)},
    )
    assert process.stdout is not None
    path, tempdir = process.stdout.readline().split()
    return process, Path(path), tempdir


def test_the_folder_is_the_process_temporary_folder_and_goes_when_it_exits(short_tmp: Path) -> None:
    process, path, tempdir = enter(short_tmp, "exit")
    assert path.parent == short_tmp and path.name.startswith(PREFIX) and tempdir == str(path)
    assert process.wait(timeout=60) == 0
    assert list(short_tmp.iterdir()) == []


def test_a_killed_process_leaves_its_folder_to_the_next_sweep_and_a_live_one_keeps_its_own(short_tmp: Path) -> None:
    killed, dead_folder, _ = enter(short_tmp, "wait")
    live, live_folder, _ = enter(short_tmp, "wait")
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    assert dead_folder.is_dir()  # SIGKILL runs no clean-up
    assert sweep(short_tmp) == [dead_folder]
    assert not dead_folder.exists()
    assert [p.name.startswith("pymp-") for p in live_folder.iterdir()] == [True]  # held: untouched
    live.communicate("")  # its stdin closes: it exits and removes its own
    assert list(short_tmp.iterdir()) == []


def test_a_sweep_leaves_a_held_folder_and_anything_not_named_as_a_run_folder(tmp_path: Path) -> None:
    held = tmp_path / f"{PREFIX}held"
    held.mkdir()
    (tmp_path / "rewardhub-other").mkdir()
    fd = os.open(held, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert sweep(tmp_path) == []
    finally:
        os.close(fd)
    assert sweep(tmp_path) == [held]
    assert [p.name for p in tmp_path.iterdir()] == ["rewardhub-other"]


def test_under_a_temporary_folder_too_long_for_a_socket_path_the_folder_is_in_tmp(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * (100 - len(str(tmp_path))))
    deep.mkdir()
    process, path, tempdir = enter(deep, "wait")
    assert path.parent == Path("/tmp") and tempdir == str(path)
    process.communicate("")
    assert not path.exists() and list(deep.iterdir()) == []
