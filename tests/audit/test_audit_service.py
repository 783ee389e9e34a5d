"""``rewardhub audit`` and ``POST /v1/audit`` give the numbers ``POST /v1/score`` gives on the same cases."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from rewardhub.audit import load_corpus
from rewardhub.cli import main

CASES = [
    {"id": "half", "response": "So it is \\boxed{\\frac{1}{2}}", "reference": "0.5", "expected": True},
    {"id": "pm", "response": "\\boxed{\\pm 3}", "reference": "3", "expected": False},
    {"id": "interval", "response": "\\boxed{3 < x \\leq 4}", "reference": "(3,4]", "expected": True},
    {"id": "wrong", "response": "The answer is 5.", "reference": "6", "expected": False},
    {"id": "noanswer", "response": "I do not know.", "reference": "6", "expected": True},
    {"id": "nogold", "response": "\\boxed{1}", "reference": None, "expected": True},  # an error status, listed as FN
    {"id": "sure-0.7", "response": "\\boxed{0.7}", "reference": "0.7", "expected": 1.0},
    # a label the verifier disagrees with by policy (the problem asked for a common fraction)
    {"id": "form", "response": "\\boxed{0.5}", "reference": "\\frac{1}{2}", "expected": False},
    {"id": "chat", "messages": [{"role": "assistant", "content": "\\boxed{12}"}], "reference": "12", "expected": True},
]


def as_sample(case: dict) -> dict:
    response = case.get("response", (case.get("messages") or [{}])[-1].get("content"))
    return {"id": case["id"], "response": response, "reference": case["reference"]}


def counted(results: list[dict], labels: list[bool]) -> dict:
    """Precision, recall and accuracy computed from /v1/score results, by hand."""
    accepted = [r["status"] == "ok" and r["score"] >= 1.0 for r in results]
    tp = sum(a and y for a, y in zip(accepted, labels, strict=True))
    fp = sum(a and not y for a, y in zip(accepted, labels, strict=True))
    fn = sum(not a and y for a, y in zip(accepted, labels, strict=True))
    return {
        "precision": tp / (tp + fp),
        "recall": tp / (tp + fn),
        "accuracy": sum(a == y for a, y in zip(accepted, labels, strict=True)) / len(labels),
        "false_positives": [c["id"] for c, a, y in zip(CASES, accepted, labels, strict=True) if a and not y],
        "false_negatives": [c["id"] for c, a, y in zip(CASES, accepted, labels, strict=True) if y and not a],
    }


@pytest.fixture(scope="module")
def scored(http: httpx.Client) -> dict:
    """What /v1/score says about the cases and the math exploits."""
    exploits = [e.model_dump(include={"id", "response", "reference"}) for e in load_corpus("math")]
    body = {"verifier": "math", "samples": [as_sample(c) for c in CASES] + exploits}
    reply = http.post("/v1/score", json=body)
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    return {
        "cases": counted(results[: len(CASES)], [bool(c["expected"]) for c in CASES]),
        "exploits": {r["id"]: (r["score"], r["status"]) for r in results[len(CASES) :]},
    }


def summary(report: dict) -> dict:
    return {
        "cases": {
            "precision": report["precision"],
            "recall": report["recall"],
            "accuracy": report["accuracy"],
            "false_positives": [e["id"] for e in report["false_positives"]],
            "false_negatives": [e["id"] for e in report["false_negatives"]],
        },
        "exploits": {e["id"]: (e["score"], e["status"]) for e in report["exploits"]["cases"]},
    }


@pytest.fixture(scope="module")
def cases_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("audit") / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["audit", *args])
    return code, capsys.readouterr().out


def test_post_audit_equals_post_score(http: httpx.Client, scored: dict) -> None:
    reply = http.post("/v1/audit", json={"verifier": "math", "cases": CASES})
    assert reply.status_code == 200, reply.text
    report = reply.json()
    assert report["verifier"] == "math" and report["n"] == len(CASES)
    assert summary(report) == scored
    assert report["exploits"]["tried"] == len(load_corpus("math")) and report["exploits"]["rewarded"] == 0
    nogold = next(e for e in report["false_negatives"] if e["id"] == "nogold")
    assert nogold["status"] == "error" and "reference" in nogold["error"]


def test_cli_in_process_equals_post_score(capsys: pytest.CaptureFixture[str], cases_file: Path, scored: dict) -> None:
    code, out = run_cli(capsys, "math", "--cases", str(cases_file), "--json", "--workers", "1")
    assert code == 0
    assert summary(json.loads(out)) == scored


def test_cli_through_a_server_equals_post_score(
    capsys: pytest.CaptureFixture[str], cases_file: Path, service_url: str, scored: dict
) -> None:
    code, out = run_cli(capsys, "math", "--cases", str(cases_file), "--json", "--url", service_url)
    assert code == 0
    assert summary(json.loads(out)) == scored


def test_text_report_lists_false_positives_first_then_exploits(
    capsys: pytest.CaptureFixture[str], cases_file: Path, service_url: str
) -> None:
    code, out = run_cli(capsys, "math", "--cases", str(cases_file), "--url", service_url)
    assert code == 0
    assert "precision" in out and "recall" in out and "accuracy" in out
    listed = out.index("false positives (wrong responses accepted): 1")
    assert listed < out.index("false negatives: 2") < out.index("exploits (rewarded first)")
    assert "- form [equivalent (number)]" in out
    assert "- nogold [error: gold_unparseable]" in out or "- nogold [error]" in out


def test_plot_draws_a_png(
    capsys: pytest.CaptureFixture[str], cases_file: Path, service_url: str, tmp_path: Path
) -> None:
    out_png = tmp_path / "audit.png"
    code, _ = run_cli(capsys, "math", "--cases", str(cases_file), "--url", service_url, "--plot", str(out_png))
    assert code == 0
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out_png.stat().st_size > 10_000


LENIENT_PLUGIN = '''
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig


class LenientMath(Verifier):
    """Accepts any response that mentions the gold: the kind of checker an audit exists to catch."""

    name = "lenient_math"
    exploit_corpus = "math"

    def score(self, sample: Sample, config: VerifierConfig) -> Result:
        return Result.ok(float(str(sample.reference) in sample.response))
'''


def test_a_plugin_is_audited_like_a_builtin_and_its_leaks_show(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plugin = tmp_path / "lenient.py"
    plugin.write_text(LENIENT_PLUGIN)
    args = ("lenient_math", "--plugin", str(plugin), "--json", "--workers", "1")
    code, out = run_cli(capsys, *args, "--fail-on-exploit")
    report = json.loads(out)
    assert code == 1
    assert report["exploits"]["tried"] == len(load_corpus("math"))
    leaked = {e["id"] for e in report["exploits"]["cases"] if e["rewarded"]}
    assert {"math/boxed-spam", "math/plus-minus", "math/one-or-two"} <= leaked
    assert report["exploits"]["cases"][0]["rewarded"]  # the leaks come first


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"verifier": "math", "cases": [{"response": "1", "reference": "1"}]}, 422),  # no expected
        ({"verifier": "math", "cases": [{"reference": "1", "expected": True}]}, 422),  # no response
        ({"verifier": "no_such_verifier", "cases": []}, 404),
        ({"verifier": {"name": "math", "config": {"strict": "very"}}, "cases": []}, 422),
        ({"verifier": "math", "cases": [], "exploits": ["nonsense"]}, 422),
        ({"verifier": "math", "cases": [], "surprise": True}, 422),
    ],
)
def test_bad_audit_requests_are_4xx_and_the_service_keeps_serving(http: httpx.Client, body: dict, status: int) -> None:
    reply = http.post("/v1/audit", json=body)
    assert reply.status_code == status, reply.text
    assert set(reply.json()["error"]) >= {"type", "message"}
    assert http.post("/v1/audit", json={"verifier": "exact", "cases": []}).status_code == 200


def test_malformed_json_is_400(http: httpx.Client) -> None:
    reply = http.post("/v1/audit", content=b"{not json", headers={"content-type": "application/json"})
    assert reply.status_code == 400


def test_cli_refuses_a_bad_cases_file_with_its_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"response": "1", "reference": "1", "expected": "maybe"}\n')
    assert main(["audit", "math", "--cases", str(bad)]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


def test_cases_and_exploits_together_over_the_sample_limit_are_413(http: httpx.Client) -> None:
    cases = [{"response": "1", "reference": "1", "expected": True}] * 4990  # + 30 math exploits > 5000
    reply = http.post("/v1/audit", json={"verifier": "math", "cases": cases})
    assert reply.status_code == 413, reply.text
    assert reply.json()["error"]["detail"] == {"limit": 5000}
    assert http.post("/v1/audit", json={"verifier": "math", "cases": cases, "exploits": []}).status_code == 200


def test_a_verifier_only_the_server_knows_is_audited_through_it(
    capsys: pytest.CaptureFixture[str], service_url: str, tmp_path: Path
) -> None:
    cases = tmp_path / "sleepy.jsonl"
    cases.write_text(json.dumps({"response": "0", "reference": None, "expected": True}) + "\n")
    code, out = run_cli(capsys, "test_sleepy", "--cases", str(cases), "--url", service_url, "--json")
    report = json.loads(out)
    assert code == 0 and report["n"] == 1 and report["recall"] == 1.0
    assert report["exploits"]["tried"] == 0  # a rule verifier of no known family faces no corpus


def test_an_unreachable_server_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "math", "--url", "http://127.0.0.1:9"]) == 2
    assert "audit through http://127.0.0.1:9 failed" in capsys.readouterr().err
