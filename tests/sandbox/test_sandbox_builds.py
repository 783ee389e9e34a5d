"""The build cache: what a build depends on, what is kept, one build at a time per submission, and a
memory bound. No sandbox needed: builds here are made by hand."""

from __future__ import annotations

import threading
import time

from rewardhub.sandbox import RunResult, language
from rewardhub.sandbox.builds import Artifact, Build, BuildCache, build_key


def built(size: int = 10) -> Build:
    return Build(RunResult("ok", 0, "", "", 5.0), {"main": Artifact(b"x" * size, executable=True)})


def rejected() -> Build:
    return Build(RunResult("runtime_error", 1, "", "main.c:1: error: expected ')'", 5.0))


def test_the_key_depends_on_language_source_and_files_and_nothing_else():
    c, cpp = language("c"), language("cpp")
    base = build_key(c, "int main(){}")
    assert build_key(c, "int main(){}") == base
    assert build_key(cpp, "int main(){}") != base
    assert build_key(c, "int main(){ }") != base
    assert build_key(c, "int main(){}", {"testlib.h": "// v1"}) != base
    assert build_key(c, "int main(){}", {"testlib.h": "// v1"}) != build_key(c, "int main(){}", {"testlib.h": "// v2"})
    assert build_key(c, "int main(){}", {"a.bin": b"\x00\x01"}) != build_key(c, "int main(){}", {"a.bin": b"\x00\x02"})


def test_a_build_and_a_compiler_rejection_are_kept_but_not_a_timeout_or_a_sandbox_failure():
    assert built().cacheable and rejected().cacheable
    assert not Build(RunResult("timeout", None, "", "", 20000.0)).cacheable
    assert not Build(RunResult("memory", None, "", "", 10.0, None, {"signal": "SIGKILL"})).cacheable
    assert not Build(RunResult("sandbox_error", None, "", "", 0.0)).cacheable
    assert not Build(RunResult("ok", 0, "", "", 5.0)).cacheable  # built, but its program could not be read back


def test_a_second_request_is_a_hit_and_does_not_build():
    cache = BuildCache(1 << 20)
    calls = []
    first, hit_first = cache.build("k", lambda: calls.append(1) or built())
    second, hit_second = cache.build("k", lambda: calls.append(1) or built())
    assert (hit_first, hit_second, len(calls)) == (False, True, 1)
    assert second is first
    assert (cache.misses, cache.hits) == (1, 1)


def test_what_is_not_kept_is_built_again():
    cache = BuildCache(1 << 20)
    timeouts = [Build(RunResult("timeout", None, "", "", 1.0)) for _ in range(2)]
    answers = [cache.build("k", lambda t=t: t) for t in timeouts]
    assert [hit for _, hit in answers] == [False, False]
    assert len(cache) == 0


def test_the_same_submission_arriving_at_once_is_built_once():
    cache = BuildCache(1 << 20)
    builds = []
    gate = threading.Event()

    def slow_build() -> Build:
        builds.append(1)
        gate.wait(5)
        return built()

    results: list[tuple[Build, bool]] = []
    threads = [threading.Thread(target=lambda: results.append(cache.build("k", slow_build))) for _ in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # let them all arrive while the first is building
    gate.set()
    for thread in threads:
        thread.join(10)
    assert len(builds) == 1
    assert sorted(hit for _, hit in results) == [False] + [True] * 7
    assert len({id(build) for build, _ in results}) == 1


def test_a_failed_build_lets_the_next_waiter_build():
    cache = BuildCache(1 << 20)
    attempts = []

    def flaky() -> Build:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("the sandbox broke")
        return built()

    try:
        cache.build("k", flaky)
    except RuntimeError:
        pass
    build, hit = cache.build("k", flaky)
    assert (hit, build.ok, len(attempts)) == (False, True, 2)


def test_least_recently_used_builds_go_first_past_the_memory_bound():
    cache = BuildCache(max_bytes=250)
    for key in ("a", "b"):
        cache.build(key, lambda: built(100))
    cache.build("a", lambda: built(100))  # a is now the most recent
    cache.build("c", lambda: built(100))  # over 250 bytes: b goes
    assert cache.get("b") is None
    assert cache.get("a") is not None and cache.get("c") is not None
    cache.build("huge", lambda: built(1000))  # larger than the whole cache: served, never kept
    assert cache.get("huge") is None and len(cache) == 2
