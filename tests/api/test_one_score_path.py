"""One score path: every route, job and compatibility endpoint plans, admits, scores and observes
through ``rewardhub.api.pipeline``, and the routes stay thin.

The source checks read the code (so a route that grows its own admission or scoring fails here);
the service checks prove that every endpoint is refused and counted alike when the engine is full,
and that every endpoint's samples reach the metrics.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rewardhub.api.app import create_app
from rewardhub.settings import Settings

PACKAGE = Path(__file__).resolve().parents[2] / "rewardhub"
PIPELINE = PACKAGE / "api" / "pipeline.py"
SERVING = sorted([*(PACKAGE / "api").rglob("*.py"), *(PACKAGE / "integrations").rglob("*.py")])


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _name(node: ast.expr) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def score_path_uses(path: Path) -> list[str]:
    """What in ``path`` does the pipeline's work: touches the scorer, admits on the engine, observes results."""
    found = []
    for node in ast.walk(_tree(path)):
        if not isinstance(node, ast.Attribute):
            continue
        if node.attr in ("scorer", "observe_results"):
            found.append(f"line {node.lineno}: .{node.attr}")
        elif node.attr == "admit" and _name(node.value) == "executor":
            found.append(f"line {node.lineno}: executor.admit")
    return found


def test_only_the_pipeline_plans_admits_scores_and_observes() -> None:
    offenders = {str(p.relative_to(PACKAGE)): score_path_uses(p) for p in SERVING if p != PIPELINE}
    assert {path: uses for path, uses in offenders.items() if uses} == {}
    assert score_path_uses(PIPELINE)  # the check sees the pipeline's own work, so it can see anyone's


SCORING_ROUTES = {
    "/v1/score": "routes/score.py",
    "/v1/jobs": "routes/jobs.py",
    "/get_reward": "compat/openrlhf.py",
    "/v1/compat/slime": "compat/slime.py",
    "/v1/compat/slime/batch": "compat/slime.py",
    "/v1/graders/run": "compat/graders/routes.py",
    "/v1/compat/nemo-gym/{verifier}/verify": "compat/nemo_gym/routes.py",
    "/v1/compat/nemo-gym/{verifier}/verify_batch": "compat/nemo_gym/routes.py",
}
MAX_HANDLER_STATEMENTS = 5


def route_handlers() -> dict[str, ast.AsyncFunctionDef]:
    handlers = {}
    for module in set(SCORING_ROUTES.values()):
        for node in _tree(PACKAGE / "api" / module).body:
            if not isinstance(node, ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and _name(decorator.func) == "post" and decorator.args:
                    path = decorator.args[0]
                    if isinstance(path, ast.Constant) and path.value in SCORING_ROUTES:
                        handlers[path.value] = node
    return handlers


def test_every_scoring_route_is_thin_and_hands_its_samples_to_the_pipeline() -> None:
    handlers = route_handlers()
    assert sorted(handlers) == sorted(SCORING_ROUTES)
    for path, handler in handlers.items():
        body = [s for s in handler.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        uses = {n.attr for n in ast.walk(handler) if isinstance(n, ast.Attribute)}
        assert "pipeline" in uses, f"{path} does not score through the pipeline"
        assert len(body) <= MAX_HANDLER_STATEMENTS, f"{path} has {len(body)} statements: parse, call, answer"


def test_the_api_imports_no_verifier_package() -> None:
    own = sorted(p for folder in ("", "routes", "middleware") for p in (PACKAGE / "api" / folder).glob("*.py"))
    for path in own:
        for node in ast.walk(_tree(path)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not [n for n in names if n.startswith(("rewardhub.verifiers", "rewardhub.models"))], path
    modules = [
        ".".join(("rewardhub", *p.relative_to(PACKAGE).with_suffix("").parts)) for p in own if p.stem != "__init__"
    ]
    probe = (
        f"import importlib, json, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('rewardhub.verifiers', 'rewardhub.models')))))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(loaded.stdout) == []  # the sandbox is a service the API uses, not a verifier it imports


# --- the service: one admission, one set of metrics for every endpoint -----------------------------

STRING_CHECK = {
    "type": "string_check",
    "input": "{{ sample.output_text }}",
    "reference": "{{ item.answer }}",
    "operation": "eq",
}
ONE_SAMPLE_EACH: dict[str, tuple[dict[str, Any], str]] = {
    "/v1/score": ({"verifier": "exact", "samples": [{"response": "4", "reference": "4"}]}, "exact"),
    "/v1/jobs": ({"verifier": "exact", "samples": [{"response": "4", "reference": "4"}]}, "exact"),
    "/get_reward": ({"query": ["2+2? 4"], "prompts": ["2+2? "], "labels": ["4"]}, "exact"),
    "/v1/compat/slime": ({"prompt": "2+2?", "response": "4", "label": "4"}, "exact"),
    "/v1/graders/run": ({"grader": STRING_CHECK, "model_sample": "4", "item": {"answer": "4"}}, "string_check"),
    "/v1/compat/nemo-gym/exact/verify": (
        {
            "responses_create_params": {"input": "2+2?"},
            "response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": "4"}]}]},
            "expected_answer": "4",
        },
        "exact",
    ),
}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    settings = Settings(workers=1, get_reward_verifier="exact", max_samples_per_request=10)
    with TestClient(create_app(settings)) as client:
        yield client


def scored(client: TestClient, verifier: str) -> float:
    registry = client.app.state.service.metrics.registry  # type: ignore[attr-defined]
    return registry.get_sample_value("rewardhub_samples_total", {"verifier": verifier, "status": "ok"}) or 0.0


def rejected(client: TestClient) -> float:
    registry = client.app.state.service.metrics.registry  # type: ignore[attr-defined]
    return registry.get_sample_value("rewardhub_rejected_total", {"reason": "overloaded"}) or 0.0


@pytest.mark.parametrize("path", sorted(ONE_SAMPLE_EACH))
def test_every_endpoint_counts_its_samples_in_the_same_metrics(client: TestClient, path: str) -> None:
    body, verifier = ONE_SAMPLE_EACH[path]
    before = scored(client, verifier)
    answer = client.post(path, json=body)
    assert answer.status_code in (200, 202), answer.text
    if path == "/v1/jobs":
        job = answer.json()["job_id"]
        deadline = time.monotonic() + 60
        while client.get(f"/v1/jobs/{job}").json()["status"] != "done" and time.monotonic() < deadline:
            time.sleep(0.02)
    assert scored(client, verifier) == before + 1


@pytest.mark.parametrize("path", sorted(ONE_SAMPLE_EACH))
def test_every_endpoint_is_refused_and_counted_alike_when_the_engine_is_full(
    client: TestClient, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = client.app.state.service  # type: ignore[attr-defined]
    monkeypatch.setattr(service.executor, "queue_depth", lambda: service.settings.max_pending_samples)
    body, verifier = ONE_SAMPLE_EACH[path]
    before_rejected, before_scored = rejected(client), scored(client, verifier)
    answer = client.post(path, json=body)
    assert answer.status_code == 429 and answer.json()["error"]["type"] == "overloaded", answer.text
    assert int(answer.headers["retry-after"]) >= 1
    assert (rejected(client), scored(client, verifier)) == (before_rejected + 1, before_scored)


@pytest.mark.parametrize("path", ["/v1/score", "/v1/jobs", "/get_reward"])
def test_too_many_samples_are_refused_before_any_work_on_every_batch_endpoint(client: TestClient, path: str) -> None:
    limit = client.app.state.service.settings.max_samples_per_request  # type: ignore[attr-defined]
    if path == "/get_reward":
        body: dict[str, Any] = {
            "query": ["a"] * (limit + 1),
            "prompts": [""] * (limit + 1),
            "labels": ["a"] * (limit + 1),
        }
    else:
        body = {"verifier": "exact", "samples": [{"response": "a", "reference": "a"}] * (limit + 1)}
    answer = client.post(path, json=body)
    assert answer.status_code == 413 and answer.json()["error"]["detail"] == {"limit": limit}
