"""The execution package imports one way: read from the source with ``ast``, every import counts,
including the ones deferred into a function body (they close a circle just the same)."""

from __future__ import annotations

import ast
from pathlib import Path

import rewardhub

PACKAGE = Path(rewardhub.__file__).parent
EXECUTION = "rewardhub.execution"

# Each Celery module and the Celery modules it may import: a one-way layering, bottom first.
CELERY_LAYERS = {
    "celery_app": set(),
    "celery_liveness": set(),
    "celery_tasks": {"celery_app"},
    "celery_jobs": {"celery_app", "celery_liveness"},
    "celery_dispatch": {"celery_app", "celery_liveness"},
    "celery_worker": {"celery_app", "celery_liveness", "celery_tasks"},
    "celery_session_records": {"celery_liveness"},
    "celery_sessions": {"celery_app", "celery_liveness", "celery_tasks", "celery_session_records"},
    "celery_session_worker": {"celery_app", "celery_liveness", "celery_tasks", "celery_session_records"},
    "celery_executor": {
        "celery_app",
        "celery_liveness",
        "celery_tasks",
        "celery_dispatch",
        "celery_jobs",
        "celery_sessions",
    },
}


def module_name(path: Path, package_root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, name: str, known: set[str], is_package: bool = False) -> set[str]:
    """Modules of ``known`` that module ``name`` (whose text is ``source``) imports anywhere."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {target for target in targets if target in known}
    return found - {name}


def import_graph(root: Path, package_root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module name -> the modules under ``root`` it imports; names are relative to ``package_root``'s parent."""
    files = {module_name(path, package_root): path for path in root.rglob("*.py")}
    known = set(files)
    return {
        name: imported_modules(path.read_text(), name, known, path.name == "__init__.py")
        for name, path in files.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node], _ = "open", stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return [*stack[stack.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[node], _ = "closed", stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_circle_through_a_deferred_import(tmp_path: Path) -> None:
    """The circle this test was written for: app -> tasks (deferred) -> worker (deferred) -> app."""
    package = tmp_path / "rewardhub"
    (package / "execution").mkdir(parents=True)
    for path, text in {
        "__init__.py": "",
        "execution/__init__.py": "",
        "execution/celery_app.py": "def create():\n    from rewardhub.execution.celery_tasks import register\n",
        "execution/celery_tasks.py": "def task():\n    from .celery_worker import runtime\n",
        "execution/celery_worker.py": "from rewardhub.execution import celery_app\n",
    }.items():
        (package / path).write_text(text)
    cycle = find_cycle(import_graph(package / "execution", package))
    assert cycle is not None and set(cycle) == {
        f"{EXECUTION}.{m}" for m in ("celery_app", "celery_tasks", "celery_worker")
    }
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_execution_package_has_no_import_cycle() -> None:
    graph = import_graph(PACKAGE / "execution")
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_celery_modules_form_one_way_layers() -> None:
    graph = import_graph(PACKAGE / "execution")
    for module, allowed in CELERY_LAYERS.items():
        name = f"{EXECUTION}.{module}"
        celery = {m.rpartition(".")[2] for m in graph[name] if m.rpartition(".")[2].startswith("celery_")}
        assert celery <= allowed, f"{module} imports {sorted(celery - allowed)}"
    on_celery_modules = {
        m for m, targets in graph.items() if any(t.rpartition(".")[2] == "celery_worker" for t in targets)
    }
    assert on_celery_modules == set(), "nothing in execution builds on the worker process's module"
