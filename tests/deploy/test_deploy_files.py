"""deploy/ is checked as files: parsed and held to what the service needs (health checks, the
right queues, the sandbox's privileges, autoscaling on a queue that exists). Where a tool can
validate offline (``kubectl kustomize``, ``docker compose config``) it is run too. The compose
deployment itself runs in test_compose_smoke.py; no cluster is to be had here."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from rewardhub.execution.celery_app import QUEUES, SESSIONS
from rewardhub.settings import Settings

ROOT = Path(__file__).parent.parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
ROLES = {*QUEUES, SESSIONS}
"""What the workers of a deployment must cover: every queue, and a worker that holds sessions."""
SANDBOXED = {"code", SESSIONS}
"""The workers that run bubblewrap (code samples, sessions): the sandbox image and its privileges."""


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())


def dockerfile(name: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = (DEPLOY / name).read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def base_image(instructions: list[tuple[str, str]]) -> str:
    """The first FROM, with the build arguments declared before it at their defaults (the
    default is the registry's image; hosts without one pass BASE_IMAGE, deploy/README.md)."""
    defaults: dict[str, str] = {}
    for instruction, args in instructions:
        if instruction == "FROM":
            return re.sub(r"\$\{(\w+)\}", lambda m: defaults[m.group(1)], args)
        assert instruction == "ARG", f"{instruction} before FROM"
        key, _, value = args.partition("=")
        defaults[key] = value.strip('"')
    raise AssertionError("no FROM")


def manifests() -> list[dict]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        docs += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return docs


def by_kind(kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in manifests() if doc["kind"] == kind}


def worker_queues(command: list[str]) -> list[str]:
    assert command[:2] == ["rewardhub", "worker"], command
    return command[command.index("--queues") + 1].split(",")


# --- Dockerfiles ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Dockerfile.api", "Dockerfile.sandbox", "Dockerfile.gpu"])
def test_each_dockerfile_starts_from_a_pinned_base_and_copies_only_what_exists(name: str) -> None:
    instructions = dockerfile(name)
    base = base_image(instructions)
    assert ":" in base and not base.endswith(":latest"), base
    for instruction, args in instructions:
        if instruction == "COPY":
            *sources, _ = args.split()
            for source in sources:
                assert (ROOT / source).exists(), f"{name} copies {source}, which is not in the repository"
    assert any(i == "HEALTHCHECK" for i, _ in instructions)
    assert any(i == "CMD" for i, _ in instructions)


def test_the_api_image_runs_as_a_non_root_user_on_a_multiprocess_metrics_dir() -> None:
    instructions = dockerfile("Dockerfile.api")
    assert ("USER", "rewardhub") in instructions
    assert any(i == "ENV" and "PROMETHEUS_MULTIPROC_DIR" in a for i, a in instructions)


def test_the_sandbox_image_installs_bubblewrap_and_consumes_the_code_queue() -> None:
    instructions = dockerfile("Dockerfile.sandbox")
    assert any(i == "RUN" and "bubblewrap" in a for i, a in instructions)
    assert any(i == "RUN" and "python3-seccomp" in a for i, a in instructions)  # the system-call filter
    assert '"--queues", "code"' in dict(instructions)["CMD"]
    assert "SYS_ADMIN" in (DEPLOY / "Dockerfile.sandbox").read_text()  # the privilege note is there
    assert "pivot_root" in (DEPLOY / "Dockerfile.sandbox").read_text()  # and why SYS_ADMIN alone is not enough


def test_the_gpu_image_is_built_on_vllm_and_runs_a_gpu_worker() -> None:
    instructions = dockerfile("Dockerfile.gpu")
    assert base_image(instructions).startswith("vllm/vllm-openai:")
    assert ("ENTRYPOINT", "[]") in instructions  # not the base image's vLLM server
    assert '"--queues", "gpu"' in dict(instructions)["CMD"]


# --- docker compose ------------------------------------------------------------------------
def test_compose_runs_redis_the_api_and_a_worker_per_queue_all_with_health_checks() -> None:
    services = compose()["services"]
    assert {"redis", "api", "worker-cpu", "worker-code", "worker-gpu", "worker-sessions"} <= set(services)
    for name, service in services.items():
        assert service["healthcheck"]["test"], name
    queues = {q for name, s in services.items() if name.startswith("worker") for q in worker_queues(s["command"])}
    assert queues == ROLES
    assert worker_queues(services["worker-sessions"]["command"]) == [SESSIONS]  # a session worker takes no other
    for name, service in services.items():
        if name.startswith("worker"):
            assert service["restart"] == "unless-stopped", name


def test_compose_starts_everything_after_redis_is_healthy_and_builds_from_files_that_exist() -> None:
    services = compose()["services"]
    for name, service in services.items():
        if name != "redis":
            assert service["depends_on"]["redis"]["condition"] == "service_healthy", name
        if "build" in service:
            assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).is_file(), name


def test_compose_settings_are_valid_rewardhub_settings_for_celery_mode() -> None:
    for name, service in compose()["services"].items():
        env = service.get("environment")
        if env is None:
            continue
        fields = {k.removeprefix("REWARDHUB_").lower(): v for k, v in env.items() if k.startswith("REWARDHUB_")}
        fields.pop("api_keys_file", None)  # a secret mounted at run time
        settings = Settings(**fields, api_keys=["k"])  # refuses what production refuses
        assert settings.execution == "celery" and settings.broker_url.startswith("redis://redis:"), name


def test_compose_publishes_the_api_on_loopback_only_and_requires_keys() -> None:
    api = compose()["services"]["api"]
    assert all(port.startswith("127.0.0.1:") for port in api["ports"])
    assert api["environment"]["REWARDHUB_API_KEYS_FILE"].startswith("/run/secrets/")


def test_the_sandbox_workers_get_what_bubblewrap_needs_and_the_gpu_worker_a_gpu() -> None:
    services = compose()["services"]
    sandboxed = {
        n for n, s in services.items() if n.startswith("worker") and SANDBOXED & set(worker_queues(s["command"]))
    }
    assert sandboxed == {"worker-code", "worker-sessions"}
    for name in sandboxed:
        worker = services[name]
        # bubblewrap as root of the container: what the compose smoke test ran (test_compose_smoke.py)
        assert worker["user"] == "0:0" and {"SYS_ADMIN", "NET_ADMIN"} <= set(worker["cap_add"]), name
        assert {"seccomp=unconfined", "apparmor=unconfined"} <= set(worker["security_opt"]), name
        assert worker["build"]["dockerfile"] == "deploy/Dockerfile.sandbox", name
    devices = services["worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["capabilities"] == ["gpu"]
    assert services["worker-gpu"]["profiles"] == ["gpu"]  # opt-in on hosts without GPUs


@pytest.mark.skipif(shutil.which("docker") is None, reason="no docker client")
def test_docker_compose_config_accepts_the_file(tmp_path: Path) -> None:
    probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("the docker compose plugin is not installed here")
    keys = DEPLOY / "api_keys.txt"
    created = not keys.exists()
    if created:
        keys.write_text("test-key\n")
    try:
        result = subprocess.run(
            ["docker", "compose", "-f", str(DEPLOY / "docker-compose.yml"), "config", "--quiet"],
            capture_output=True,
            text=True,
        )
    finally:
        if created:
            keys.unlink()
    assert result.returncode == 0, result.stderr


# --- Kubernetes ----------------------------------------------------------------------------
def test_every_manifest_has_an_api_version_kind_and_name() -> None:
    for doc in manifests():
        assert doc["apiVersion"] and doc["kind"] and doc["metadata"]["name"], doc


def test_kustomization_lists_every_manifest_but_the_example_secret() -> None:
    listed = set(yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"])
    present = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    assert listed == present


def test_services_select_the_pods_of_their_deployments() -> None:
    deployments = by_kind("Deployment")
    for name, service in by_kind("Service").items():
        labels = deployments[name]["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= labels.items(), name


def test_the_api_has_readiness_and_liveness_probes_and_workers_cover_every_queue() -> None:
    deployments = by_kind("Deployment")
    api = deployments["rewardhub-api"]["spec"]["template"]["spec"]["containers"][0]
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    queues = set()
    for name, deployment in deployments.items():
        if name.startswith("rewardhub-worker"):
            container = deployment["spec"]["template"]["spec"]["containers"][0]
            queues |= set(worker_queues(container["command"]))
            assert container["livenessProbe"] and container["resources"]["requests"], name
            if SANDBOXED & set(worker_queues(container["command"])):  # bubblewrap: worker-code.yaml's note
                assert container["image"].startswith("rewardhub-sandbox:"), name
                assert "SYS_ADMIN" in container["securityContext"]["capabilities"]["add"], name
                assert container["securityContext"]["appArmorProfile"] == {"type": "Unconfined"}, name
    assert queues == ROLES
    sessions = deployments["rewardhub-worker-sessions"]["spec"]["template"]["spec"]["containers"][0]
    assert worker_queues(sessions["command"]) == [SESSIONS]  # a session worker takes no other queue


def test_autoscaling_watches_the_length_of_a_queue_a_deployment_consumes() -> None:
    [scaled] = by_kind("ScaledObject").values()
    target = by_kind("Deployment")[scaled["spec"]["scaleTargetRef"]["name"]]
    [trigger] = scaled["spec"]["triggers"]
    assert trigger["type"] == "redis"
    command = target["spec"]["template"]["spec"]["containers"][0]["command"]
    assert trigger["metadata"]["listName"] in worker_queues(command)
    assert int(trigger["metadata"]["listLength"]) > 0


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_kustomize_renders_the_manifests() -> None:
    result = subprocess.run(["kubectl", "kustomize", str(K8S)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    rendered = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert all(doc["metadata"].get("namespace") == "rewardhub" for doc in rendered if doc["kind"] != "Namespace")


def test_the_api_runs_two_processes_through_rewardhub_serve_in_compose_and_kubernetes() -> None:
    """Jobs are findable from every API process only through ``rewardhub serve`` (its shared job store)."""
    cmd = dict(dockerfile("Dockerfile.api"))["CMD"]
    assert cmd.startswith('["rewardhub", "serve"')
    assert '"--api-workers", "2"' in cmd
    api = by_kind("Deployment")["rewardhub-api"]
    command = api["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[:2] == ["rewardhub", "serve"]
    assert command[command.index("--api-workers") + 1] == "2"
