"""The fork server's own guards (the rest of it is exercised through every sandbox test)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import pytest

from rewardhub.sandbox.inside import child, driver
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
    assert child._write_files([str(scratch)], {path: "x"}) == 1
    assert not (tmp_path / "escape").exists()


def test_input_files_are_written_read_only(tmp_path):
    assert child._write_files([str(tmp_path)], {"in/data.txt": "42"}) == 0
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
    assert child._write_files([str(scratch)], {"out.py": "x"}) == 1
    assert child._write_files([str(scratch)], {"in.py": "y"}) == 0
    assert (outside.read_text(), (scratch / "mine.txt").read_text()) == ("host", "program's")
    assert not (scratch / "in.py").is_symlink() and (scratch / "in.py").read_text() == "y"


def test_absolute_input_paths_land_in_any_of_the_jobs_folders(tmp_path):
    work, mnt = tmp_path / "work", tmp_path / "mnt"
    work.mkdir(), mnt.mkdir()
    files = {f"{mnt}/in/b.txt": "b", f"{work}/a.txt": "a", "c.txt": "c"}
    assert child._write_files([str(work), str(mnt)], files) == 0
    assert [(mnt / "in" / "b.txt").read_text(), (work / "a.txt").read_text(), (work / "c.txt").read_text()] == list(
        "bac"
    )


@pytest.mark.parametrize("path", ["{outside}/x", "{mnt}/../x", "{mnt}", "{mnt}/link/x", "link/x"])
def test_no_input_path_leads_out_of_the_jobs_folders(tmp_path, path):
    """Neither an absolute path elsewhere, nor ``..``, nor a link an earlier run left pointing out."""
    work, mnt, outside = tmp_path / "work", tmp_path / "mnt", tmp_path / "outside"
    for folder in (work, mnt, outside):
        folder.mkdir()
    (mnt / "link").symlink_to(outside)
    (work / "link").symlink_to(outside)
    name = path.format(outside=outside, mnt=mnt)
    assert child._write_files([str(work), str(mnt)], {name: "x"}) == 1
    assert list(outside.iterdir()) == []


def test_fetched_files_are_named_as_asked_and_links_out_bring_nothing(tmp_path, capfd):
    work, mnt, outside = tmp_path / "work", tmp_path / "mnt", tmp_path / "outside"
    for folder in (work, mnt / "deep", outside):
        folder.mkdir(parents=True)
    (outside / "secret").write_text("host")
    (work / "a.txt").write_text("a")
    (mnt / "deep" / "b.txt").write_text("b")
    (work / "secret").symlink_to(outside / "secret")
    (mnt / "out").symlink_to(outside)
    (mnt / "deep" / "secret").symlink_to(outside / "secret")
    asked = ["a.txt", f"{work}/a.txt", f"{mnt}/deep", "secret", f"{mnt}/out/secret", f"{outside}/secret", "../outside"]
    assert child._fetch([str(work), str(mnt)], asked, 1 << 20) == 0
    fetched = json.loads(capfd.readouterr().out)["files"]
    assert {name: base64.b64decode(entry["base64"]).decode() for name, entry in fetched.items()} == {
        "a.txt": "a",
        f"{work}/a.txt": "a",
        f"{mnt}/deep/b.txt": "b",
    }


def test_a_failure_of_the_harness_is_one_line_without_a_frame_or_a_path(capfd):
    try:
        raise RuntimeError("the harness broke")
    except RuntimeError as exc:
        driver._harness_failed(exc)
    assert capfd.readouterr().err == "sandbox harness error: RuntimeError: the harness broke\n"
