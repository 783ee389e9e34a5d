"""How a session's declared artifacts are read out (:mod:`rewardhub.sandbox.inside.collect`), on a
folder of this host: regular files by name, never through a link; folders and simple globs bring what
they match, leaving out what is not a regular file, dot files and startup hooks; caps refuse. (In a
session it runs as the session's user after its processes stopped: tests/sessions/test_fresh_verification.py.)"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from rewardhub.sandbox.inside.collect import collect


def _collected(root: Path, paths: list[str], capfd: pytest.CaptureFixture[str], **caps: int) -> dict[str, Any]:
    spec = {"paths": paths, "max_file_bytes": 1 << 20, "max_total_bytes": 8 << 20, "max_files": 1000, **caps}
    assert collect(str(root), spec) == 0
    answer = json.loads(capfd.readouterr().out)
    answer["files"] = {path: base64.b64decode(entry["base64"]) for path, entry in answer["files"].items()}
    return answer


def test_named_files_folders_and_globs(tmp_path, capfd):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.py").write_text("a")
    (tmp_path / "src" / "b.py").write_text("b")
    (tmp_path / "solution.py").write_text("s")
    (tmp_path / ".secret").write_text("x")
    answer = _collected(tmp_path, ["solution.py", "src/*/a.py", "src"], capfd)
    assert answer["files"] == {"solution.py": b"s", "src/pkg/a.py": b"a", "src/b.py": b"b"}
    assert (answer["missing"], answer["refused"]) == ([], {})
    whole = _collected(tmp_path, ["."], capfd)
    assert set(whole["files"]) == {"solution.py", "src/pkg/a.py", "src/b.py"} and ".secret" in whole["left_out"]


def test_a_link_is_never_followed_by_name_by_folder_or_by_glob(tmp_path, capfd):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the-host-file-content")
    root = tmp_path / "root"
    root.mkdir()
    (root / "answer.txt").symlink_to(outside / "secret.txt")
    (root / "linked").symlink_to(outside)
    answer = _collected(root, ["answer.txt", "linked/secret.txt", "*.txt", "linked/*", "."], capfd)
    assert answer["files"] == {}
    assert "symbolic link" in answer["refused"]["answer.txt"]
    assert "link" in answer["refused"]["linked/secret.txt"]
    assert answer["missing"] == ["*.txt", "linked/*"]  # a glob that carries nothing
    assert b"the-host-file-content" not in json.dumps(answer).encode()


def test_special_files_are_refused_by_name_and_left_out_by_glob(tmp_path, capfd):
    os.mkfifo(tmp_path / "answer.txt")
    answer = _collected(tmp_path, ["answer.txt", "*.txt"], capfd)
    assert "fifo" in answer["refused"]["answer.txt"] and "fifo" in answer["left_out"]["answer.txt"]


def test_startup_hooks_travel_only_by_their_exact_name(tmp_path, capfd):
    for name in ("conftest.py", "sitecustomize.py", "usercustomize.py", "hook.pth", "solution.py"):
        (tmp_path / name).write_text(name)
    answer = _collected(tmp_path, ["*.py", "*.pth"], capfd)
    assert set(answer["files"]) == {"solution.py"}
    assert set(_collected(tmp_path, ["conftest.py"], capfd)["files"]) == {"conftest.py"}


def test_caps_refuse_wherever_the_file_was_found(tmp_path, capfd):
    for i in range(3):
        (tmp_path / f"part{i}.bin").write_bytes(b"x" * 60)
    (tmp_path / "big.bin").write_bytes(b"x" * 200)
    answer = _collected(tmp_path, ["big.bin", "part*.bin"], capfd, max_file_bytes=100, max_total_bytes=150)
    assert "larger than the cap" in answer["refused"]["big.bin"]
    assert "together exceed" in answer["refused"]["part2.bin"] and set(answer["files"]) == {"part0.bin", "part1.bin"}
    many = _collected(tmp_path, ["part*.bin"], capfd, max_files=2)
    assert "more than 2 artifacts" in many["refused"]["part2.bin"]


def test_a_tree_too_large_to_walk_is_refused_not_walked(tmp_path, capfd):
    (tmp_path / "tree").mkdir()
    for i in range(40):
        (tmp_path / "tree" / f"{i}.txt").write_text("x")
    answer = _collected(tmp_path, ["tree"], capfd, max_files=3)
    assert "entries to look through" in answer["refused"]["tree"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../up", "a/../b", ""])
def test_a_path_that_is_not_plain_and_relative_is_refused(tmp_path, capfd, path):
    assert "not a plain path" in _collected(tmp_path, [path], capfd)["refused"][path]


def test_a_name_that_is_not_utf8_is_left_out_and_shown_readably(tmp_path, capfd):
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xff.py"), "w") as handle:
        handle.write("x")
    (tmp_path / "solution.py").write_text("s")
    answer = _collected(tmp_path, ["*.py", "."], capfd)
    assert set(answer["files"]) == {"solution.py"}
    assert answer["left_out"] == {"bad\ufffd.py": "a name that is not UTF-8"}
