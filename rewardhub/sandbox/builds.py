"""Compiled programs, kept by what they were built from, so a submission compiles once.

Trainers send one submission many times: verl's SandboxFusion scorer posts the same code once per
test case, all at once, and a group of rollouts often repeats a program. A build is the
compiler's verdict and, when it succeeded, the artifacts the run needs (``./main``, Java's class
folder, the emitted JavaScript), keyed by a hash of the language's compile command, the source and
the input files. The same submission arriving while its build is running waits for that build
instead of starting another (single flight).

Only deterministic outcomes are kept: a program that built, and a compiler that rejected the
source. A compiler that ran out of time or memory, or a sandbox failure, may go otherwise next
time, so the next request compiles again. Artifacts are bytes in this process's memory, evicted
least recently used past ``max_bytes``; a failed build costs only its messages.

What it does not do: share builds between processes, or notice a compiler that reads the clock
(``__TIME__``): the first build's program is the one every later run gets.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from rewardhub.sandbox.languages import Language
from rewardhub.sandbox.verdicts import RunResult

__all__ = ["Artifact", "Build", "BuildCache", "build_key"]

WAIT_S = 300.0
"""Longest wait for another request's build of the same submission before building ourselves."""


@dataclass(frozen=True)
class Artifact:
    data: bytes
    executable: bool = False

    @functools.cached_property
    def encoded(self) -> dict[str, str | bool]:
        """How the sandbox's file writer takes it; encoded once, however many jobs reuse the build."""
        return {"base64": base64.b64encode(self.data).decode("ascii"), "executable": self.executable}


@dataclass(frozen=True)
class Build:
    compiler: RunResult
    """The compiler's run: its verdict, output and time."""
    artifacts: Mapping[str, Artifact] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.compiler.ok

    @property
    def size(self) -> int:
        messages = len(self.compiler.stdout) + len(self.compiler.stderr)
        return messages + sum(len(artifact.data) for artifact in self.artifacts.values())

    @property
    def cacheable(self) -> bool:
        """Built with its artifacts in hand, or rejected by the compiler itself (it exited non-zero)."""
        if self.ok:
            return bool(self.artifacts)
        return self.compiler.verdict == "runtime_error" and self.compiler.exit_code not in (None, 0)


def build_key(language: Language, code: str, files: Mapping[str, str | bytes] | None = None) -> str:
    """What a build depends on: the compile command, the environment it is given, the source, the files."""
    digest = hashlib.sha256()
    head = {"language": language.name, "compile": language.compile, "env": language.compile_env}
    digest.update(json.dumps(head, sort_keys=True).encode())
    for name, content in sorted({**(files or {}), language.source: code}.items()):
        data = content.encode() if isinstance(content, str) else content
        digest.update(f"\0{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


class BuildCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, Build] = OrderedDict()
        self._bytes = 0
        self._building: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Build | None:
        with self._lock:
            return self._take(key)

    def build(self, key: str, make: Callable[[], Build]) -> tuple[Build, bool]:
        """The build for ``key`` and whether it came from the cache; ``make`` runs at most once at a time per key."""
        while True:
            with self._lock:
                found = self._take(key)
                if found is not None:
                    self.hits += 1
                    return found, True
                running = self._building.get(key)
                if running is None:
                    self._building[key] = threading.Event()
                    self.misses += 1
                    break
            if not running.wait(WAIT_S):
                with self._lock:
                    self.misses += 1
                return make(), False
            # that build is done: kept (a hit next time round), or not (a timeout, say: build our own)
        try:
            built = make()
            if built.cacheable:
                self._put(key, built)
            return built, False
        finally:
            with self._lock:
                self._building.pop(key).set()

    def _take(self, key: str) -> Build | None:
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def _put(self, key: str, build: Build) -> None:
        if build.size > self.max_bytes:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = build
            self._bytes += build.size
            while self._bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.size

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
