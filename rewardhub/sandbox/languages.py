"""The languages the sandbox runs. Adding one is one declaration in ``LANGUAGES``.

Commands run in the scratch directory, which holds the source under ``source``. ``compile`` (if
any) runs first, under the compile limits, and leaves ``artifacts`` (the files or folders the run
needs: ``./main``, Java's class folder, TypeScript's emitted JavaScript); those are what the build
cache keeps, so a submission sent again (one request per test case, as verl does) compiles once.
Python is special only in being fast: its programs run inside the warm interpreter (a fork of the
server), not ``run``.

Runtimes that size themselves from the machine are told the run's limits instead, because inside
the sandbox they cannot see their memory cgroup (no ``/sys``) and would plan for the host's
memory: the JVM and V8 get a heap of three quarters of the run's memory, Go a soft memory limit
(``GOMEMLIMIT``) and two scheduler threads. ``{heap_mb}`` and ``{memory_mb}`` in ``run`` and
``env`` are filled in per run.

TypeScript is transpiled, not type-checked, as ``tsx`` (what SandboxFusion runs it with),
``ts-node --transpile-only`` and esbuild do: a syntax error fails the build, a type error does not.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass

from rewardhub.sandbox.errors import UnsupportedLanguage
from rewardhub.sandbox.limits import Limits

__all__ = ["LANGUAGES", "SANDBOX_PATH", "Language", "language"]

SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The programs' PATH (``PROGRAM_ENV``): a tool counts as installed only if it is found there."""


@dataclass(frozen=True)
class Language:
    name: str
    source: str
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    aliases: tuple[str, ...] = ()
    in_process: bool = False
    """Run inside the warm Python interpreter instead of executing ``run``."""
    artifacts: tuple[str, ...] = ("main",)
    """What a successful ``compile`` leaves for the run (files, or folders taken whole)."""
    env: tuple[tuple[str, str], ...] = ()
    """Added to the run's environment (templated like ``run``)."""
    compile_env: tuple[tuple[str, str], ...] = ()
    tools: tuple[str, ...] = ()
    """Commands that must be installed besides ``run[0]`` and ``compile[0]``."""
    reserved_mb: int = 0
    """Address space its runtime (and its compiler's) reserves but does not use: added to the
    RLIMIT_AS of the fallback memory limit, which counts reservations (a memory cgroup does not)."""

    @property
    def commands(self) -> tuple[str, ...]:
        """The commands it needs on the programs' PATH."""
        tools = (self.run[0], *((self.compile[0],) if self.compile else ()), *self.tools)
        return tuple(tool for tool in tools if not tool.startswith("./"))

    def available(self, has: Callable[[str], bool] | None = None) -> bool:
        """Whether the sandbox has the tools where it looks: the host's /usr (bubblewrap sees it),
        or ``has``, the backend's own answer (a container sees its image's)."""
        found = has or (lambda tool: shutil.which(tool, path=SANDBOX_PATH) is not None)
        return self.in_process or all(found(tool) for tool in self.commands)

    def run_argv(self, limits: Limits) -> tuple[str, ...]:
        """``run`` with this run's limits filled in."""
        return tuple(part.format(**_sizes(limits)) for part in self.run)

    def run_env(self, limits: Limits) -> dict[str, str]:
        return {key: value.format(**_sizes(limits)) for key, value in self.env}


def _sizes(limits: Limits) -> dict[str, int]:
    return {"memory_mb": limits.memory_mb, "heap_mb": max(16, limits.memory_mb * 3 // 4)}


_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
"""Short-lived programs: one GC thread and the quick compiler start fastest and use the fewest threads."""

_V8_RESERVED_MB = 1 << 20
"""V8 reserves its pointer cage and sandbox up front (about a terabyte of address space): under
RLIMIT_AS, node cannot start at all unless that much is allowed. Its heap is then held to
``--max-old-space-size`` by V8 itself; a memory cgroup is the real cap."""

_GO_RESERVED_MB = 16 << 10
"""The go command is linked with cgo: each of its threads takes the stack rlimit (1 GiB in the
sandbox, for deep recursion) as address space, and its runtime reserves arenas besides."""

_TRANSPILE_TS = """
const ts = require('typescript');
const fs = require('fs');
const [source, target] = process.argv.slice(1);
const out = ts.transpileModule(fs.readFileSync(source, 'utf8'), {
  fileName: source,
  reportDiagnostics: true,
  compilerOptions: {target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true},
});
const errors = (out.diagnostics || []).filter((d) => d.category === ts.DiagnosticCategory.Error);
for (const d of errors) {
  const at = d.file ? d.file.getLineAndCharacterOfPosition(d.start) : {line: 0, character: 0};
  const text = ts.flattenDiagnosticMessageText(d.messageText, '\\n');
  process.stderr.write(`${source}(${at.line + 1},${at.character + 1}): error TS${d.code}: ${text}\\n`);
}
if (errors.length) process.exit(1);
fs.writeFileSync(target, out.outputText);
"""
"""TypeScript's own transpiler, syntax only (typescript's ``transpileModule``), run by node."""

LANGUAGES: tuple[Language, ...] = (
    Language("python", "main.py", run=("python3", "main.py"), aliases=("py", "python3"), in_process=True),
    Language("c", "main.c", run=("./main",), compile=("gcc", "-O2", "-std=gnu17", "-o", "main", "main.c", "-lm")),
    Language(
        "cpp",
        "main.cpp",
        run=("./main",),
        compile=("g++", "-O2", "-std=gnu++17", "-o", "main", "main.cpp"),
        aliases=("c++", "cxx"),
    ),
    Language(
        "javascript",
        "main.js",
        run=("node", "--max-old-space-size={heap_mb}", "main.js"),
        aliases=("js", "node", "nodejs"),
        reserved_mb=_V8_RESERVED_MB,
    ),
    Language(
        "typescript",
        "main.ts",
        run=("node", "--max-old-space-size={heap_mb}", "main.js"),
        compile=("node", "-e", _TRANSPILE_TS, "main.ts", "main.js"),
        compile_env=(("NODE_PATH", "/usr/share/nodejs:/usr/lib/node_modules:/usr/local/lib/node_modules"),),
        artifacts=("main.js",),
        aliases=("ts",),
        tools=("tsc",),
        reserved_mb=_V8_RESERVED_MB,
    ),
    Language(
        "go",
        "main.go",
        run=("./main",),
        compile=("go", "build", "-ldflags=-s -w", "-o", "main", "main.go"),
        env=(("GOMAXPROCS", "2"), ("GOMEMLIMIT", "{memory_mb}MiB")),
        compile_env=(("GOMAXPROCS", "2"), ("GO111MODULE", "off"), ("GOFLAGS", "-p=2")),
        aliases=("golang",),
        reserved_mb=_GO_RESERVED_MB,
    ),
    Language(
        "java",
        "Main.java",
        run=("java", *_JVM, "-Xmx{heap_mb}m", "-Xss64m", "-ea", "-cp", "classes", "Main"),
        compile=(
            "javac",
            *(f"-J{flag}" for flag in _JVM),
            "-J-Xmx512m",
            "-encoding",
            "UTF-8",
            "-d",
            "classes",
            "Main.java",
        ),
        artifacts=("classes",),
        reserved_mb=4096,
    ),
    Language(
        "rust",
        "main.rs",
        run=("./main",),
        compile=("rustc", "--edition", "2021", "-O", "-C", "strip=symbols", "-o", "main", "main.rs"),
        aliases=("rs",),
    ),
    Language("bash", "main.sh", run=("bash", "main.sh"), aliases=("sh", "shell")),
)

_BY_NAME = {name: lang for lang in LANGUAGES for name in (lang.name, *lang.aliases)}


def language(name: str, has: Callable[[str], bool] | None = None) -> Language:
    """The language called ``name`` (or one of its aliases), if this machine (or ``has``: see
    :meth:`Language.available`) can run it."""
    found = _BY_NAME.get(name.strip().lower())
    if found is None:
        raise UnsupportedLanguage(f"unsupported language {name!r}", detail={"supported": sorted(_BY_NAME)})
    if not found.available(has):
        raise UnsupportedLanguage(f"language {found.name!r} is not installed on this server")
    return found
