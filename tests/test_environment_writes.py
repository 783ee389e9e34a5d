"""No code passes a setting along by writing ``os.environ``.

The settings are built once and handed down (:mod:`rewardhub.settings`); a write to this process's
environment is a second, invisible channel that every later child inherits, and it is how the
sandbox backend used to reach the workers. The few writes left are listed below, each with why it is
not a setting passed along: the environment of a process nothing else lets us start with an
``env=`` (uvicorn's API workers), a library's own switch, or a program's environment inside the
sandbox. Anything else that writes ``os.environ`` fails this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("rewardhub", "verifiers", "rm_models")
"""The three folders of the import package (trainer_client/ has its own configuration)."""

ALLOWED: dict[tuple[str, str], str] = {
    ("rewardhub/server.py", "MULTIPROC_ENV"): (
        "prometheus_client's multiprocess folder, read by the library in each API worker"
    ),
    ("rewardhub/server.py", "SETTINGS_ENV"): (
        "uvicorn spawns the API workers with this process's environment and takes no env="
    ),
    ("rewardhub/server.py", "SUPERVISOR_ENV"): "the same uvicorn workers: the pid they die with",
    ("rewardhub/sessions/host.py", "SOCKET_ENV"): "the same uvicorn workers: where the session host listens",
    ("rewardhub/sessions/host.py", "TOKEN_ENV"): "the same uvicorn workers: the session host's token",
    ("rewardhub/audit/probe_suites.py", "name"): (
        "the probe runner starts the subject processes itself and takes no env=: the API key reaches "
        "them while one suite runs, then the old value is restored"
    ),
    ("rm_models/backends/vllm_backend.py", "LD_PRELOAD"): (
        "not a setting: what vLLM's CPU platform wrote there while it built an engine, put back as it was"
    ),
    ("rewardhub/run_folder.py", "TMPDIR"): (
        "this process's temporary folder, for tempfile here and every program it starts"
    ),
    ("rewardhub/execution/pool.py", "TOKENIZERS_PARALLELISM"): (
        "the tokenizers library's switch, in a worker for itself"
    ),
    ("rewardhub/execution/celery_worker.py", "CUDA_VISIBLE_DEVICES"): "pins a GPU worker's own child to its device",
    ("rewardhub/sandbox/inside/session_kernel.py", "*"): (
        "inside a session's sandbox: the interpreter's own environment"
    ),
    ("rewardhub/sandbox/inside/stdio_cases.py", "*"): (
        "inside the sandbox: a program's environment restored between cases"
    ),
}
"""(file, variable written) -> why that write is not a setting passed along; ``*``: a whole-environment write."""

WRITING_METHODS = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


def environment_writes(source: str) -> list[tuple[int, str]]:
    """(line, variable) of every write to ``os.environ`` (or ``os.putenv``/``os.unsetenv``) in ``source``;
    the variable is the name or string written, ``*`` where a call writes many."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
            targets = node.target if isinstance(node, ast.AugAssign) else node.targets
            for target in targets if isinstance(targets, list) else [targets]:
                if isinstance(target, ast.Subscript) and _is_environ(target.value):
                    found.append((node.lineno, _variable(target.slice)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            one_variable = node.func.attr not in {"update", "clear", "popitem"} and node.args
            if (node.func.attr in WRITING_METHODS and _is_environ(node.func.value)) or (
                _is_os(node.func.value) and node.func.attr in {"putenv", "unsetenv"}
            ):
                found.append((node.lineno, _variable(node.args[0]) if one_variable else "*"))
    return sorted(found)


def _is_os(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "os"


def _is_environ(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and _is_os(node.value)


def _variable(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return node.id if isinstance(node, ast.Name) else ast.unparse(node)


def test_the_reader_finds_every_kind_of_write() -> None:
    source = (
        "import os\n"
        "os.environ['REWARDHUB_SANDBOX_BACKEND'] = 'unsafe'\n"
        "os.environ[NAME] = value\n"
        "os.environ.setdefault('A', '1')\n"
        "os.environ.update(B='2')\n"
        "del os.environ['C']\n"
        "os.environ.pop('D', None)\n"
        "os.putenv('E', '5')\n"
        "env = {**os.environ, 'F': '6'}\n"  # a child's own environment: not a write
        "x = os.environ.get('G')\n"
    )
    assert environment_writes(source) == [
        (2, "REWARDHUB_SANDBOX_BACKEND"),
        (3, "NAME"),
        (4, "A"),
        (5, "*"),
        (6, "C"),
        (7, "D"),
        (8, "E"),
    ]


def test_no_code_writes_the_environment_to_pass_a_setting_along() -> None:
    found, seen = [], set()
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            for line, variable in environment_writes(path.read_text()):
                seen.add((where, variable))
                if (where, variable) not in ALLOWED:
                    found.append(f"{where}:{line} writes os.environ[{variable!r}]")
    assert not found, "hand the setting down instead (rewardhub.settings): " + "; ".join(found)
    assert not set(ALLOWED) - seen, (
        f"allowed writes that are gone (drop them from ALLOWED): {sorted(set(ALLOWED) - seen)}"
    )
