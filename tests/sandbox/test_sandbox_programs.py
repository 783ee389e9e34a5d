"""Legitimate programs pass, in every language, with the verdicts a user expects."""

from __future__ import annotations

import textwrap

import pytest
from sandbox_support import QUICK

from rewardhub.sandbox import LANGUAGES, SandboxPool, SandboxSettings, language


def run(pool, code: str, lang: str = "python", stdin: str = "", files=None, **limits):
    return pool.run(lang, textwrap.dedent(code), stdin=stdin, files=files, limits=QUICK.with_(**limits))


def test_deep_recursion_with_a_raised_limit_passes(pool):
    result = run(
        pool,
        """
        import sys
        sys.setrecursionlimit(10 ** 6)
        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)
        print(depth(100_000))
    """,
        memory_mb=512,
    )
    assert (result.verdict, result.stdout) == ("ok", "100000\n")


def test_numpy_imports_and_computes(pool):
    result = run(pool, "import numpy as np\nprint(int(np.arange(10).sum()))\n")
    assert (result.verdict, result.stdout) == ("ok", "45\n")


def test_every_run_gets_fresh_random_numbers_even_from_a_preloaded_generator():
    warm_numpy_random = SandboxPool(SandboxSettings(concurrency=1, preload=("random", "numpy.random")))
    code = "import random, numpy\nprint(random.random(), numpy.random.rand())\n"
    try:
        first, second = (warm_numpy_random.run("python", code).stdout.split() for _ in range(2))
    finally:
        warm_numpy_random.close()
    assert first[0] != second[0]
    assert first[1] != second[1]


def test_moderate_threads_pass(pool):
    result = run(
        pool,
        """
        import threading
        done = []
        threads = [threading.Thread(target=done.append, args=(i,)) for i in range(16)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(len(done))
    """,
    )
    assert (result.verdict, result.stdout) == ("ok", "16\n")


def test_multiprocessing_pool_works(pool):
    result = run(
        pool,
        """
        from multiprocessing import Pool
        def square(x):
            return x * x
        if __name__ == "__main__":
            with Pool(2) as workers:
                print(sum(workers.map(square, range(10))))
    """,
        memory_mb=512,
        timeout_s=10.0,
    )
    assert (result.verdict, result.stdout) == ("ok", "285\n")


def test_stdin_is_the_programs_input(pool):
    result = run(pool, "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n", stdin="1 2\n3\n")
    assert result.stdout == "6\n"


def test_large_stdin_is_streamed_in(pool):
    data = "7\n" * 2_000_000
    result = run(pool, "import sys\nprint(sum(map(int, sys.stdin)))\n", stdin=data, timeout_s=10.0, memory_mb=512)
    assert (result.verdict, result.stdout) == ("ok", "14000000\n")


def test_large_stdin_the_program_ignores_does_not_block(pool):
    result = run(pool, "print('done')\n", stdin="x" * (4 << 20))
    assert (result.verdict, result.stdout) == ("ok", "done\n")


def test_output_larger_than_its_pipe_arrives_whole_on_both_streams(pool):
    """The parent leaves the output pipes alone for the first moments of a run (one wakeup for a
    short run's output); a program that fills them meanwhile waits, then streams, and nothing is lost."""
    code = "import sys\nsys.stdout.write('o' * 300_000)\nsys.stderr.write('e' * 300_000)\nprint('end')\n"
    result = run(pool, code)
    assert result.verdict == "ok"
    assert (len(result.stdout), result.stdout[-4:], len(result.stderr)) == (300_004, "end\n", 300_000)


def test_a_programs_cyclic_garbage_is_collected(pool):
    """The server freezes its own objects for the collector; a program's are collected as usual."""
    code = """
    import gc
    for _ in range(300):
        cycle = [bytearray(1 << 20)]
        cycle.append(cycle)
        del cycle
        found = gc.collect()
    print(found, gc.isenabled())
    """
    result = run(pool, code, memory_mb=96, timeout_s=10.0)
    assert (result.verdict, result.stdout) == ("ok", "1 True\n")


def test_exit_status_is_reported(pool):
    result = run(pool, "import sys\nprint('partial')\nsys.exit(3)\n")
    assert (result.verdict, result.exit_code, result.stdout) == ("runtime_error", 3, "partial\n")


def test_an_exception_is_a_runtime_error_with_the_programs_own_traceback(pool):
    result = run(pool, "def f():\n    raise ValueError('boom')\nf()\n")
    assert result.verdict == "runtime_error"
    assert result.stderr.startswith("Traceback")
    assert "ValueError: boom" in result.stderr and "harness" not in result.stderr


def test_a_syntax_error_is_a_compile_error(pool):
    result = run(pool, "def f(:\n    pass\n")
    assert result.verdict == "compile_error"
    assert "SyntaxError" in result.stderr


def test_input_files_are_readable_but_not_writable(pool):
    result = run(
        pool,
        """
        print(open("data/in.txt").read())
        try:
            open("data/in.txt", "w").write("changed")
        except OSError as exc:
            print(type(exc).__name__)
    """,
        files={"data/in.txt": "hello"},
    )
    assert result.stdout == "hello\nPermissionError\n"


def test_a_helper_module_in_files_is_importable(pool):
    result = run(pool, "import helper\nprint(helper.VALUE)\n", files={"helper.py": "VALUE = 42\n"})
    assert result.stdout == "42\n"


def test_undecodable_output_is_replaced_not_fatal(pool):
    result = run(pool, "import sys\nsys.stdout.buffer.write(b'\\xff\\xfeok')\n")
    assert (result.verdict, result.stdout) == ("ok", "\ufffd\ufffdok")


@pytest.mark.parametrize(
    ("lang", "code"),
    [
        ("c", '#include <stdio.h>\nint main(){int a,b; scanf("%d %d",&a,&b); printf("%d\\n", a+b); return 0;}\n'),
        ("cpp", '#include <iostream>\nint main(){long long a,b; std::cin>>a>>b; std::cout<<a+b<<"\\n";}\n'),
        (
            "javascript",
            "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
        ),
    ],
)
def test_every_language_adds_two_numbers(pool, lang, code):
    if not language(lang).available():
        pytest.skip(f"{lang} is not installed here")
    result = pool.run(lang, code, stdin="20 22\n", limits=QUICK.with_(timeout_s=10.0, memory_mb=512))
    assert (result.verdict, result.stdout) == ("ok", "42\n")


def test_a_c_compile_error_is_a_compile_error(pool):
    result = pool.run("c", "int main( {\n", limits=QUICK)
    assert result.verdict == "compile_error"
    assert "error" in result.stderr


def test_a_segfault_is_a_runtime_error_with_its_signal(pool):
    result = pool.run("c", "int main(){ volatile int *p = 0; return *p; }\n", limits=QUICK)
    assert result.verdict == "runtime_error"
    assert result.details["signal"] == "SIGSEGV"


def test_native_memory_exhaustion_is_a_memory_verdict(pool):
    code = "#include <stdlib.h>\n#include <string.h>\nint main(){ for(;;){ char *p = malloc(1<<24); if(!p) return 1; memset(p, 1, 1<<24);} }\n"
    result = pool.run("c", code, limits=QUICK.with_(memory_mb=64))
    assert result.verdict == "memory"


def test_deep_native_recursion_has_stack_room(pool):
    code = '#include <stdio.h>\nlong d(long n){ volatile char pad[64]; pad[0]=0; return n ? 1 + d(n-1) + pad[0] : 0; }\nint main(){ printf("%ld\\n", d(1000000)); }\n'
    result = pool.run("c", code, limits=QUICK.with_(memory_mb=512, timeout_s=10.0))
    assert (result.verdict, result.stdout) == ("ok", "1000000\n")


def test_every_language_is_one_declaration():
    for lang in LANGUAGES:
        assert lang.source and lang.run
        assert language(lang.name) is lang or not lang.available()
