"""A stand-in for the ``docker`` client, for tests on machines without a Docker engine.

``run`` turns the container's options into a bubblewrap sandbox with the same shape (host /usr,
private /tmp and /dev/shm, the volumes, no network, own pid namespace) and runs the container's
command in it, so the Docker backend's whole path (command line, socket, protocol, verdicts) is
exercised for real. ``rm -f`` kills it; ``update`` is recorded. Every call is logged to
``$FAKE_DOCKER_LOG`` as one JSON line.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

VALUED = {"--name", "--network", "--ipc", "--user", "--cap-drop", "--cap-add", "--security-opt", "--pids-limit",
          "--memory", "--memory-swap", "--cpus", "--tmpfs", "--volume", "--env", "--workdir"}  # fmt: skip


def main(argv: list[str]) -> int:
    state = Path(os.environ["FAKE_DOCKER_STATE"])
    with open(state / "calls.jsonl", "a") as log:
        log.write(json.dumps(argv) + "\n")
    if argv[0] == "run":
        return run(argv[1:], state)
    if argv[:2] == ["rm", "-f"]:
        pid_file = state / f"{argv[2]}.pid"
        if pid_file.exists():
            try:
                os.killpg(int(pid_file.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
            pid_file.unlink()
        return 0
    return 0 if argv[0] == "update" else 1


def run(argv: list[str], state: Path) -> int:
    from rewardhub.sandbox.bwrap import inside_path
    from rewardhub.sandbox.isolation import interpreter_paths  # only here: the other commands stay quick

    options: dict[str, list[str]] = {}
    index = 0
    while argv[index].startswith("--"):
        if argv[index] in VALUED:
            options.setdefault(argv[index], []).append(argv[index + 1])
            index += 2
        else:
            index += 1
    command = argv[index + 1 :]  # argv[index] is the image
    bwrap = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent"]
    bwrap += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev"]
    for name in ("bin", "sbin", "lib", "lib64"):  # the "image": this machine's system and interpreter
        if os.path.islink(f"/{name}"):
            bwrap += ["--symlink", os.readlink(f"/{name}"), f"/{name}"]
    for path in interpreter_paths(sys.executable):  # where the image would have its Python
        for parent in reversed(Path(inside_path(path)).parents[:-1]):
            bwrap += ["--perms", "0755", "--dir", str(parent)]
        bwrap += ["--ro-bind", path, inside_path(path)]
    for tmpfs in options.get("--tmpfs", []):
        bwrap += ["--perms", "1777", "--tmpfs", tmpfs.split(":")[0]]
    for volume in options.get("--volume", []):
        source, target, mode = volume.split(":")
        bwrap += ["--ro-bind" if mode == "ro" else "--bind", source, target]
    bwrap += ["--clearenv"]
    for pair in options.get("--env", []):
        key, _, value = pair.partition("=")
        bwrap += ["--setenv", key, value]
    bwrap += ["--chdir", options["--workdir"][0], "--cap-drop", "ALL"]
    bwrap += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL", "--"]
    bwrap += [inside_path(sys.executable) if command[0] == "python3" else command[0], *command[1:]]
    (state / f"{options['--name'][0]}.pid").write_text(str(os.getpid()))
    os.execvp("bwrap", bwrap)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
