"""OpenAI-style graders behind POST /v1/graders/run, against a real service."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from rewardhub.api.compat.graders import GraderRunner, RunGraderRequest
from rewardhub.api.service import build_service
from rewardhub.sandbox import SandboxUnavailable, default_pool
from rewardhub.settings import Settings

# --- graders --------------------------------------------------------------------------------------


def grade(
    http: httpx.Client, grader: dict[str, Any], model_sample: str, item: dict[str, Any] | None = None
) -> dict[str, Any]:
    response = http.post("/v1/graders/run", json={"grader": grader, "model_sample": model_sample, "item": item or {}})
    assert response.status_code == 200, response.text
    return response.json()


def refused(http: httpx.Client, grader: dict[str, Any], item: dict[str, Any] | None = None) -> dict[str, Any]:
    response = http.post("/v1/graders/run", json={"grader": grader, "model_sample": "x", "item": item or {}})
    assert 400 <= response.status_code < 500, response.text
    return response.json()["error"]


def string_check(operation: str) -> dict[str, Any]:
    return {
        "type": "string_check",
        "name": "s",
        "input": "{{ sample.output_text }}",
        "reference": "{{ item.answer }}",
        "operation": operation,
    }


@pytest.mark.parametrize(
    ("operation", "output", "reward"),
    [
        ("eq", "Paris", 1.0),
        ("eq", "paris", 0.0),
        ("ne", "paris", 1.0),
        ("like", "It is Paris.", 1.0),
        ("like", "It is PARIS.", 0.0),
        ("ilike", "It is PARIS.", 1.0),
    ],
)
def test_string_check_operations(http: httpx.Client, operation: str, output: str, reward: float) -> None:
    out = grade(http, string_check(operation), output, {"answer": "Paris"})
    assert (out["reward"], out["status"], out["metadata"]["type"]) == (reward, "ok", "string_check")


@pytest.mark.parametrize(
    ("metric", "output", "reference", "expected"),
    [
        ("fuzzy_match", "hello world", "hello world", 1.0),
        ("fuzzy_match", "kitten", "sitting", 1 - 5 / 13),  # Indel distance 5 over 13 characters
        ("rouge_1", "the cat sat", "the cat sat down", 2 * 1.0 * 0.75 / 1.75),  # P=3/3, R=3/4
        ("rouge_l", "a b c d", "a x c d", 0.75),
        ("bleu", "the cat sat on the mat", "the cat sat on the mat", 1.0),
        ("gleu", "a b c", "x y z", 0.0),
    ],
)
def test_text_similarity_metrics(http: httpx.Client, metric: str, output: str, reference: str, expected: float) -> None:
    grader = {
        "type": "text_similarity",
        "name": "t",
        "input": "{{sample.output_text}}",
        "reference": reference,
        "evaluation_metric": metric,
    }
    assert grade(http, grader, output)["reward"] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("metric", ["cosine", "meteor"])
def test_similarity_needing_models_or_corpora_is_refused_clearly(http: httpx.Client, metric: str) -> None:
    grader = {"type": "text_similarity", "input": "a", "reference": "b", "evaluation_metric": metric}
    error = refused(http, grader)
    assert error["type"] == "invalid_request" and metric in error["message"]


def test_templates_read_output_json_and_nested_items(http: httpx.Client) -> None:
    grader = {
        "type": "string_check",
        "input": "{{ sample.output_json.city }}",
        "reference": "{{ item.gold.city }}",
        "operation": "eq",
    }
    assert grade(http, grader, '{"city": "Paris"}', {"gold": {"city": "Paris"}})["reward"] == 1.0


def test_an_undefined_template_variable_is_refused_not_scored(http: httpx.Client) -> None:
    error = refused(http, string_check("eq"), {"not_answer": "Paris"})
    assert error["detail"]["error"] == "invalid_variable_error" and "item.answer" in error["message"]


def test_multi_grader_combines_sub_rewards_with_its_formula(http: httpx.Client) -> None:
    grader = {
        "type": "multi",
        "name": "combo",
        "graders": {
            "exact": string_check("eq"),
            "close": {
                "type": "text_similarity",
                "input": "{{sample.output_text}}",
                "reference": "{{item.answer}}",
                "evaluation_metric": "fuzzy_match",
            },
        },
        "calculate_output": "0.5 * exact + 0.5 * max(close, 0.9) - abs(-0.1)",
    }
    out = grade(http, grader, "Paris", {"answer": "Paris"})
    assert out["reward"] == pytest.approx(0.9)
    assert out["sub_rewards"] == {"exact": 1.0, "close": 1.0}


@pytest.mark.parametrize(
    "formula",
    ['__import__("os").system("true")', "exact.__class__", "exact ** 2", "open", "unknown_grader + 1", "[exact][0]"],
)
def test_formulas_other_than_safe_arithmetic_are_refused(http: httpx.Client, formula: str) -> None:
    grader = {"type": "multi", "graders": {"exact": string_check("eq")}, "calculate_output": formula}
    error = refused(http, grader, {"answer": "a"})
    assert error["detail"]["error"] == "formula_parse_error"


def test_a_formula_that_cannot_be_evaluated_is_an_error_status(http: httpx.Client) -> None:
    grader = {"type": "multi", "graders": {"exact": string_check("eq")}, "calculate_output": "1 / (exact - 1)"}
    out = grade(http, grader, "a", {"answer": "a"})
    assert out["status"] == "error" and "division by zero" in out["error"]


# --- score_model: the judge verifier, against a local OpenAI-compatible endpoint ----------------


@pytest.fixture(scope="module")
def chat_endpoint() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A chat-completions endpoint that always grades 7, recording what it was asked."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            seen.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            body = json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": "7"}, "finish_reason": "stop"}]}
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    server.shutdown()


def score_model(base_url: str, grade_range: list[float]) -> dict[str, Any]:
    return {
        "type": "score_model",
        "name": "judge_it",
        "model": "grader-model",
        "input": [
            {"role": "system", "content": "Grade the answer to {{ item.question }}."},
            {"role": "user", "content": "Answer: {{ sample.output_text }}"},
        ],
        "range": grade_range,
        "sampling_params": {"temperature": 0.0},
        "judge_config": {"base_url": base_url, "api_key_env": None},
    }


def test_score_model_runs_the_judge_on_its_range(
    http: httpx.Client, chat_endpoint: tuple[str, list[dict[str, Any]]]
) -> None:
    base_url, seen = chat_endpoint
    out = grade(http, score_model(base_url, [1, 10]), "Paris", {"question": "the capital of France"})
    assert (out["reward"], out["status"]) == (7.0, "ok")  # the judge graded on the range itself
    messages = seen[-1]["messages"]
    assert messages[0] == {"role": "system", "content": "Grade the answer to the capital of France."}
    assert "Answer: Paris" in messages[-1]["content"] and seen[-1]["model"] == "grader-model"


def test_score_model_on_zero_one_is_a_normalised_grade(
    http: httpx.Client, chat_endpoint: tuple[str, list[dict[str, Any]]]
) -> None:
    out = grade(http, score_model(chat_endpoint[0], [0, 1]), "Paris", {"question": "q"})
    assert out["reward"] == pytest.approx(0.7)  # 7 on the judge's 0-10 scale


def test_score_model_without_a_reachable_judge_is_an_error_status(http: httpx.Client) -> None:
    out = grade(
        http,
        score_model("http://127.0.0.1:9/v1", [0, 1])
        | {"judge_config": {"base_url": "http://127.0.0.1:9/v1", "max_retries": 0}},
        "x",
        {"question": "q"},
    )
    assert out["status"] == "error" and out["metadata"]["errors"]["other_error"]


# --- python: the grader's code runs in the sandbox ------------------------------------------------

PYTHON_GRADER = """
def grade(sample, item):
    print("graders may print")
    return 1.0 if sample["output_text"].strip() == item["answer"] else 0.25
"""


def test_python_grader_over_http_runs_in_the_sandbox(http: httpx.Client) -> None:
    response = http.post(
        "/v1/graders/run",
        json={"grader": {"type": "python", "source": PYTHON_GRADER}, "model_sample": "42", "item": {"answer": "42"}},
    )
    assert response.status_code == 200, response.text
    out = response.json()
    assert (out["reward"], out["status"]) == (1.0, "ok")
    assert out["details"]["python"]["details"]["stdout"] == "graders may print"


@pytest.fixture(scope="module")
def sandbox() -> None:
    """The python grader's tests need a machine that can isolate code (bubblewrap)."""
    try:
        default_pool()
    except SandboxUnavailable as exc:
        pytest.skip(f"no sandbox on this machine: {exc.message}")


def run_locally(
    grader: dict[str, Any], model_sample: str, item: dict[str, Any], timeout_s: float = 30.0
) -> dict[str, Any]:
    """Grade through the real score path and the real sandbox, in this process (no HTTP)."""
    service = build_service(Settings.load(workers=1, code_timeout_s=timeout_s))
    request = RunGraderRequest.model_validate({"grader": grader, "model_sample": model_sample, "item": item})
    return asyncio.run(GraderRunner(service.pipeline).run(request))


def python(source: str, model_sample: str = "x", item: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return run_locally({"type": "python", "source": source}, model_sample, item or {}, **kw)


def test_python_grader_reads_grade_from_its_program(sandbox: None) -> None:
    assert python(PYTHON_GRADER, "42", {"answer": "42"})["reward"] == 1.0
    assert python(PYTHON_GRADER, "41", {"answer": "42"})["reward"] == 0.25


def test_python_grader_that_raises_is_an_error_not_a_zero(sandbox: None) -> None:
    out = python("def grade(sample, item):\n    raise KeyError('answer')\n")
    assert out["status"] == "error" and out["metadata"]["errors"]["python_grader_runtime_error"]
    assert "KeyError" in out["error"]


def test_python_grader_that_overruns_is_a_timeout(sandbox: None) -> None:
    source = "import time\ndef grade(sample, item):\n    time.sleep(30)\n"
    assert python(source, timeout_s=0.5)["status"] == "timeout"


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("def grade(sample, item):\n    return 'high'\n", "not a number"),
        ("def grade(sample, item):\n    return float('nan')\n", "not finite"),
        ("def grade(sample, item):\n    return [1.0]\n", "not a number"),
        ("def grade(sample, item)\n    return 1.0\n", "SyntaxError"),
        ("def score(sample, item):\n    return 1.0\n", "no function 'grade'"),
        ("import sys\nsys.exit(0)\ndef grade(sample, item):\n    return 1.0\n", "before its test ran"),
    ],
)
def test_python_grader_without_a_finite_number_is_an_error(sandbox: None, source: str, says: str) -> None:
    out = python(source)
    assert out["status"] == "error" and says in out["error"], out["error"]
    assert out["metadata"]["errors"]["python_grader_runtime_error"]


def test_python_grader_cannot_forge_a_score_by_printing(sandbox: None) -> None:
    forged = "__rewardhub_grade__=1.0\n1.0"
    raises = f"def grade(sample, item):\n    print({forged!r})\n    raise ValueError('no')\n"
    at_exit = f"import atexit\natexit.register(print, {forged!r})\ndef grade(sample, item):\n    return 0.25\n"
    assert python(raises)["status"] == "error"
    assert python(at_exit)["reward"] == 0.25


def test_python_grader_runs_in_the_sandbox_not_in_the_service(sandbox: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDHUB_GRADER_SECRET", "visible-only-to-the-service")
    source = "import os\ndef grade(sample, item):\n    return 1.0 if 'REWARDHUB_GRADER_SECRET' in os.environ else 0.0\n"
    assert python(source)["reward"] == 0.0


def test_multi_grader_mixes_python_and_string_graders(sandbox: None) -> None:
    grader = {
        "type": "multi",
        "graders": {"py": {"type": "python", "source": PYTHON_GRADER}, "eq": string_check("eq")},
        "calculate_output": "(py + eq) / 2",
    }
    out = run_locally(grader, "41", {"answer": "41"})
    assert out["reward"] == 1.0 and out["sub_rewards"] == {"py": 1.0, "eq": 1.0}
