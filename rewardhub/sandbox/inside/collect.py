"""Copying a finished session's declared artifacts out: regular files only, named as declared, never
through a link, within size caps.

A fresh verification judges a session by the files it declared and nothing else, so what comes out
must be exactly those files' bytes. This runs in the session's sandbox as the program's user (a
fetch, :func:`child.become_program`), after every process of the session was killed: nothing of the
session runs while it reads, and it can read nothing the session could not have read itself.

- A declared name is walked one folder at a time from the working directory with ``O_NOFOLLOW``: a
  link anywhere on its way, or as the file itself, is never followed. What a name finds that is not
  a regular file (a link, a folder's link, a fifo, a socket, a device), a file past the per-file cap,
  one past the total cap or one it may not read is *refused*, with the reason; a name that finds
  nothing is *missing*.
- A declared folder brings every regular file below it; a simple glob (``*``, ``?``, ``[...]`` within
  one path segment) brings what it matches. A file they match past a cap is refused, as a named one
  is; what they match that is not a regular file, and names
  starting with a dot, are *left out* (listed, never followed), and so are the files Python and
  pytest run on their own when they start (``conftest.py``, ``sitecustomize.py``,
  ``usercustomize.py``, ``*.pth``): a glob lets the agent choose what travels, so those travel only
  when declared by their exact name.

Standard library only.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import stat
from typing import Any

__all__ = ["collect"]

GLOB_CHARS = "*?["
STARTUP_HOOKS = ("conftest.py", "sitecustomize.py", "usercustomize.py", "*.pth")
"""Files that run by themselves when Python or pytest starts: a glob or folder never carries them."""
MAX_LISTED = 100
"""Entries of ``left_out`` (and of files a glob or folder found past a cap) listed at most: a tree
of a million links must not make the answer huge."""
HIDDEN = "a glob or folder never carries dot files nor Python's and pytest's startup files: name it exactly"
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class Refused(Exception):
    """A declared file that does not travel, and why."""


class OverCap(Refused):
    """A file past a cap: refused wherever it was found (a glob or folder never drops it quietly,
    which would let tests that skip what is absent pass)."""


def collect(root: str, spec: dict[str, Any]) -> int:
    """Print ``{"files": {path: {"base64", "executable"}}, "missing", "refused", "left_out"}`` for
    ``spec["paths"]`` under ``root``, with ``spec``'s caps; the exit status."""
    box = _Collection(int(spec["max_file_bytes"]), int(spec["max_total_bytes"]), int(spec["max_files"]))
    root_fd = os.open(root, DIR_FLAGS)
    try:
        for declared in spec["paths"]:
            box.take(root_fd, str(declared))
    finally:
        os.close(root_fd)
    answer = {"files": box.files, "missing": box.missing, "refused": box.refused, "left_out": box.left_out}
    view = memoryview(json.dumps(answer).encode())
    while view:
        view = view[os.write(1, view[: 1 << 16]) :]
    return 0


class _Collection:
    def __init__(self, max_file_bytes: int, max_total_bytes: int, max_files: int) -> None:
        self.max_file_bytes, self.max_total_bytes, self.max_files = max_file_bytes, max_total_bytes, max_files
        self.total = 0
        self.files: dict[str, dict[str, Any]] = {}
        self.missing: list[str] = []
        self.refused: dict[str, str] = {}
        self.left_out: dict[str, str] = {}
        self.examined = 0

    def leave(self, path: str, reason: str) -> None:
        """List what a glob or folder matched that does not travel (the first hundred of them)."""
        if len(self.left_out) < MAX_LISTED:
            self.left_out[path] = reason

    def listing(self, folder_fd: int) -> list[str]:
        """A folder's names, sorted, each counted as it is read: a tree too large to walk is refused
        (before the whole of a huge folder is read), not a slow fetch."""
        names = []
        with os.scandir(folder_fd) as entries:
            for entry in entries:
                self.examined += 1
                if self.examined > self.max_files * 10:
                    raise Refused(f"more than {self.max_files * 10} entries to look through")
                names.append(entry.name)
        return sorted(names)

    def _walk(self, folder_fd: int, prefix: str, declared: str) -> None:
        try:
            self._folder(folder_fd, prefix)
        except Refused as exc:
            self.refused[declared] = str(exc)

    def take(self, root_fd: int, declared: str) -> None:
        parts = declared.split("/")
        if declared.startswith("/") or any(part in ("", "..") for part in parts) or "\0" in declared:
            self.refused[declared] = "not a plain path relative to the working directory"
            return
        parts = [part for part in parts if part != "."]
        if any(char in declared for char in GLOB_CHARS):
            try:
                matched = self._glob(root_fd, [], parts)
            except Refused as exc:
                self.refused[declared] = str(exc)
                return
            if not matched:  # what it matched that does not travel is listed in left_out
                self.missing.append(declared)
            return
        try:
            folder_fd = _open_folder(root_fd, parts[:-1])
        except FileNotFoundError:
            self.missing.append(declared)
            return
        except OSError:
            self.refused[declared] = "a folder on its path is a link or not a folder"
            return
        try:
            if not parts:  # "." itself: the whole working directory
                self._walk(folder_fd, "", declared)
                return
            try:
                info = os.stat(parts[-1], dir_fd=folder_fd, follow_symlinks=False)
            except FileNotFoundError:
                self.missing.append(declared)
                return
            if stat.S_ISDIR(info.st_mode):
                sub = os.open(parts[-1], DIR_FLAGS, dir_fd=folder_fd)
                try:
                    self._walk(sub, "/".join(parts), declared)
                finally:
                    os.close(sub)
                return
            try:
                self._file(folder_fd, parts[-1], "/".join(parts))
            except Refused as exc:
                self.refused[declared] = str(exc)
        finally:
            if folder_fd != root_fd:
                os.close(folder_fd)

    def _file(self, folder_fd: int, name: str, path: str) -> None:
        """Read one regular file (never through a link) into :attr:`files`, or raise :class:`Refused`."""
        if len(self.files) >= self.max_files and path not in self.files:
            raise OverCap(f"more than {self.max_files} artifacts")
        info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        kind = _kind(info.st_mode)
        if kind != "file":
            raise Refused(f"not a regular file: a {kind}")
        if info.st_size > self.max_file_bytes:
            raise OverCap(f"larger than the cap of {self.max_file_bytes} bytes per artifact")
        try:
            fd = os.open(name, FILE_FLAGS, dir_fd=folder_fd)
        except OSError as exc:
            raise Refused(f"cannot be read: {exc.strerror}") from None
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                raise Refused("changed while it was read")
            chunks, size = [], 0
            while size <= self.max_file_bytes:
                chunk = os.read(fd, min(1 << 20, self.max_file_bytes + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError as exc:
            raise Refused(f"cannot be read: {exc.strerror}") from None
        finally:
            os.close(fd)
        if size > self.max_file_bytes:
            raise OverCap(f"larger than the cap of {self.max_file_bytes} bytes per artifact")
        if self.total + size > self.max_total_bytes:
            raise OverCap(f"the artifacts together exceed the cap of {self.max_total_bytes} bytes")
        self.total += size
        data = b"".join(chunks)
        self.files[path] = {"base64": base64.b64encode(data).decode("ascii"), "executable": bool(info.st_mode & 0o111)}

    def _matched(self, folder_fd: int, name: str, path: str) -> bool:
        """A file a glob or a folder matched: taken, or left out with the reason; whether taken."""
        if name.startswith(".") or any(fnmatch.fnmatchcase(name, hook) for hook in STARTUP_HOOKS):
            self.leave(path, HIDDEN)
            return False
        try:
            self._file(folder_fd, name, path)
        except OverCap as exc:  # past the total cap, every later file is: list the first hundred
            if len(self.refused) < MAX_LISTED:
                self.refused[path] = str(exc)
            return False
        except Refused as exc:
            self.leave(path, str(exc))
            return False
        return True

    def _folder(self, folder_fd: int, prefix: str) -> None:
        for name in self.listing(folder_fd):
            path = f"{prefix}/{name}" if prefix else name
            if not _utf8(name):
                self.leave(_shown(path), "a name that is not UTF-8")
                continue
            if name.startswith("."):
                self.leave(path, HIDDEN)
                continue
            info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                self._matched(folder_fd, name, path)
                continue
            try:
                sub = os.open(name, DIR_FLAGS, dir_fd=folder_fd)
            except OSError as exc:  # too deep for the open files allowed, or unreadable: the agent's doing
                self.leave(path, f"a folder that cannot be opened: {exc.strerror}")
                continue
            try:
                self._folder(sub, path)
            finally:
                os.close(sub)

    def _glob(self, folder_fd: int, done: list[str], parts: list[str]) -> int:
        """What ``parts`` match below ``folder_fd`` (reached through ``done``): how many files were taken."""
        head, rest = parts[0], parts[1:]
        names = self.listing(folder_fd) if any(c in head for c in GLOB_CHARS) else [head]
        taken = 0
        for name in names:
            if not fnmatch.fnmatchcase(name, head):
                continue
            if not _utf8(name):
                self.leave(_shown("/".join([*done, name])), "a name that is not UTF-8")
                continue
            path = "/".join([*done, name])
            try:
                info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if rest:
                if name.startswith(".") and not head.startswith("."):
                    continue
                if stat.S_ISDIR(info.st_mode):
                    try:
                        sub = os.open(name, DIR_FLAGS, dir_fd=folder_fd)
                    except OSError as exc:
                        self.leave(path, f"a folder that cannot be opened: {exc.strerror}")
                        continue
                    try:
                        taken += self._glob(sub, [*done, name], rest)
                    finally:
                        os.close(sub)
                continue
            if stat.S_ISDIR(info.st_mode):
                self.leave(path, "a folder (declare it by name to carry what is in it)")
            elif self._matched(folder_fd, name, path):
                taken += 1
        return taken


def _open_folder(root_fd: int, parts: list[str]) -> int:
    """The folder ``parts`` name below ``root_fd``, opened one step at a time, never through a link."""
    fd = root_fd
    for part in parts:
        try:
            following = os.open(part, DIR_FLAGS, dir_fd=fd)
        finally:
            if fd != root_fd:
                os.close(fd)
        fd = following
    return fd


def _utf8(name: str) -> bool:
    """Whether a file name is text: one that is not (undecodable bytes) could not be written back,
    nor shown in a JSON answer."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISREG, "file"),
        (stat.S_ISLNK, "symbolic link"),
        (stat.S_ISDIR, "folder"),
        (stat.S_ISFIFO, "fifo"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return kind
    return "special file"
