"""The system-call filter: one attack per refused call, the proof that each attack is real, and the
legitimate programs that must keep working.

Each attack makes the raw system call (Python through ctypes, or C), so no library wrapper can
hide the kernel's answer. The same attacks are run once in a sandbox *without* the filter: where
the kernel would have said yes there, the filter is what said no.
"""

from __future__ import annotations

import json
import platform
import subprocess
import textwrap

import pytest
from sandbox_support import QUICK, SETTINGS

from rewardhub.sandbox import SandboxPool, SandboxUnavailable
from rewardhub.sandbox.bwrap import bwrap_command
from rewardhub.sandbox.docker import docker_command
from rewardhub.sandbox.syscall_filter import COMPILER, REFUSED, bpf_program, docker_profile

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="the attacks use x86_64 call numbers")

EPERM, ENOSYS = 1, 38
NAMESPACE_FLAGS = 0x10000000  # CLONE_NEWUSER
ATTACKS = {
    # name: (call number, arguments, the errno the filter answers)
    "unshare(CLONE_NEWUSER)": (272, [NAMESPACE_FLAGS], EPERM),
    "unshare(CLONE_NEWNET)": (272, [0x40000000], EPERM),
    "clone(CLONE_NEWUSER)": (56, [NAMESPACE_FLAGS | 17, 0, 0, 0, 0], EPERM),
    "clone3": (435, [0, 0], ENOSYS),
    "setns": (308, [0, 0], EPERM),
    "keyctl(JOIN_SESSION_KEYRING)": (250, [1, 0], EPERM),
    "add_key": (248, [0, 0, 0, 0, 0], EPERM),
    "request_key": (249, [0, 0, 0, 0], EPERM),
    "bpf": (321, [0, 0, 0], EPERM),
    "perf_event_open": (298, [0, 0, -1, -1, 0], EPERM),
    "io_uring_setup": (425, [8, 0], EPERM),
    "io_uring_enter": (426, [0, 0, 0, 0, 0], EPERM),
    "io_uring_register": (427, [0, 0, 0, 0], EPERM),
    "mount": (165, [0, 0, 0, 0, 0], EPERM),
    "umount2": (166, [0, 0], EPERM),
    "pivot_root": (155, [0, 0], EPERM),
    "fsopen": (430, [0, 0], EPERM),
    "open_tree": (428, [0, 0, 0], EPERM),
    "ptrace(TRACEME)": (101, [0, 0, 0, 0], EPERM),
    "process_vm_readv": (310, [1, 0, 0, 0, 0, 0], EPERM),
    "kexec_load": (246, [0, 0, 0, 0], EPERM),
    "kexec_file_load": (320, [0, 0, 0, 0, 0], EPERM),
    "init_module": (175, [0, 0, 0], EPERM),
    "finit_module": (313, [0, 0, 0], EPERM),
    "delete_module": (176, [0, 0], EPERM),
    "userfaultfd": (323, [0], EPERM),
}
"""Arguments are harmless where the call gets through (null pointers, ``clone`` with a fork-like
signal whose child exits at once), so an attack that is *not* refused still leaves the sandbox whole."""

ATTACK_PROGRAM = """
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
answers = {}
for name, (number, args, _) in json.loads(sys.argv[1] if len(sys.argv) > 1 else input()).items():
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    if result == 0 and name.startswith("clone"):
        os._exit(0)  # the child of a clone that got through
    answers[name] = [result, ctypes.get_errno()]
print(json.dumps(answers))
"""


def run_attacks(pool, attacks):
    result = pool.run("python", ATTACK_PROGRAM, stdin=json.dumps(attacks), limits=QUICK)
    assert result.verdict == "ok", result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def unfiltered_pool():
    try:
        pool = SandboxPool(SETTINGS.model_copy(update={"syscall_filter": False, "concurrency": 1}))
    except SandboxUnavailable as exc:
        pytest.skip(exc.message)
    yield pool
    pool.close()


@pytest.mark.usefixtures("host")
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_refused_call_is_refused_in_the_sandbox(pool, name):
    number, args, expected_errno = ATTACKS[name]
    answers = run_attacks(pool, {name: ATTACKS[name]})
    assert answers[name] == [-1, expected_errno]


@pytest.mark.usefixtures("host")
def test_without_the_filter_the_kernel_would_have_allowed_the_dangerous_ones(unfiltered_pool):
    """The issue's own finding: user namespaces, keyrings and io_uring were reachable. They are what
    the filter stops; the rest the kernel refuses to an unprivileged uid anyway (the filter makes
    that independent of the kernel's configuration)."""
    wanted = ["unshare(CLONE_NEWUSER)", "keyctl(JOIN_SESSION_KEYRING)", "io_uring_setup"]
    answers = run_attacks(unfiltered_pool, {name: ATTACKS[name] for name in wanted})
    # success, or an error about the (null) arguments: past every permission check either way
    assert [answers[name][0] >= 0 or answers[name][1] not in (EPERM, ENOSYS) for name in wanted] == [True] * 3


@pytest.mark.usefixtures("host")
def test_a_c_program_cannot_create_a_user_namespace_or_a_keyring(pool):
    code = textwrap.dedent("""
        #define _GNU_SOURCE
        #include <errno.h>
        #include <sched.h>
        #include <stdio.h>
        #include <sys/syscall.h>
        #include <unistd.h>
        int main(void) {
            int a = unshare(CLONE_NEWUSER | CLONE_NEWNS);
            int ea = errno;
            long b = syscall(SYS_keyctl, 1, 0);
            int eb = errno;
            long c = syscall(SYS_io_uring_setup, 8, 0);
            int ec = errno;
            printf("%d %d %ld %d %ld %d\\n", a, ea, b, eb, c, ec);
            return 0;
        }
    """)
    result = pool.run("c", code, limits=QUICK)
    assert (result.verdict, result.stdout) == ("ok", "-1 1 -1 1 -1 1\n")


@pytest.mark.usefixtures("host")
def test_32_bit_system_calls_kill_the_program(pool):
    """``int 0x80`` uses the i386 call numbers, which a 64-bit denylist would not match: killed."""
    code = textwrap.dedent("""
        #include <stdio.h>
        int main(void) {
            long ret, nr = 310;  /* i386 unshare */
            fflush(stdout);
            __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(nr), "b"(0x10000000) : "memory");
            printf("survived %ld\\n", ret);
            return 0;
        }
    """)
    result = pool.run("c", code, limits=QUICK)
    assert result.verdict == "runtime_error"
    assert "survived" not in result.stdout
    assert result.details.get("signal") in ("SIGSYS", "SIGSEGV")  # SIGSEGV: a kernel without 32-bit emulation


@pytest.mark.usefixtures("host")
def test_x32_system_calls_are_not_a_way_around_the_filter(pool):
    result = pool.run(
        "python",
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.syscall(ctypes.c_long(0x40000000 + 250), 1, 0), ctypes.get_errno(), flush=True)\n",
        limits=QUICK,
    )
    assert not result.stdout.startswith("0 ")  # killed (SIGSYS) or ENOSYS, never a keyring
    assert result.details.get("signal") == "SIGSYS" or result.stdout.split()[:1] == ["-1"]


# --- what must keep working ---------------------------------------------------------------------


def test_threads_subprocesses_and_a_private_process_tree_still_work(pool):
    code = textwrap.dedent("""
        import os, subprocess, threading
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(8) as ex:
            print(sum(ex.map(lambda n: n * n, range(100))))
        print(subprocess.run(["sh", "-c", "echo child $((6 * 7))"], capture_output=True, text=True).stdout.strip())
        pid = os.fork()
        if pid == 0:
            os._exit(3)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """)
    result = pool.run("python", code, limits=QUICK)
    assert (result.verdict, result.stdout) == ("ok", "328350\nchild 42\n3\n")


def test_numpy_still_works(pool):
    pytest.importorskip("numpy")
    result = pool.run("python", "import numpy as np\nprint(int((np.ones((64, 64)) @ np.ones(64)).sum()))\n")
    assert (result.verdict, result.stdout) == ("ok", "4096\n")


def test_cpp_threads_still_work(pool):
    """glibc's pthread_create tries clone3 first: ENOSYS must send it back to clone, not fail."""
    code = textwrap.dedent("""
        #include <atomic>
        #include <cstdio>
        #include <thread>
        #include <vector>
        int main() {
            std::atomic<int> total{0};
            std::vector<std::thread> threads;
            for (int i = 1; i <= 8; ++i) threads.emplace_back([&total, i] { total += i; });
            for (auto &t : threads) t.join();
            std::printf("%d\\n", total.load());
        }
    """)
    result = pool.run("cpp", code, limits=QUICK.with_(timeout_s=10.0))
    assert (result.verdict, result.stdout) == ("ok", "36\n")


# --- one policy, two backends ---------------------------------------------------------------------


def test_the_policy_refuses_every_call_the_issue_lists():
    refused = {name for refusal in REFUSED for name in refusal.syscalls}
    listed = {"unshare", "clone", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "io_uring_setup",
              "io_uring_enter", "io_uring_register", "mount", "umount2", "pivot_root", "ptrace", "kexec_load",
              "kexec_file_load", "init_module", "finit_module", "delete_module"}  # fmt: skip
    assert listed <= refused


def test_the_docker_profile_refuses_clone_only_with_namespace_flags():
    profile = docker_profile("x86_64")
    assert (profile["defaultAction"], profile["architectures"]) == ("SCMP_ACT_ALLOW", ["SCMP_ARCH_X86_64"])
    clone_rules = [rule for rule in profile["syscalls"] if rule["names"] == ["clone"]]
    masks = {rule["args"][0]["value"] for rule in clone_rules}
    assert NAMESPACE_FLAGS in masks and 0x80 not in masks  # the low byte of clone's flags is a signal
    assert all(rule["args"][0]["op"] == "SCMP_CMP_MASKED_EQ" for rule in clone_rules)


def test_the_bpf_program_is_compiled_by_libseccomp_from_the_docker_profile():
    program = bpf_program(SETTINGS.seccomp_python)
    assert len(program) % 8 == 0 and len(program) > 8 * 30  # struct sock_filter is 8 bytes
    pfc = subprocess.run(
        [SETTINGS.seccomp_python, "-I", "-c",
         f"import json, sys; sys.path.insert(0, {str(COMPILER.parent)!r}); import seccomp_compile; "
         "seccomp_compile.compile_profile(json.load(sys.stdin)).export_pfc(sys.stdout)"],
        input=json.dumps(docker_profile()), capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    for name in ("keyctl", "io_uring_setup", "unshare", "init_module"):
        assert f'syscall "{name}"' in pfc
    assert "action KILL_PROCESS" in pfc  # calls of another architecture


def test_bubblewrap_gets_the_filter_as_a_file_descriptor():
    argv = bwrap_command("bwrap", "/usr/bin/python3", ["/usr"], [], 64, True, 62001, seccomp_fd=9)
    assert argv[argv.index("--seccomp") + 1] == "9"
    assert "--seccomp" not in bwrap_command("bwrap", "/usr/bin/python3", ["/usr"], [], 64, True, 62001)


def test_docker_gets_the_same_policy_as_a_profile():
    argv = docker_command("docker", "img", "box", "/run/x", [], 512, 64, 1.0, 256, seccomp_profile="/run/x/s.json")
    assert "seccomp=/run/x/s.json" in [argv[i + 1] for i, a in enumerate(argv) if a == "--security-opt"]


def test_a_missing_libseccomp_refuses_to_run_code_and_says_how_to_fix_it():
    with pytest.raises(SandboxUnavailable, match="python3-seccomp.*SYSCALL_FILTER=false"):
        bpf_program("/nonexistent/python3")
    with pytest.raises(SandboxUnavailable, match="python3-seccomp"):  # when the pool is made, not on first use
        SandboxPool(SETTINGS.model_copy(update={"seccomp_python": "/nonexistent/python3"}))
