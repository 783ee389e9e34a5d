"""Every language's verdicts through the real Docker engine, and the same as bubblewrap's.

Each language runs the same programs on both backends: one that answers, a syntax error, a crash,
an endless loop, a memory hog, endless output, a fork bomb and a dial of the host's loopback.
Each outcome must be the one the specification names (so two backends that are wrong alike
still fail), and the Docker one must equal the bubblewrap one. The programs are those of
``test_sandbox_languages.py``, plus endless output; the two backends run side by side.

A language whose toolchain is missing on the host (bubblewrap sees the host's /usr) or in the image
(``--tier core`` leaves out Go, Java, Rust and TypeScript) is skipped, saying which.
"""

from __future__ import annotations

import socket
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from docker_support import docker_pool, our_containers, require_docker
from sandbox_support import QUICK
from test_sandbox_languages import ADD, COMPILED, CONNECT, CRASH, FORK, HOG, LANGS, LIMITS, SPIN, SYNTAX_ERROR

from rewardhub.sandbox import SandboxPool, SandboxSettings, UnsupportedLanguage

pytestmark = pytest.mark.docker

LINE = "x" * 40
OUTPUT = {
    "python": f"while True:\n    print('{LINE}')\n",
    "c": f'#include <stdio.h>\nint main(){{ for(;;) puts("{LINE}"); }}\n',
    "cpp": f'#include <iostream>\nint main(){{ for(;;) std::cout << "{LINE}\\n"; }}\n',
    # writeSync: node's process.stdout.write queues in memory whenever the pipe is full (a loop that never
    # yields never drains it), so on a loaded machine the program met its memory limit before the reader
    # had seen 64 KiB; a blocking write meets the output limit on any machine
    "javascript": f"const fs = require('fs');\nfor (;;) fs.writeSync(1, '{LINE}\\n');\n",
    "typescript": f"const fs = require('fs');\nfor (;;) fs.writeSync(1, '{LINE}\\n');\n",
    "go": f'package main\n\nimport "fmt"\n\nfunc main() {{\n\tfor {{\n\t\tfmt.Println("{LINE}")\n\t}}\n}}\n',
    "java": f'public class Main {{ public static void main(String[] a) {{ while (true) System.out.println("{LINE}"); }} }}\n',
    "rust": f'fn main() {{\n    loop {{\n        println!("{LINE}");\n    }}\n}}\n',
    "bash": f"while :; do echo {LINE}; done\n",
}
FORK_LIMITS = QUICK.with_(timeout_s=3.0, memory_mb=256)


def cases(lang: str, port: int) -> dict[str, tuple[str, str, object]]:
    """name -> (code, stdin, limits) for one language."""
    return {
        "answer": (ADD[lang], "20 22\n", LIMITS),
        "syntax error": (SYNTAX_ERROR[lang], "", LIMITS),
        "crash": (CRASH[lang], "", LIMITS),
        "endless loop": (SPIN[lang], "", QUICK.with_(timeout_s=1.0, memory_mb=256)),
        "memory hog": (HOG[lang], "", QUICK.with_(timeout_s=10.0, memory_mb=128)),
        "endless output": (OUTPUT[lang], "", LIMITS.with_(max_output_bytes=64 << 10)),
        "fork bomb": (textwrap.dedent(FORK[lang]), "", FORK_LIMITS),
        "network": (textwrap.dedent(CONNECT[lang]).replace("PORT", str(port)), "", LIMITS),
    }


def expected(lang: str) -> dict[str, tuple[str, str]]:
    """The specification's outcome of each case: (verdict, what the output shows)."""
    return {
        "answer": ("ok", "42\n"),
        "syntax error": ("compile_error" if lang in COMPILED | {"python"} else "runtime_error", ""),
        "crash": ("runtime_error", ""),
        "endless loop": ("timeout", ""),
        "memory hog": ("memory", ""),
        "endless output": ("output_limit", ""),
        # bash retries a refused fork until the clock runs out; the others report it and exit
        "fork bomb": ("timeout" if lang == "bash" else "ok", "refused under the limit"),
        "network": ("ok", "blocked"),
    }


def outcome(case: str, result) -> tuple[str, str]:
    said = result.stdout + result.stderr
    if case == "answer":
        return result.verdict, result.stdout
    if case == "fork bomb":
        refused = [line for line in said.splitlines() if line.startswith("refused")]
        under = bool(refused) and int(refused[0].split()[1]) < FORK_LIMITS.max_processes
        return result.verdict, "refused under the limit" if under or "Resource temporarily" in said else said[-300:]
    if case == "network":
        return result.verdict, "blocked" if result.stdout.startswith("BLOCKED") else said[-300:]
    return result.verdict, ""


@pytest.fixture(scope="module")
def pools() -> Iterator[dict[str, SandboxPool]]:
    require_docker()
    bwrap = SandboxPool(SandboxSettings(backend="bwrap", concurrency=1, preload=("json", "math", "numpy")))
    try:
        with docker_pool(concurrency=1) as docker:
            yield {"bwrap": bwrap, "docker": docker}
    finally:
        bwrap.close()
    assert our_containers() == []


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def run_all(pool: SandboxPool, lang: str, port: int) -> dict[str, tuple[str, str]]:
    return {name: outcome(name, pool.run(lang, code, stdin=stdin, limits=limits))
            for name, (code, stdin, limits) in cases(lang, port).items()}  # fmt: skip


@pytest.mark.parametrize("lang", LANGS)
def test_docker_gives_each_programs_verdict_and_the_same_as_bubblewrap(pools, lang, listener, host):
    port = listener.getsockname()[1]
    with ThreadPoolExecutor(2) as both:
        futures = {name: both.submit(run_all, pool, lang, port) for name, pool in pools.items()}
        try:
            seen = {name: future.result() for name, future in futures.items()}
        except UnsupportedLanguage as exc:
            pytest.skip(f"{lang}: {exc.message} (on one of the backends: host or image)")
    agree = sum(seen["docker"][case] == seen["bwrap"][case] for case in seen["bwrap"])
    print(f"\n{lang}: docker agrees with bubblewrap on {agree}/{len(seen['bwrap'])} programs")
    assert seen["bwrap"] == expected(lang)
    assert seen["docker"] == seen["bwrap"]
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody got through to the host's loopback
