"""Follow one sample from ``POST /v1/score`` to its verdict: the rooms it passes through, in order.

The service's app scores the sample in this process with its calls run in place (what the local
engine does for an inline verifier; a code call otherwise crosses into a worker process first),
after one request that resolved the spec and warmed the sandbox, so the path is a trainer's steady
state. Every call from one room into another is a move, printed with how it runs against the
import graph (read from the source, as ``tests/test_layering.py`` reads it):

- ``down``: the caller's room imports the callee's;
- ``interface``: the callee implements a method that a class of the caller's room declares (the
  core calling a verifier's ``score`` through :class:`~rewardhub.verifier.Verifier`);
- ``BACK UP``: the callee's room imports the caller's (a call against the imports);
- ``across``: neither room imports the other;
- ``read``: a property of a value the caller holds (a run's ``ok``): listed, not counted as a move.

Rooms (``--rooms``): ``package``, every package a room (``rewardhub.api``, ``rewardhub.api.routes``,
``rewardhub.sandbox.inside``, ``rewardhub.verifiers.code`` ...); ``top``, rewardhub's top-level
packages, as tests/test_layering.py's rules name them (``rewardhub.api`` with its routes and
middleware, ``rewardhub.sandbox`` with its inside, ``rewardhub.verifiers``). Either way the modules
directly in ``rewardhub/`` (types, scoring, compose, registry, calls, verifier, ...) are one room,
the core, but for the process that serves (``server``, ``cli``), the top room. A stop is a stay in one file, counted along calls and returns alike. Usage::

    python -P scripts/sample_path.py              # a code sample with two stdin/stdout tests
    python -P scripts/sample_path.py --rooms top --verifier exact
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
"""Read for the project's files only: rewardhub is imported as installed, and the root stays off
sys.path, where its verifiers/ folder would shadow an installed package of that name."""

SAMPLES: dict[str, dict[str, Any]] = {
    "code": {
        "response": "```python\nprint(int(input()) * 2)\n```",
        "reference": {"inputs": ["2\n", "3\n"], "outputs": ["4\n", "6\n"]},
    },
    "math": {"response": "The answer is \\boxed{\\frac{1}{2}}", "reference": "0.5"},
    "exact": {"response": "Paris", "reference": "Paris"},
}
CORE = "rewardhub"
OWN_ROOMS = frozenset({"rewardhub.server", "rewardhub.cli"})
"""Modules directly in rewardhub/ that are not the core: the process that serves (tests/test_layering.py's top room)."""


# --- the import graph, by room ----------------------------------------------------------------------


def module_files() -> dict[str, Path]:
    """Every rewardhub module by dotted name, found the way setuptools packages them (pyproject)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped = setuptools.get("package-dir", {})
    found: dict[str, Path] = {}
    for package in setuptools["packages"]:
        prefix = max(
            (name for name in mapped if package == name or package.startswith(name + ".")), key=len, default=""
        )
        folder = ROOT / (
            mapped[prefix] + package[len(prefix) :].replace(".", "/") if prefix else package.replace(".", "/")
        )
        for path in sorted(folder.glob("*.py")):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


def room_of(module: str, modules: dict[str, Path], top: bool = False) -> str:
    """A module's package (a package's ``__init__`` is its own package's); with ``top``, the
    top-level package of rewardhub it lies in."""
    if module in OWN_ROOMS:
        return module
    package = module if modules.get(module, Path()).stem == "__init__" else module.rpartition(".")[0]
    return ".".join(package.split(".")[:2]) if top else package


def _imported(module: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base


def room_imports(modules: dict[str, Path], top: bool = False) -> dict[str, set[str]]:
    """Room -> every room it reaches through imports (transitively), itself excluded."""
    direct: dict[str, set[str]] = {}
    for module, path in modules.items():
        room = room_of(module, modules, top)
        for target in _imported(module, path, modules):
            if target in modules and room_of(target, modules, top) != room:
                direct.setdefault(room, set()).add(room_of(target, modules, top))
    reach: dict[str, set[str]] = {}
    for room in direct:
        seen, todo = set(), list(direct[room])
        while todo:
            if (nxt := todo.pop()) not in seen:
                seen.add(nxt)
                todo.extend(direct.get(nxt, ()))
        reach[room] = seen - {room}
    return reach


# --- following the sample ----------------------------------------------------------------------------


class Trace:
    """What the profiler saw between the handler's call and its return."""

    def __init__(self, modules: dict[str, Path], top: bool = False) -> None:
        self.by_file = {str(path.resolve()): name for name, path in modules.items()}
        self.names: dict[str, str | None] = {}
        self.modules, self.top, self.reach = modules, top, room_imports(modules, top)
        self.armed = self.on = False
        self.ends = (0, 0)  # where the handler last returned: what follows is the answer on its way out
        self.stops: list[str] = []
        self.moves: list[tuple[str, str, str, str]] = []  # (from room, to room, function, how)

    def module(self, frame: FrameType | None) -> tuple[str, FrameType] | None:
        """The nearest frame at or above ``frame`` that runs our code (a module body is an import: not ours)."""
        while frame is not None:
            name = self._name(frame.f_code.co_filename)
            if name is not None and frame.f_code.co_name != "<module>":
                return name, frame
            frame = frame.f_back
        return None

    def _name(self, filename: str) -> str | None:
        """The module a code object's file holds, if it is ours (a linked folder is read as its target)."""
        if filename not in self.names:
            self.names[filename] = self.by_file.get(str(Path(filename).resolve()))
        return self.names[filename]

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.armed or event not in ("call", "return"):
            return
        here = self.module(frame)
        if here is None:
            return
        name, ours = here
        handler = name == "rewardhub.api.routes.score" and ours.f_code.co_name == "score" and ours is frame
        if event == "call" and handler:
            self.on = True
        if not self.on:
            return
        if event == "return":
            if handler:  # an await suspends the handler too: the last of these is its answer
                self.ends = (len(self.stops), len(self.moves))
            back = self.module(frame.f_back)
            if back is not None:
                self._stop(back[0])
            return
        if ours is frame and not handler:
            caller = self.module(frame.f_back)
            if caller is not None and self._room(caller[0]) != self._room(name):
                how = self._how(self._room(caller[0]), self._room(name), frame)
                self.moves.append((self._room(caller[0]), self._room(name), frame.f_code.co_qualname, how))
        self._stop(name)

    def _stop(self, module: str) -> None:
        if not self.stops or self.stops[-1] != module:
            self.stops.append(module)

    def _room(self, module: str) -> str:
        return room_of(module, self.modules, self.top)

    def _how(self, caller: str, callee: str, frame: FrameType) -> str:
        owner = frame.f_locals.get("self", frame.f_locals.get("cls"))
        getter = inspect.getattr_static(type(owner), frame.f_code.co_name, None) if owner is not None else None
        if isinstance(getter, property) and getattr(getter.fget, "__code__", None) is frame.f_code:
            return "read"
        if callee in self.reach.get(caller, ()):
            return "down"
        cls = owner if isinstance(owner, type) else type(owner) if owner is not None else None
        if cls is not None:
            declared = [base for base in cls.__mro__[1:] if frame.f_code.co_name in vars(base)]
            if any(self._room(base.__module__) == caller for base in declared if base.__module__ in self.modules):
                return "interface"
        return "BACK UP" if caller in self.reach.get(callee, ()) else "across"


def follow(verifier: str, top: bool = False) -> tuple[Trace, dict[str, Any]]:
    from fastapi.testclient import TestClient

    from rewardhub.api.app import create_app
    from rewardhub.calls import run_call
    from rewardhub.execution.base import Executor
    from rewardhub.registry import Registry
    from rewardhub.settings import Settings

    class InPlace(Executor):
        def __init__(self, registry: Registry) -> None:
            self.registry = registry

        async def run(self, calls, on_progress=None):  # type: ignore[no-untyped-def]
            return [run_call(self.registry, call) for call in calls]

    path = Trace(module_files(), top)
    registry = Registry.load([])
    body = {"verifier": verifier, "samples": [SAMPLES[verifier]], "cache": False}
    threading.setprofile(path.profile)  # the app's thread starts with the client: profiled from its start
    sys.setprofile(path.profile)
    try:
        with TestClient(create_app(Settings(ui_enabled=False), registry, InPlace(registry))) as client:
            client.post("/v1/score", json=body).raise_for_status()  # the spec resolved, the sandbox warm
            path.armed = True
            answer = client.post("/v1/score", json=body)
            path.armed = False
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    answer.raise_for_status()
    path.stops, path.moves = path.stops[: path.ends[0] + 1], path.moves[: path.ends[1]]
    return path, answer.json()["results"][0]


def short(room: str) -> str:
    return "core" if room == CORE else room.removeprefix("rewardhub.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verifier", choices=sorted(SAMPLES), default="code")
    parser.add_argument("--rooms", choices=("package", "top"), default="package")
    args = parser.parse_args(argv)
    path, result = follow(args.verifier, top=args.rooms == "top")
    print(f"POST /v1/score, one {args.verifier!r} sample: {result['status']}, score {result['score']}")
    for number, (caller, callee, function, how) in enumerate(path.moves, 1):
        print(f"{number:3d}  {short(caller):>16} -> {short(callee):<16} {function:<40} {how}")
    moves = [move for move in path.moves if move[3] != "read"]
    rooms = {room for move in moves for room in move[:2]}
    back_up = sum(how == "BACK UP" for *_, how in moves)
    print(
        f"{len(path.stops)} stops in {len(set(path.stops))} files; rooms ({args.rooms}): {len(rooms)} entered, "
        f"{len(moves)} moves between them, {back_up} back up ({len(path.moves) - len(moves)} reads not counted)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
