"""The fork server's own guards (the rest of it is exercised through every sandbox test)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rewardhub.sandbox.inside import child
from rewardhub.sandbox.inside.driver import INITIAL_PID_NAMESPACE
from rewardhub.sandbox.isolation import DRIVER_DIR


def test_the_server_refuses_to_kill_everything_outside_a_pid_namespace():
    if os.stat("/proc/self/ns/pid").st_ino != INITIAL_PID_NAMESPACE:
        pytest.skip("these tests do not run in the host's own pid namespace")
    argv = [sys.executable, str(DRIVER_DIR / "driver.py"), "--control-fd", "0", "--program-uid", "65534"]
    done = subprocess.run([*argv, "--scratch", "/nonexistent", "--kill-scope", "pidns"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "outside a pid namespace" in done.stderr


@pytest.mark.parametrize("path", ["../escape", "/etc/escape", "a/../../escape"])
def test_input_files_cannot_be_written_outside_the_scratch_folder(tmp_path, path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert child._write_files(str(scratch), {path: "x"}) == 1
    assert not (tmp_path / "escape").exists()


def test_input_files_are_written_read_only(tmp_path):
    assert child._write_files(str(tmp_path), {"in/data.txt": "42"}) == 0
    assert (tmp_path / "in" / "data.txt").read_text() == "42"
    assert (tmp_path / "in" / "data.txt").stat().st_mode & 0o777 == 0o444


def test_a_link_planted_where_an_input_file_goes_is_never_written_through(tmp_path):
    """A program may leave a link under an input's name for a later run of its job: one pointing
    outside the scratch folder is refused, one pointing inside is replaced; neither target changes."""
    scratch, outside = tmp_path / "scratch", tmp_path / "outside.txt"
    scratch.mkdir()
    outside.write_text("host")
    (scratch / "mine.txt").write_text("program's")
    (scratch / "out.py").symlink_to(outside)
    (scratch / "in.py").symlink_to(scratch / "mine.txt")
    assert child._write_files(str(scratch), {"out.py": "x"}) == 1
    assert child._write_files(str(scratch), {"in.py": "y"}) == 0
    assert (outside.read_text(), (scratch / "mine.txt").read_text()) == ("host", "program's")
    assert not (scratch / "in.py").is_symlink() and (scratch / "in.py").read_text() == "y"
