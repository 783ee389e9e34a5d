"""The adversarial suite: one attack per test, each asserting the verdict and an unchanged host.

Every test here uses the ``host`` fixture: after the run no process of any sandbox uid is alive
anywhere on the host, and nothing the attack tried to write exists on it.
"""

from __future__ import annotations

import os
import socket
import textwrap
from pathlib import Path

import pytest
from sandbox_support import MARKER, QUICK, SECRET, SECRET_NAME, fill

from rewardhub.sandbox.limits import CHILDREN_AHEAD

pytestmark = pytest.mark.usefixtures("host")


def run(pool, code: str, **limits):
    return pool.run("python", textwrap.dedent(code), limits=QUICK.with_(**limits))


def test_fork_bomb_is_stopped_by_the_clock_and_leaves_no_process(pool):
    result = run(
        pool,
        """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """,
    )
    assert result.verdict == "timeout"


def test_fork_bomb_cannot_exceed_the_process_limit(pool):
    result = run(
        pool,
        """
        import os, time
        count = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                count += 1
        except OSError:
            print(count)
    """,
        max_processes=20,
    )
    assert result.verdict == "ok"
    assert int(result.stdout) < 20


def test_thread_bomb_cannot_exceed_the_process_limit(pool):
    result = run(
        pool,
        """
        import threading, time
        count = 0
        try:
            while True:
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
                count += 1
        except RuntimeError:
            print(count)
    """,
        max_processes=20,
    )
    assert result.verdict == "ok"
    assert int(result.stdout) < 20


def test_memory_bomb_is_a_memory_verdict(pool):
    result = run(pool, "chunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))\n", memory_mb=64)
    assert result.verdict == "memory"


def test_memory_bomb_in_a_forked_child_is_a_memory_verdict(pool):
    result = run(
        pool,
        """
        import os
        if os.fork() == 0:
            x = bytearray(512 << 20)
            os._exit(0)
        _, status = os.wait()
        raise SystemExit(1 if status else 0)
    """,
        memory_mb=64,
    )
    assert result.verdict == "memory"


def test_infinite_output_is_cut_at_the_cap(pool):
    result = run(pool, "while True:\n    print('x' * 1000)\n", max_output_bytes=64 << 10)
    assert result.verdict == "output_limit"
    assert len(result.stdout) <= 64 << 10


def test_infinite_output_on_stderr_counts_too(pool):
    result = run(pool, "import sys\nwhile True:\n    sys.stderr.write('y' * 1000)\n", max_output_bytes=64 << 10)
    assert result.verdict == "output_limit"


def test_sleeping_forever_is_a_timeout(pool):
    result = run(pool, "import time\ntime.sleep(3600)\n", timeout_s=1.0)
    assert result.verdict == "timeout"


def test_ignoring_signals_does_not_outlive_the_timeout(pool):
    result = run(
        pool,
        """
        import signal
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU, signal.SIGALRM):
            signal.signal(number, signal.SIG_IGN)
        while True:
            pass
    """,
        timeout_s=1.0,
    )
    assert result.verdict == "timeout"


def test_double_forked_daemon_is_killed_when_the_run_ends(pool):
    result = run(
        pool,
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(3600)
            os._exit(0)
        os.wait()
        print("parent done")
    """,
    )
    assert result.verdict == "ok"
    assert result.stdout == "parent done\n"  # the host fixture checks the daemon is gone


def test_daemon_cannot_touch_the_next_run(pool):
    first = run(
        pool,
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            while True:
                with open("/tmp/daemon-was-here", "a") as f:
                    f.write("x")
                time.sleep(0.01)
    """,
    )
    second = run(pool, "import os\nprint(os.path.exists('/tmp/daemon-was-here'))\n")
    assert (first.verdict, second.stdout) == ("ok", "False\n")


def test_the_children_waiting_for_the_next_runs_are_out_of_the_programs_reach(pool):
    """The next runs' children are forked while this run's program runs, from the server, and keep
    the server's user until their own runs: the program can neither signal them nor read their
    memory, their environment or their descriptors."""
    result = run(
        pool,
        """
        import os, signal, time

        def others():
            ours = (1, os.getpid(), os.getppid())
            return [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) not in ours]

        deadline = time.monotonic() + 1.5
        while not others() and time.monotonic() < deadline:
            time.sleep(0.01)
        for pid in others():
            status = open(f"/proc/{pid}/status").read()
            uid = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1]
            outcomes = []
            for reach in (
                lambda: open(f"/proc/{pid}/mem", "rb").read(1),
                lambda: open(f"/proc/{pid}/environ", "rb").read(1),
                lambda: os.listdir(f"/proc/{pid}/fd"),
                lambda: os.kill(pid, signal.SIGKILL),
            ):
                try:
                    reach()
                    outcomes.append("reached")
                except PermissionError:
                    outcomes.append("refused")
            print(uid, outcomes)
    """,
    )
    after = run(pool, "print('next')\n")
    assert result.verdict == "ok"
    waiting = result.stdout.splitlines()
    assert waiting and set(waiting) == {"0 ['refused', 'refused', 'refused', 'refused']"}
    assert after.stdout == "next\n"


def test_a_program_holds_no_descriptor_but_its_own_pipes(pool):
    """Nothing of the server's reaches the program: not its control socket, not the sockets of the
    other children forked in the same burst (with one, a program could hand them a forged run)."""
    results = [run(pool, "import os\nprint(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))\n") for _ in range(4)]
    assert {r.stdout for r in results} == {"[0, 1, 2, 3, 4]\n"}  # 3: the record channel, 4: the listing's own


def test_leftovers_are_killed_and_the_next_run_still_gets_a_child(pool):
    """Killing a run's leftovers (``kill(-1)``) takes the waiting child with them; a fresh one serves the next run."""
    runs = [
        run(pool, "import os, time\nif os.fork() == 0:\n    time.sleep(3600)\nprint('left one')\n") for _ in range(3)
    ]
    after = run(pool, "print('next')\n")
    assert [r.stdout for r in runs] == ["left one\n"] * 3
    assert after.stdout == "next\n"


def test_external_network_is_unreachable(pool):
    result = run(
        pool,
        """
        import socket
        for address in [("1.1.1.1", 53), ("8.8.8.8", 443)]:
            try:
                socket.create_connection(address, timeout=1).close()
                print("connected")
            except OSError as exc:
                print(type(exc).__name__)
    """,
    )
    assert result.verdict == "ok"
    assert "connected" not in result.stdout


def test_host_loopback_services_are_unreachable(pool):
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
        redis_up = True
    except OSError:
        redis_up = False
    result = run(
        pool,
        """
        import socket
        try:
            socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
            print("connected")
        except OSError as exc:
            print(type(exc).__name__)
    """,
    )
    assert result.verdict == "ok"
    assert "connected" not in result.stdout
    if not redis_up:
        pytest.skip("no Redis on 127.0.0.1:6379 here; the sandbox side of the check passed")


def test_environment_is_empty_of_the_services_variables(pool):
    assert os.environ[SECRET_NAME] == SECRET
    result = run(pool, "import os\nprint(sorted(os.environ.items()))\n")
    assert result.verdict == "ok"
    assert SECRET not in result.stdout
    assert SECRET_NAME not in result.stdout


def test_other_processes_environments_are_not_readable(pool):
    result = run(
        pool,
        """
        import os
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    print(pid, open(f"/proc/{pid}/environ", "rb").read())
                except OSError as exc:
                    print(pid, type(exc).__name__)
    """,
    )
    assert result.verdict == "ok"
    assert SECRET not in result.stdout
    assert "1 PermissionError" in result.stdout


def test_proc_shows_only_the_sandbox(pool):
    result = run(pool, "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n")
    assert result.verdict == "ok"
    visible = eval(result.stdout)
    assert os.getpid() not in visible
    assert len(visible) <= 3 + CHILDREN_AHEAD  # init, the server, the program, the children waiting for next runs


@pytest.mark.parametrize("path", ["/usr", "/etc", "/opt/rewardhub/inside", "/", "/proc/sys/kernel"])
def test_system_paths_are_not_writable(pool, path):
    target = f"{path.rstrip('/')}/{MARKER}"
    result = run(
        pool,
        f"""
        try:
            open({target!r}, "w").write("x")
            print("written")
        except OSError as exc:
            print(type(exc).__name__)
    """,
    )
    assert result.verdict == "ok"
    assert "written" not in result.stdout
    assert not Path(target).exists()


def test_the_harness_cannot_be_rewritten(pool):
    result = run(
        pool,
        """
        import os
        for name in ("driver.py", "harness.py", "wire.py"):
            try:
                open(f"/opt/rewardhub/inside/{name}", "a").write("hacked")
                print("written")
            except OSError as exc:
                print(type(exc).__name__)
    """,
    )
    assert result.verdict == "ok"
    assert "written" not in result.stdout


def test_filling_the_scratch_disk_stops_at_its_size_and_is_wiped(pool):
    result = run(
        pool,
        f"""
        import itertools
        try:
            for n in itertools.count():
                with open(f"/tmp/{MARKER}-{{n}}", "wb") as f:
                    f.write(b"x" * (8 << 20))
        except OSError as exc:
            print(type(exc).__name__, exc.errno)
    """,
        memory_mb=512,
        timeout_s=10.0,
    )
    after = run(pool, "import os\nprint(os.listdir('/tmp'))\n")
    assert result.verdict == "ok"
    assert result.stdout == "OSError 28\n"  # ENOSPC: the tmpfs is full, the host disk is not touched
    assert after.stdout == "['main.py']\n"  # only the next program's own source


def test_filling_shared_memory_stops_at_its_size_and_is_wiped(pool):
    result = run(pool, fill(f"/dev/shm/{MARKER}"), memory_mb=512, timeout_s=10.0)
    after = run(pool, "import os\nprint(os.listdir('/dev/shm'))\n")
    assert (result.verdict, result.stdout) == ("ok", "OSError 28\n")  # ENOSPC: its own tmpfs is full
    assert after.stdout == "[]\n"


def test_a_link_out_of_the_jobs_folders_fetches_nothing_and_is_not_written_through(pool):
    """A program leaves links to the system under names the caller then fetches or writes."""
    code = (
        "import os\nos.symlink('/etc', '/dev/shm/etc')\nos.symlink('/etc/passwd', 'passwd')\nos.symlink('/', 'root')\n"
    )
    with pool.job("python", code) as job:
        job.setup()
        assert job.run(b"", QUICK).verdict == "ok"
        fetched = job.fetch(["/dev/shm/etc/passwd", "passwd", "root/etc/passwd", "/dev/shm/etc", "/etc/passwd"])
        written = job.run(b"", QUICK, files={f"root/etc/{MARKER}": "x"}, last=True)
    assert fetched == {}
    assert written.verdict == "sandbox_error" and "refusing to write outside" in written.details["message"]


def test_localhost_is_the_sandboxs_own_loopback(pool):
    result = run(
        pool,
        """
        import socket, threading
        server = socket.create_server(("localhost", 0))
        threading.Thread(target=lambda: server.accept()[0].sendall(b"own loopback"), daemon=True).start()
        with socket.create_connection(("localhost", server.getsockname()[1]), timeout=2) as client:
            print(socket.gethostbyname("localhost"), client.recv(64).decode())
    """,
    )
    assert (result.verdict, result.stdout) == ("ok", "127.0.0.1 own loopback\n")


def test_ptrace_of_the_server_is_refused(pool):
    result = run(
        pool,
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        PTRACE_ATTACH = 16
        print(libc.ptrace(PTRACE_ATTACH, os.getppid(), None, None), ctypes.get_errno())
    """,
    )
    assert result.verdict == "ok"
    assert result.stdout == "-1 1\n"  # EPERM


def test_the_server_cannot_be_killed_by_the_program(pool):
    attack = run(
        pool,
        """
        import os, signal
        try:
            os.kill(os.getppid(), signal.SIGKILL)
        except PermissionError:
            print("refused")
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            print("nothing else to kill")
    """,
    )
    after = run(pool, "print('still serving')\n")
    assert attack.stdout.startswith("refused")
    assert after.stdout == "still serving\n"


def test_the_program_runs_unprivileged(pool):
    result = run(
        pool,
        """
        import os
        print(os.getuid(), os.geteuid(), os.getgroups())
        try:
            os.setuid(0)
            print("root")
        except PermissionError:
            print("refused")
        print(open("/proc/self/status").read().split("CapEff:")[1].split()[0])
    """,
    )
    uid, euid, *rest = result.stdout.split()
    assert int(uid) >= 1000 and uid == euid
    assert "refused" in rest and "root" not in rest
    assert rest[-1] == "0000000000000000"


def test_a_file_over_the_size_limit_cannot_be_written(pool):
    result = run(pool, "open('big', 'wb').write(b'x' * (2 << 20))\n", max_file_mb=1)
    assert result.verdict == "runtime_error"
    assert "File too large" in result.stderr


def test_exiting_with_the_file_writers_failure_status_is_still_the_programs_own_failure(pool):
    result = pool.run("python", "raise SystemExit(124)", files={"data.txt": "x"}, limits=QUICK)
    assert (result.verdict, result.exit_code) == ("runtime_error", 124)


def test_files_that_could_not_be_written_are_a_sandbox_error_not_the_programs(pool):
    result = pool.run("python", "print('never runs')", files={"../outside.txt": "x"}, limits=QUICK)
    assert result.verdict == "sandbox_error"
    assert "could not write" in result.details["message"]


def test_open_files_are_limited(pool):
    result = run(
        pool,
        """
        handles = []
        try:
            while True:
                handles.append(open("/dev/null"))
        except OSError as exc:
            print(len(handles), exc.errno)
    """,
        max_open_files=64,
    )
    count, errno = result.stdout.split()
    assert (result.verdict, errno) == ("ok", "24")  # EMFILE
    assert int(count) < 64
