"""Who may import whom. Data flows one way: caller -> HTTP -> api -> execution -> verifier -> result.

- **Callers talk to the service through a small surface.** The client, the trainer adapters in
  ``rewardhub.integrations`` and the trainer (``rewardhub.trainer``) import, of rewardhub, only
  their own package and :data:`SURFACE`: the vocabulary (``rewardhub.types``, with trainers'
  messages read into it, ``rewardhub.messages``, and a result's numeric logs,
  ``rewardhub.result_logs``), the client, the
  client run in the background (``rewardhub.background``: a thread or child process that owns a
  client) and the launcher that starts a service process. ``rewardhub.errors`` is not in it: it is
  the service's exception tree, mapped to HTTP codes; a caller meets those codes as the client's
  ``ClientError`` (with ``status_code`` and the error body), which is the client's vocabulary.
- The surface itself stays closed: its modules import only each other, so importing the client
  never loads the service. The one exception is named below (a service started in the caller's
  own thread *is* the service's code).
- ``rewardhub.types`` imports nothing of ours; verifiers (``rewardhub.verifiers``,
  ``rewardhub.models``) never import the API, the execution engines or the server.
- **The code verifier reaches the sandbox only through its public face.** ``rewardhub.verifiers.code``
  (the verifier and its trusted half: test formats, asserts, comparison, checkers) imports of the
  sandbox only ``rewardhub.sandbox`` itself, never one of its modules; and the sandbox, which runs
  programs and judges nothing, imports no verifier.
- **Inside the code verifier, what judges a run cannot make one.** Its modules that read tests and
  judge runs (``outcomes``, ``compare``, ``asserts``, ``testcases``, ``lcb``) take of the sandbox only
  its vocabulary (:data:`SANDBOX_VOCABULARY`: a run's result, a language, the wire's values); only
  the verifier itself and ``checkers`` start sandbox work, and only ``session`` reaches the sessions.
- **The sandbox is the ground floor of a code sample's path.** Of rewardhub it imports only itself and
  the exception tree (``rewardhub.errors``): its settings are handed down to it by the service's
  settings tree (:func:`rewardhub.sandbox.settings.read_from`), which imports the sandbox's section.
- ``rewardhub.jobs`` (the job store and its journals) sits under the API and the execution
  engines: both import it, it imports neither, and callers and verifiers never import it.
- The API never imports the adapters, and the adapters never import the API, the execution engines
  or the sandbox: the two halves of a foreign protocol meet over HTTP only (the server half lives in
  ``rewardhub.api.compat``).
- **Nothing imports upward.** The service's rooms, bottom up: the sandbox (runs programs), the
  sessions (sandboxes kept across calls, :mod:`rewardhub.sessions`), the operator page's figures
  (``rewardhub.ui``) and the job store, the execution engines, the API, the process that serves it
  (``rewardhub.server``, ``rewardhub.cli``). A room imports only rooms below it (:data:`ROOMS`): the
  sessions may import the sandbox, never the API; the sandbox imports no session.
- **No router imports another.** A module that makes an ``APIRouter`` (one per resource in
  ``rewardhub.api.routes``, one per foreign protocol in ``rewardhub.api.compat``) imports no other
  such module: what routers share lives in a module that makes none (``rewardhub.api.deps``,
  ``body``, ``offload``). Only the app, the middleware that answers hot routes and the package
  ``__init__`` s that gather routers import a router.
- No import cycles among rewardhub's modules.

Imports are read from the source with ``ast``, at module level and inside functions alike (a
function-level import is still a dependency, only a later one), so nothing is imported to check.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SURFACE = frozenset(
    {
        "rewardhub.types",
        "rewardhub.messages",
        "rewardhub.result_logs",
        "rewardhub.client",
        "rewardhub.background",
        "rewardhub.launcher",
        "rewardhub.processes",
    }
)
"""What a caller may import of rewardhub, besides its own package."""

CALLER_PACKAGES = {
    "rewardhub.client": "rewardhub.client",
    "rewardhub.integrations": "rewardhub.integrations",
    "rewardhub.trainer": "rewardhub.trainer",
}
"""Caller modules (a module or a package's modules) and the package each may import freely."""

SURFACE_EXCEPTIONS = {
    ("rewardhub.launcher", "rewardhub.api.app"): "ServiceThread.start runs the service in the caller's thread",
    ("rewardhub.launcher", "rewardhub.settings"): "ServiceThread reads the service's settings for it",
}
"""Function-level imports a surface module may make beyond the surface, and why."""

SERVICE = ("rewardhub.api", "rewardhub.execution", "rewardhub.jobs", "rewardhub.server")
"""The service's own code: what callers and verifiers must never import."""


@dataclass(frozen=True)
class Import:
    target: str  # the rewardhub module imported (a package's name for its __init__)
    line: int
    in_function: bool


# --- reading the source -----------------------------------------------------------------------------


@cache
def modules() -> dict[str, Path]:
    """Every rewardhub module by dotted name, found the way setuptools packages them (pyproject)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped = setuptools.get("package-dir", {})
    found: dict[str, Path] = {}
    for package in setuptools["packages"]:
        prefix = max(
            (name for name in mapped if package == name or package.startswith(name + ".")), key=len, default=None
        )
        folder = (
            ROOT / mapped[prefix] / package[len(prefix) + 1 :].replace(".", "/")
            if prefix
            else ROOT / package.replace(".", "/")
        )
        for path in sorted(folder.glob("*.py")):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


@cache
def imports_of(module: str) -> tuple[Import, ...]:
    """The rewardhub modules ``module`` imports at run time, wherever in the file the import statement
    is (an ``if TYPE_CHECKING:`` block is for the type checker only and is skipped)."""
    path = modules()[module]
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                continue
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                found.extend(Import(alias.name, child.lineno, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(child, package)
                for alias in child.names:
                    submodule = f"{base}.{alias.name}"
                    found.append(Import(submodule if submodule in modules() else base, child.lineno, in_function))
            visit(child, nested)

    visit(tree, False)
    return tuple(i for i in found if i.target == "rewardhub" or i.target.startswith("rewardhub."))


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in {"TYPE_CHECKING", "typing.TYPE_CHECKING"}


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def callers() -> dict[str, str]:
    """Caller module -> the package it may import freely."""
    return {
        module: own
        for module in modules()
        for own in [next((own for prefix, own in CALLER_PACKAGES.items() if _within(module, prefix)), None)]
        if own is not None
    }


def _where(module: str, found: Import) -> str:
    return f"{modules()[module].relative_to(ROOT)}:{found.line} imports {found.target}"


# --- the reader reads what it should (so the rules below can fail) ---------------------------------


def test_the_reader_finds_every_package_and_both_kinds_of_import() -> None:
    found = modules()
    assert {"rewardhub.types", "rewardhub.verifiers.math.verifier", "rewardhub.trainer.loop"} <= set(found)
    assert found["rewardhub.trainer.loop"] == ROOT / "trainer_client" / "loop.py"
    common = {i.target: i.in_function for i in imports_of("rewardhub.integrations.common")}
    assert common["rewardhub.types"] is False
    launcher = {i.target: i.in_function for i in imports_of("rewardhub.launcher")}
    assert launcher["rewardhub.api.app"] is True  # inside ServiceThread.start
    driver = {i.target for i in imports_of("rewardhub.sandbox.inside.driver")}
    assert {"rewardhub.sandbox.inside.child", "rewardhub.sandbox.inside.wire"} <= driver  # `from . import child`


def test_every_kind_of_caller_is_checked() -> None:
    checked = set(callers())
    assert {"rewardhub.client", "rewardhub.trainer.loop", "rewardhub.trainer.rewards"} <= checked
    assert {"rewardhub.integrations.trl", "rewardhub.integrations.verl", "rewardhub.integrations.common"} <= checked
    assert {"rewardhub.integrations.openrlhf_reward_func", "rewardhub.integrations.slime"} <= checked


# --- the rules --------------------------------------------------------------------------------------


@pytest.mark.parametrize("module", sorted(callers()))
def test_a_caller_imports_only_the_surface(module: str) -> None:
    own = callers()[module]
    wrong = [
        _where(module, found)
        for found in imports_of(module)
        if not _within(found.target, own) and found.target not in SURFACE
    ]
    assert not wrong, f"callers may import {sorted(SURFACE)} and their own package; " + "; ".join(wrong)


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_the_surface_imports_only_itself(module: str) -> None:
    wrong = [
        _where(module, found)
        for found in imports_of(module)
        if found.target not in SURFACE
        and not (found.in_function and (module, found.target) in SURFACE_EXCEPTIONS)
        and found.target != module
    ]
    assert not wrong, "; ".join(wrong)


def test_the_vocabulary_imports_nothing_of_ours() -> None:
    assert not [_where("rewardhub.types", found) for found in imports_of("rewardhub.types")]


@pytest.mark.parametrize("package", ["rewardhub.verifiers", "rewardhub.models"])
def test_verifiers_never_import_the_service(package: str) -> None:
    wrong = [_where(module, found) for module, found in _verifier_imports_of_the_service(package)]
    assert not wrong, "; ".join(wrong)


def _verifier_imports_of_the_service(package: str) -> list[tuple[str, Import]]:
    return [
        (module, found)
        for module in modules()
        if _within(module, package)
        for found in imports_of(module)
        if any(_within(found.target, side) for side in SERVICE)
    ]


def test_the_api_never_imports_the_adapters() -> None:
    wrong = [
        _where(module, found)
        for module in modules()
        if _within(module, "rewardhub.api")
        for found in imports_of(module)
        if _within(found.target, "rewardhub.integrations")
    ]
    assert not wrong, "the server half of a protocol belongs in rewardhub.api.compat: " + "; ".join(wrong)


def test_the_adapters_never_import_the_api_execution_or_sandbox() -> None:
    wrong = [
        _where(module, found)
        for module in modules()
        if _within(module, "rewardhub.integrations")
        for found in imports_of(module)
        if any(_within(found.target, side) for side in ("rewardhub.api", "rewardhub.execution", "rewardhub.sandbox"))
    ]
    assert not wrong, "; ".join(wrong)


SANDBOX_FACE = "rewardhub.sandbox"
"""The sandbox's public face: its package ``__init__``, whose ``__all__`` tests/sandbox pins."""


def test_the_reader_sees_the_code_verifiers_way_into_the_sandbox() -> None:
    verifier = {i.target for i in imports_of("rewardhub.verifiers.code.verifier")}
    assert SANDBOX_FACE in verifier
    assert "rewardhub.verifiers.code.testcases" in verifier  # `from .testcases import ...`
    assert {"rewardhub.verifiers.code.asserts", "rewardhub.verifiers.code.lcb"} <= {
        i.target for i in imports_of("rewardhub.verifiers.code.testcases")
    }


def test_the_code_verifier_imports_only_the_sandboxs_public_face() -> None:
    package = [module for module in modules() if _within(module, "rewardhub.verifiers.code")]
    assert len(package) >= 6  # the verifier and its trusted half
    wrong = [
        _where(module, found)
        for module in package
        for found in imports_of(module)
        if _within(found.target, SANDBOX_FACE) and found.target != SANDBOX_FACE
    ]
    assert not wrong, f"import what the code verifier needs from {SANDBOX_FACE} itself: " + "; ".join(wrong)


CODE_JUDGES = ("outcomes", "compare", "asserts", "testcases", "lcb")
"""The code verifier's modules that read tests and judge runs, never run anything."""
SANDBOX_VOCABULARY = frozenset({"RunResult", "Verdict", "VERDICTS", "Language", "decode_value"})
"""What a judge may take of the sandbox: the words a run is described in."""


def _names_taken(module: str, source: str) -> set[str]:
    """The names ``module`` takes from the module ``source`` (``from source import a, b``), wherever it does."""
    path = modules()[module]
    package = module.rpartition(".")[0]
    return {
        alias.name
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.ImportFrom) and _absolute(node, package) == source
        for alias in node.names
    }


def test_the_code_verifiers_judges_take_only_the_sandboxs_vocabulary() -> None:
    judges = [f"rewardhub.verifiers.code.{name}" for name in CODE_JUDGES]
    assert set(judges) <= set(modules())
    assert "RunResult" in _names_taken("rewardhub.verifiers.code.outcomes", SANDBOX_FACE)  # the reader reads them
    wrong = {
        module: sorted(taken - SANDBOX_VOCABULARY)
        for module in judges
        if (taken := _names_taken(module, SANDBOX_FACE)) - SANDBOX_VOCABULARY
    }
    assert not wrong, f"a judge takes runs, it never makes one (the verifier starts them): {wrong}"


def test_of_the_code_verifier_only_its_session_module_reaches_the_sessions() -> None:
    wrong = [
        _where(module, found)
        for module in modules()
        if _within(module, "rewardhub.verifiers.code") and module != "rewardhub.verifiers.code.session"
        for found in imports_of(module)
        if _within(found.target, "rewardhub.sessions")
    ]
    assert not wrong, "; ".join(wrong)


def test_the_sandbox_imports_no_verifier() -> None:
    wrong = [
        _where(module, found)
        for module in modules()
        if _within(module, SANDBOX_FACE)
        for found in imports_of(module)
        if _within(found.target, "rewardhub.verifiers") or _within(found.target, "rewardhub.models")
    ]
    assert not wrong, "what a run means is the verifier's to judge: " + "; ".join(wrong)


SANDBOX_MAY_IMPORT = frozenset({"rewardhub.errors"})
"""What the sandbox imports of rewardhub outside itself: the exception tree its errors belong to."""


def test_the_sandbox_imports_nothing_above_it() -> None:
    wrong = [
        _where(module, found)
        for module in modules()
        if _within(module, SANDBOX_FACE)
        for found in imports_of(module)
        if not _within(found.target, SANDBOX_FACE) and found.target not in SANDBOX_MAY_IMPORT
    ]
    assert not wrong, "the sandbox's settings are handed down to it (rewardhub.sandbox.settings.read_from): " + (
        "; ".join(wrong)
    )


ROOMS: tuple[tuple[str, ...], ...] = (
    ("rewardhub.sandbox",),
    ("rewardhub.sessions",),
    ("rewardhub.ui", "rewardhub.jobs"),
    ("rewardhub.execution",),
    ("rewardhub.api",),
    ("rewardhub.server", "rewardhub.cli"),
)
"""The service's rooms, bottom up; the rooms of one row know nothing of each other's rank."""


def _room_rank(module: str) -> int | None:
    return next((rank for rank, row in enumerate(ROOMS) for room in row if _within(module, room)), None)


def upward_imports() -> list[str]:
    wrong = []
    for module in modules():
        rank = _room_rank(module)
        if rank is None:
            continue
        for found in imports_of(module):
            target = _room_rank(found.target)
            if target is not None and target > rank:
                wrong.append(_where(module, found))
    return wrong


def test_the_rooms_cover_the_sessions_and_the_routes() -> None:
    """The rule below reads these modules' rooms (so it can fail for them)."""
    assert _room_rank("rewardhub.sessions.manager") == 1 and _room_rank("rewardhub.sandbox.warm") == 0
    assert _room_rank("rewardhub.api.routes.sessions") > _room_rank("rewardhub.sessions.host")
    assert "rewardhub.sandbox.settings" in {i.target for i in imports_of("rewardhub.sessions.manager")}


def test_nothing_imports_upward() -> None:
    wrong = upward_imports()
    assert not wrong, "a room imports only the rooms below it (ROOMS): " + "; ".join(wrong)


def routers() -> set[str]:
    """Modules that make an ``APIRouter`` at module level (``router = APIRouter(...)``)."""
    found = set()
    for module, path in modules().items():
        if not _within(module, "rewardhub.api"):
            continue
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                if ast.unparse(node.value.func) in ("APIRouter", "fastapi.APIRouter"):
                    found.add(module)
    return found


ROUTER_GATHERERS = frozenset(
    {
        "rewardhub.api.app",
        "rewardhub.api.middleware.hot_routes",
        "rewardhub.api.compat",
        "rewardhub.api.compat.graders",
        "rewardhub.api.compat.nemo_gym",
    }
)
"""What may import a router: the app includes them, the hot routes call two handlers, and the
compatibility package ``__init__`` s gather their routers for the app."""


def test_the_reader_finds_every_router() -> None:
    found = routers()
    resources = {f"rewardhub.api.routes.{name}" for name in ("health", "score", "jobs", "sessions", "sandbox", "ui")}
    assert resources <= found
    assert {"rewardhub.api.compat.ors", "rewardhub.api.compat.graders.routes"} <= found
    assert not found & {"rewardhub.api.deps", "rewardhub.api.body", "rewardhub.api.offload", "rewardhub.api.app"}


def test_no_router_imports_another() -> None:
    found = routers()
    wrong = [
        _where(module, imported)
        for module in sorted(found)
        for imported in imports_of(module)
        if imported.target in found and imported.target != module
    ]
    assert not wrong, "what routers share belongs in a module that makes no router: " + "; ".join(wrong)


def test_only_the_app_and_the_hot_routes_import_a_router() -> None:
    found = routers()
    wrong = [
        _where(module, imported)
        for module in modules()
        if module not in found and module not in ROUTER_GATHERERS
        for imported in imports_of(module)
        if imported.target in found
    ]
    assert not wrong, "; ".join(wrong)


def test_the_jobs_package_imports_neither_the_api_nor_the_engines() -> None:
    wrong = [
        _where(module, found)
        for module in modules()
        if _within(module, "rewardhub.jobs")
        for found in imports_of(module)
        if _within(found.target, "rewardhub.api") or _within(found.target, "rewardhub.execution")
    ]
    assert not wrong, "an engine's part in the job records lives in the engine: " + "; ".join(wrong)


def test_importing_every_caller_loads_none_of_the_service() -> None:
    """The same rule at run time, through everything the imports pull in (package ``__init__``s too)."""
    pytest.importorskip("torch")  # the trainer's modules need it
    names = sorted(callers()) + sorted(SURFACE)
    script = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.startswith({SERVICE!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"


# --- no import cycles -------------------------------------------------------------------------------


def import_cycles() -> set[frozenset[str]]:
    """Strongly connected groups of modules (Tarjan), each a set of modules that import each other."""
    graph = {module: sorted({i.target for i in imports_of(module) if i.target in modules()}) for module in modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: set[frozenset[str]] = set()

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph[node]:
                cycles.add(frozenset(group))

    for node in graph:
        if node not in index:
            connect(node)
    return cycles


def test_no_import_cycles() -> None:
    new = import_cycles()
    assert not new, "import cycles: " + "; ".join(" <-> ".join(sorted(cycle)) for cycle in new)
