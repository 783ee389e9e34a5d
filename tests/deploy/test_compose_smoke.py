"""The compose deployment, run: images built here, ``up`` with Redis, the API, a CPU worker, a
sandbox worker and a session worker, the README's composite example and a ``code`` sample scored
through the API, a session that keeps a variable across two calls and is deleted, a worker
container killed and the same request scored again, then ``down`` with nothing left.

What is changed from ``deploy/docker-compose.yml`` for this machine, and only that (the file is
rewritten into a temporary one): no image registry here, so the images build on the local
Debian base (``scripts/build_sandbox_image.sh --base``) with the host's wheels
(``deploy/wheels``, filled by pip) and Redis runs from that base; no bridge may be created, so
Redis runs with ``--network none`` and every other service joins its network namespace
(``network_mode: service:redis``), where there is only a loopback: the services reach Redis at
127.0.0.1, nothing is published, and the client runs inside that namespace (``docker exec``).
One CPU worker instead of two: containers sharing one network namespace share its hostname, and
two replicas of one queue would then have the same Celery node name. Workers of different roles do
not collide: a node name is ``rewardhub-<queues>-<pid>@<host>`` (``rewardhub-sessions-<pid>@<host>``
for the session worker), each one's own prefix, which the test checks by a ping from that namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from image_builds import image_missing

ROOT = Path(__file__).parents[2]
DEPLOY = ROOT / "deploy"
BASE = "rewardhub-debian-base:latest"
PROJECT = "rewardhub-smoke"
KEY = "smoke-test-key-0123456789abcdef"

pytestmark = [pytest.mark.docker, pytest.mark.integration]

BELOW_3_11_3 = ["async-timeout>=4.0.3"]
"""What redis needs on Debian's Python (3.11.2) and pip skips on a newer host's (its marker)."""

CLIENT = """
import json, sys, httpx
body, key = json.loads(sys.argv[1]), sys.argv[2]
reply = httpx.post("http://127.0.0.1:8000/v1/score", json=body, timeout=120, headers={"Authorization": "Bearer " + key})
print(json.dumps({"status": reply.status_code, "body": reply.json()}))
"""

SESSION = """
import json, sys, httpx
key = sys.argv[1]
with httpx.Client(base_url="http://127.0.0.1:8000", timeout=120, headers={"Authorization": "Bearer " + key}) as http:
    made = http.post("/v1/sessions", json={"runtime": "python"})
    sid = made.json()["session_id"]
    ran = [http.post(f"/v1/sessions/{sid}/run", json={"code": code}).json() for code in ("x = 41", "print(x + 1)")]
    deleted = http.delete(f"/v1/sessions/{sid}").status_code
    after = http.get(f"/v1/sessions/{sid}").status_code
print(json.dumps({"made": made.status_code, "ran": ran, "deleted": deleted, "after": after}))
"""
"""A session's life through the API, in one ``docker exec``: two calls that share a variable, then gone."""
PING = """
import json, socket
from rewardhub.execution.celery_app import create_celery_app
from rewardhub.settings import Settings
app = create_celery_app(Settings.load())
print(json.dumps({"host": socket.gethostname(), "nodes": sorted(app.control.inspect(timeout=2.0).ping() or {})}))
"""
"""The Celery node names that answer a ping, asked as the workers' health check asks."""

COMPOSITE = {
    "verifier": {"sum": [{"verifier": "math", "weight": 0.9}, {"verifier": "format", "weight": 0.1}]},
    "samples": [
        {"id": "a", "response": "<think>2+2</think> The answer is $\\boxed{4}$.", "reference": "4"},
        {"id": "b", "response": "<think>hmm</think> 5", "reference": "4"},
    ],
}
CODE = {
    "verifier": "code",
    "samples": [
        {
            "id": "add",
            "response": "```python\ndef add(a, b):\n    return a + b\n```",
            "reference": json.dumps({"test_list": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]}),
        },
        {
            "id": "wrong",
            "response": "```python\ndef add(a, b):\n    return a - b\n```",
            "reference": json.dumps({"test_list": ["assert add(1, 2) == 3"]}),
        },
    ],
}


def compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


def offline_file(tmp_path: Path) -> Path:
    """deploy/docker-compose.yml, rewritten for no registry and no bridge (see the module docstring)."""
    spec = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    spec.pop("name", None)  # the project name is given on the command line (docker-compose 1.x refuses the key)
    spec = {key: value for key, value in spec.items() if not key.startswith("x-")}
    for name, service in list(spec["services"].items()):
        if "gpu" in service.get("profiles", []):
            del spec["services"][name]
            continue
        service.pop("ports", None)
        service.pop("deploy", None)
        if "build" in service:
            service["build"]["context"] = str(ROOT)
            service["build"]["network"] = "none"
            service["build"]["args"] = {"BASE_IMAGE": BASE, "PIP_FLAGS": "--no-index --find-links /wheels"}
        env = service.get("environment", {})
        for key, value in env.items():
            if isinstance(value, str):
                env[key] = value.replace("redis://redis:", "redis://127.0.0.1:")
        if name == "redis":
            service["image"] = BASE
            service["network_mode"] = "none"
        else:
            service["network_mode"] = "service:redis"
    # no service uses a network (each has a network_mode); were one to, it would get "none", never a bridge
    spec["networks"] = {"default": {"external": True, "name": "none"}}
    keys = tmp_path / "api_keys.txt"
    keys.write_text(KEY + "\n")
    spec["secrets"]["api_keys"]["file"] = str(keys)
    path = tmp_path / "docker-compose.offline.yml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def containers() -> list[str]:
    listed = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label=com.docker.compose.project={PROJECT}", "--format", "{{.Names}}"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return sorted(listed.stdout.split())


def wait_healthy(names: list[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        states = {n: _health(n) for n in names}
        if all(state == "healthy" for state in states.values()):
            return
        time.sleep(2)
    pytest.fail(f"not healthy after {timeout_s:g}s: {states}")


def _health(name: str) -> str:
    done = subprocess.run(["docker", "inspect", "-f", "{{.State.Health.Status}}", name], capture_output=True, text=True)
    return done.stdout.strip() or done.stderr.strip()


def in_container(name: str, script: str, *args: str) -> dict:
    done = subprocess.run(
        ["docker", "exec", name, "python", "-c", script, *args], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def score(api: str, body: dict) -> dict:
    done = subprocess.run(
        ["docker", "exec", api, "python", "-c", CLIENT, json.dumps(body), KEY],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    assert answer["status"] == 200, answer
    return {r["id"]: (r["status"], r["score"]) for r in answer["body"]["results"]}


@pytest.mark.timeout(1800)  # a first build installs every dependency into two images
def test_the_compose_deployment_scores_survives_a_killed_worker_and_leaves_nothing(tmp_path):
    compose = compose_command()
    if compose is None or subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.skip("no Docker engine or no compose here (scripts/install_system_deps.sh, .ci/run)")
    missing = image_missing(BASE, "--base")
    if missing is not None:
        pytest.skip(missing)
    wheels = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(DEPLOY / "wheels"), "--find-links",
         str(DEPLOY / "wheels"), ".[celery]", "setuptools>=68", "wheel", *BELOW_3_11_3],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if wheels.returncode != 0:
        pytest.skip(f"could not gather the wheels for an offline build: {wheels.stderr[-500:]}")
    for own in (DEPLOY / "wheels").glob("rewardhub-*.whl"):  # the dependencies only: the source is copied
        own.unlink()
    run = [*compose, "-p", PROJECT, "-f", str(offline_file(tmp_path))]
    started = time.monotonic()
    try:
        built = subprocess.run([*run, "build", "--force-rm"], capture_output=True, text=True, timeout=900)
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        built_s = time.monotonic() - started
        up = subprocess.run([*run, "up", "-d"], capture_output=True, text=True, timeout=300)
        assert up.returncode == 0, up.stderr[-3000:]
        names = containers()
        api = next(n for n in names if "api" in n)
        workers = [n for n in names if "worker" in n]
        assert len(workers) == 3 and len(names) == 5, names
        wait_healthy(names, timeout_s=240)
        sessions_worker = next(n for n in workers if "worker-sessions" in n or "worker_sessions" in n)
        pinged = in_container(sessions_worker, PING)
        # one node per worker (no two share a name in the shared namespace), the session worker's
        # found by the health check's test (a name ending in "@" + this hostname)
        assert [n.split("-")[1] for n in pinged["nodes"]] == ["code", "cpu", "sessions"], pinged
        assert all(n.endswith("@" + pinged["host"]) for n in pinged["nodes"]), pinged
        first = score(api, COMPOSITE)
        code = score(api, CODE)
        session = in_container(api, SESSION, KEY)
        killed = next(n for n in workers if "worker-cpu" in n or "worker_cpu" in n)
        # the worker dies as a crash would (kill -9 of its process, not `docker kill`, which counts
        # as stopping it by hand): restart: unless-stopped brings it back, and the chunk is scored
        pid = subprocess.run(["docker", "inspect", "-f", "{{.State.Pid}}", killed], capture_output=True, text=True)
        os.kill(int(pid.stdout), signal.SIGKILL)
        again = score(api, COMPOSITE)
        restarts = subprocess.run(
            ["docker", "inspect", "-f", "{{.RestartCount}}", killed], capture_output=True, text=True
        )
        assert int(restarts.stdout) == 1
        print(f"\ncompose: built in {built_s:.0f}s, up and scored in {time.monotonic() - started - built_s:.0f}s")
        assert first == again
        assert first["a"][0] == "ok" and first["a"][1] == pytest.approx(1.0)
        assert first["b"][0] == "ok" and first["b"][1] == pytest.approx(0.1)
        assert code == {"add": ("ok", 1.0), "wrong": ("ok", 0.0)}
        assert session["made"] == 201 and [r["status"] for r in session["ran"]] == ["ok", "ok"], session
        assert session["ran"][1]["stdout"] == "42\n", session
        assert (session["deleted"], session["after"]) == (204, 404), session
    finally:
        subprocess.run([*run, "down", "--volumes", "--remove-orphans"], capture_output=True, timeout=300)
    assert containers() == []
    networks = subprocess.run(["docker", "network", "ls", "--format", "{{.Name}}"], capture_output=True, text=True)
    assert sorted(networks.stdout.split()) == ["host", "none"]  # no network was ever made
