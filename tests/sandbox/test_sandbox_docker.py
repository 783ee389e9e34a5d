"""The Docker backend on the real engine: one warm container per sandbox with the fork server in it,
its limits, its system-call filter, its replacement when killed or frozen, and no container left
when the service dies. (The attack battery and every language's verdicts run through it in
``test_sandbox_docker_attacks.py`` and ``test_sandbox_docker_parity.py``.)
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from docker_support import IMAGE, docker_pool, our_containers, require_docker
from sandbox_support import QUICK
from test_sandbox_syscall_filter import ATTACKS, run_attacks

from rewardhub.sandbox.cgroups import SandboxCgroups
from rewardhub.sandbox.syscall_filter import docker_profile

pytestmark = pytest.mark.docker

ROOT = Path(__file__).parents[2]


def inspect(name: str) -> dict:
    done = subprocess.run(["docker", "inspect", name], capture_output=True, text=True, timeout=30, check=True)
    return json.loads(done.stdout)[0]


def test_one_warm_container_serves_every_run_through_its_fork_server():
    with docker_pool() as pool:
        results = [pool.run("python", f"print({i} * 2)", limits=QUICK) for i in range(20)]
        results.append(pool.run("c", '#include <stdio.h>\nint main(){puts("c");}\n', limits=QUICK.with_(timeout_s=10)))
        running = our_containers()
        assert [r.stdout for r in results] == [f"{i * 2}\n" for i in range(20)] + ["c\n"], [
            (r.verdict, r.stderr[-300:]) for r in results
        ]
        assert {r.details["container"] for r in results} == set(running)
        assert len(running) == 1 and pool.started == 1  # twenty-one runs, one container start
        assert inspect(running[0])["HostConfig"]["NetworkMode"] == "none"
    assert our_containers() == []


def test_a_job_writes_its_absolute_folders_in_the_container_as_under_bubblewrap():
    """SandboxFusion's programs read and write /mnt: a private tmpfs in the container too."""
    program = "print(open('/mnt/a').read(), end=''); open('/mnt/b', 'w').write('written')\nprint(open('/mnt/b').read())"
    with docker_pool() as pool:
        result = pool.run("python", program, files={"/mnt/a": "given "}, limits=QUICK)
    assert (result.verdict, result.stdout) == ("ok", "given written\n"), result.stderr[-300:]


def test_programs_run_as_the_sandboxs_own_uid_on_a_read_only_image():
    program = textwrap.dedent("""
        import errno, os
        try:
            open('/usr/bin/sandbox-escape', 'w')
        except OSError as exc:
            print(os.getuid(), os.getgid(), errno.errorcode[exc.errno])
    """)
    with docker_pool() as pool:
        result = pool.run("python", program, limits=QUICK)
    uid, gid, refused = result.stdout.split()
    assert int(uid) == int(gid) == result.details["uid"] >= pool.settings.uid_base
    assert refused in ("EROFS", "EACCES")


def test_each_run_gets_its_own_memory_limit_in_the_same_container():
    hog = "x = bytearray(200 << 20)\nx[::4096] = b'y' * len(x[::4096])\nprint('held')\n"
    with docker_pool() as pool:
        roomy = pool.run("python", hog, limits=QUICK.with_(memory_mb=300))
        tight = pool.run("python", hog, limits=QUICK.with_(memory_mb=128))
        again = pool.run("python", hog, limits=QUICK.with_(memory_mb=300))
        assert pool.started == 1
    assert (roomy.verdict, roomy.stdout, tight.verdict, again.verdict) == ("ok", "held\n", "memory", "ok")


def test_without_the_hosts_cgroups_a_run_with_other_limits_updates_its_container(monkeypatch):
    """A service that cannot write the container's cgroups (not root) asks the engine instead."""
    monkeypatch.setattr(SandboxCgroups, "of_process", classmethod(lambda cls, pid: None))
    with docker_pool() as pool:
        result = pool.run("python", "print('ok')", limits=QUICK.with_(memory_mb=300, max_processes=40))
        config = inspect(result.details["container"])["HostConfig"]
    assert result.stdout == "ok\n"
    assert (config["Memory"], config["MemorySwap"]) == ((300 + 128) << 20, (300 + 128) << 20)
    assert config["PidsLimit"] == 40 + 5


def test_the_system_call_filter_is_the_containers_seccomp_profile():
    with docker_pool() as pool:
        answers = run_attacks(pool, ATTACKS)
        mode = pool.run("python", "print(open('/proc/self/status').read().split('Seccomp:')[1].split()[0])")
        options = inspect(mode.details["container"])["HostConfig"]["SecurityOpt"]
    assert {name: tuple(answer) for name, answer in answers.items()} == {
        name: (-1, errno) for name, (_, _, errno) in ATTACKS.items()
    }
    assert mode.stdout == "2\n"  # filter mode
    (profile,) = [option.removeprefix("seccomp=") for option in options if option.startswith("seccomp=")]
    assert json.loads(profile) == docker_profile()
    assert "no-new-privileges" in options


def test_a_container_killed_while_idle_is_replaced_before_the_next_run():
    with docker_pool() as pool:
        first = pool.run("python", "print('first')", limits=QUICK)
        subprocess.run(["docker", "kill", first.details["container"]], capture_output=True, timeout=30, check=True)
        deadline = time.monotonic() + 10
        while our_containers() and time.monotonic() < deadline:  # --rm takes it away
            time.sleep(0.05)
        second = pool.run("python", "print('second')", limits=QUICK)
        assert (second.verdict, second.stdout, pool.started) == ("ok", "second\n", 2)


def test_a_frozen_container_is_replaced_after_the_run_it_froze():
    """The run it froze in is a timeout, as with any server that never reports after the clock
    ran out (test_sandbox_verdicts: a program must not be able to turn its own timeout into a
    masked sandbox_error); the container is then broken, removed and replaced."""
    with docker_pool() as pool:
        first = pool.run("python", "print('first')", limits=QUICK)
        subprocess.run(["docker", "pause", first.details["container"]], capture_output=True, timeout=30, check=True)
        frozen = pool.run("python", "print('never')", limits=QUICK.with_(timeout_s=1.0))
        after = pool.run("python", "print('after')", limits=QUICK)
        assert (frozen.verdict, frozen.stdout, after.verdict, after.stdout) == ("timeout", "", "ok", "after\n")
        assert pool.started == 2
    assert our_containers() == []


SERVICE = textwrap.dedent("""
    import sys, threading
    sys.path[:0] = ["tests/sandbox", "tests"]
    from docker_support import docker_pool
    from rewardhub.sandbox import Limits
    with docker_pool(concurrency=2) as pool:
        def work():
            pool.run("python", "import time\\nprint('running', flush=True)\\ntime.sleep(600)", limits=Limits(timeout_s=600))
        for _ in range(2):
            threading.Thread(target=work, daemon=True).start()
        print("started", flush=True)
        threading.Event().wait()
""")


def test_a_killed_service_leaves_no_container_running():
    """kill -9 of the service: each server's control socket closes, the server exits, and
    ``--init --rm`` take its container away with every program in it."""
    require_docker()
    service = subprocess.Popen([sys.executable, "-c", SERVICE], stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert service.stdout is not None and service.stdout.readline() == b"started\n"
        deadline = time.monotonic() + 30
        while len(mine := [n for n in our_containers() if f"-{service.pid}-" in n]) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(mine) == 2, our_containers()
    finally:
        service.send_signal(signal.SIGKILL)
        service.wait()
    deadline = time.monotonic() + 30
    while [n for n in our_containers() if f"-{service.pid}-" in n] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [n for n in our_containers() if f"-{service.pid}-" in n] == []
    listed = subprocess.run(["docker", "ps", "-q", "--filter", f"ancestor={IMAGE}"], capture_output=True, text=True)
    assert listed.stdout.split() == []
