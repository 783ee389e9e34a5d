"""Backends: the command lines they build, the unsafe backend, refusing to run without isolation,
and dying with the worker. (The Docker backend runs on the real engine in test_sandbox_docker*.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sandbox_support import MARKER, QUICK, fill, sandbox_processes

from rewardhub.sandbox import SandboxPool, SandboxSettings, SandboxUnavailable
from rewardhub.sandbox.bwrap import HOSTS, bwrap_command
from rewardhub.sandbox.docker import docker_command


def test_bwrap_command_isolates_everything_the_issue_lists():
    argv = bwrap_command(
        "bwrap", "/venv/bin/python", ["/usr", "/root/.pyenv/versions/3.11"], ["--kill-scope", "pidns"], 64, True, 62001
    )
    for flag in (
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ):
        assert flag in argv
    assert argv[argv.index("--tmpfs") - 2 : argv.index("--tmpfs") + 2] == ["--size", str(64 << 20), "--tmpfs", "/tmp"]
    assert ["--ro-bind", "/usr", "/usr"] == argv[argv.index("/usr") - 1 : argv.index("/usr") + 2]
    assert "--bind" not in argv  # nothing of the host is writable
    caps = [argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"]
    assert caps == ["CAP_SETUID", "CAP_SETGID", "CAP_KILL"]


def test_bwrap_command_gives_the_job_its_writable_folders_and_an_etc_hosts_of_its_own():
    argv = bwrap_command("bwrap", "/usr/bin/python3", ["/usr"], [], 64, True, 62001, hosts_fd=7)
    tmpfs = [argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"]
    assert tmpfs == ["/tmp", "/dev/shm", "/mnt"]
    assert ["--perms", "0644", "--ro-bind-data", "7", "/etc/hosts"] == argv[argv.index("7") - 3 : argv.index("7") + 2]
    assert "127.0.0.1\tlocalhost" in HOSTS.splitlines()


def test_bubblewraps_mnt_is_a_job_folder_of_its_own_size_wiped_between_jobs(pool):
    """SandboxFusion's programs write /mnt: here it is a private tmpfs, like /tmp and /dev/shm."""
    full = pool.run("python", fill(f"/mnt/{MARKER}"), limits=QUICK.with_(memory_mb=512, timeout_s=10.0))
    after = pool.run("python", "import os\nprint(os.listdir('/mnt'))\n", limits=QUICK)
    assert (full.verdict, full.stdout) == ("ok", "OSError 28\n")  # ENOSPC: its tmpfs, not the host's disk
    assert after.stdout == "[]\n"
    assert not [name for name in os.listdir("/mnt") if MARKER in name]


def test_bwrap_command_opens_folders_above_a_bound_interpreter():
    argv = bwrap_command("bwrap", "/root/p/bin/python", ["/usr", "/root/p"], [], 64, True, 62001)
    assert ["--perms", "0755", "--dir", "/root"] == argv[argv.index("/root") - 3 : argv.index("/root") + 1]


def test_bwrap_command_without_root_maps_one_user_and_forbids_nested_namespaces():
    argv = bwrap_command("bwrap", "/usr/bin/python3", ["/usr"], [], 64, False, 65534)
    assert "--cap-add" not in argv
    assert {"--unshare-user", "--disable-userns"} <= set(argv)


def test_docker_command_has_every_wall():
    argv = docker_command("docker", "img:1", "box", "/run/rh/box", ["--kill-scope", "pidns"], 512, 64, 1.0, 256)
    text = " ".join(argv)
    for wall in ("--network none", "--read-only", "--cap-drop ALL", "--pids-limit 69", "--memory 640m",
                 "--memory-swap 640m", "--cpus 1", "--init", "--security-opt no-new-privileges", "--rm"):  # fmt: skip
        assert wall in text
    assert "--tmpfs /tmp:rw,exec,nosuid,nodev,size=256m,mode=1777" in text  # Docker's default is noexec
    tmpfs = [argv[i + 1].split(":")[0] for i, a in enumerate(argv) if a == "--tmpfs"]
    assert tmpfs == ["/tmp", "/dev/shm", "/mnt"]  # the job's writable folders, as bubblewrap mounts them
    assert argv[argv.index("img:1") + 1 :][:3] == ["python3", "-I", "-B"]
    assert [a for a in argv if a.startswith("--privileged")] == []


def test_without_bubblewrap_the_pool_refuses_with_a_clear_reason():
    with pytest.raises(SandboxUnavailable, match="bubblewrap .* is not installed.*REWARDHUB_SANDBOX_BACKEND"):
        SandboxPool(SandboxSettings(backend="bwrap", bwrap="/nonexistent/bwrap"))


def test_a_bubblewrap_too_old_for_the_scratch_options_is_refused(tmp_path):
    old = tmp_path / "bwrap"
    old.write_text("#!/bin/sh\necho bubblewrap 0.4.0\n")
    old.chmod(0o755)
    with pytest.raises(SandboxUnavailable, match="0.4.0 .* too old"):
        SandboxPool(SandboxSettings(backend="bwrap", bwrap=str(old)))


def test_the_backend_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("REWARDHUB_SANDBOX_BACKEND", "unsafe")
    assert SandboxSettings().backend == "unsafe"


def test_unsafe_backend_runs_without_walls_and_cleans_up(tmp_path):
    pool = SandboxPool(SandboxSettings(backend="unsafe", concurrency=1, preload=()))
    try:
        result = pool.run("python", "import os\nprint(os.path.exists('/work') or os.path.exists('/root'))\n")
        slow = pool.run("python", "import time\ntime.sleep(60)", limits=QUICK.with_(timeout_s=1.0))
        scratch = [p for p in Path("/tmp").iterdir() if p.name.startswith("rewardhub-unsafe-")]
    finally:
        pool.close()
    assert (result.verdict, result.stdout, result.details["isolated"]) == ("ok", "True\n", False)
    assert slow.verdict == "timeout"
    assert scratch and not any(p.exists() for p in scratch)


def test_sandboxes_die_with_the_worker_that_owns_them(tmp_path):
    """The execution layer may SIGKILL a worker on its hard timeout: nothing of its sandboxes may survive."""
    script = textwrap.dedent("""
        import sys, threading
        from rewardhub.sandbox import SandboxPool, SandboxSettings, Limits
        pool = SandboxPool(SandboxSettings(concurrency=1, preload=("colorsys",)))
        def work():
            pool.run("python", "import time\\nprint('running', flush=True)\\ntime.sleep(600)", limits=Limits(timeout_s=600))
        threading.Thread(target=work, daemon=True).start()  # from a thread that is not the spawner
        print("started", flush=True)
        threading.Event().wait()
    """)
    worker = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=Path(__file__).parents[2])
    try:
        assert worker.stdout is not None and worker.stdout.readline() == b"started\n"
        deadline = time.monotonic() + 60
        while not sandbox_processes() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sandbox_processes(), "the program never started"
    finally:  # never leave the worker behind, even when the test fails early
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    deadline = time.monotonic() + 10
    while (sandbox_processes() or _servers_of("colorsys")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_processes() == []
    assert _servers_of("colorsys") == []


def _servers_of(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in found if pid != os.getpid()]


AS_NOBODY = textwrap.dedent("""
    from rewardhub.sandbox import Limits, SandboxPool, SandboxSettings
    pool = SandboxPool(SandboxSettings(concurrency=1, preload=("json",), python=sys.executable))
    quick = Limits(timeout_s=2.0, memory_mb=64)
    for code in ("import os; print(os.getuid())", "x = bytearray(1 << 30)", "while True: pass"):
        result = pool.run("python", code, limits=quick)
        print(result.verdict, result.stdout.strip(), result.details["memory_limit"])
    pool.close()
""")


def test_as_a_normal_user_bubblewrap_maps_one_uid_and_keeps_the_verdicts():
    """Worker containers often run as a normal user: then bubblewrap works in a user namespace."""
    python = "/usr/bin/python3"
    site = next(Path(sys.prefix, "lib").glob("python3*/site-packages"))
    env = {"PYTHONPATH": f"{Path(__file__).parents[2]}:{site}", "HOME": "/tmp", "PATH": "/usr/bin:/bin"}
    as_nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", python, "-c"]
    probe = subprocess.run([*as_nobody, "import rewardhub.sandbox"], env=env, capture_output=True, timeout=60)
    if os.geteuid() != 0 or probe.returncode != 0:
        pytest.skip("needs root (to become nobody) and a system Python that can import this checkout")
    done = subprocess.run(
        [*as_nobody, "import sys\n" + AS_NOBODY], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.splitlines() == ["ok 65534 rlimit", "memory  rlimit", "timeout  rlimit"], done.stderr
