"""``rewardhub audit VERIFIER --cases FILE --repeat N``: a verifier's run-to-run spread, cache off.

A greedy judge on one backend repeats itself exactly; a sampled judge does not, and the report
says how far it moves and how many rounds its mean needs. The rounds go through the service's
scoring path with the reward cache off even where the settings cache that verifier: a cached
verdict would repeat itself and hide the spread.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rewardhub.audit.repeat import repeat_report, repeat_text, repeats_for_precision
from rewardhub.cli import main
from rewardhub.types import Result

COIN_PLUGIN = '''
import random

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig


class Coin(Verifier):
    """Pays a fresh random number each time: the least repeatable verifier there is."""

    name = "coin"

    def score(self, sample: Sample, config: VerifierConfig) -> Result:
        return Result.ok(random.random())
'''

CASES = [
    {"id": "sum", "prompt": "What is 7 + 5?", "response": "7 + 5 = 12. The answer is 12.", "reference": "12", "expected": True},
    {"id": "wrong", "prompt": "What is 7 + 5?", "response": "7 + 5 = 13. The answer is 13.", "reference": "12", "expected": False},
    {"id": "product", "prompt": "What is 6 * 4?", "response": "6 * 4 = 24.", "reference": "24", "expected": True},
]


def write_cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["audit", *args])
    return code, capsys.readouterr().out


# ---- the statistics ------------------------------------------------------------------------


def test_a_verifier_that_never_moves_has_spread_zero_and_needs_one_round() -> None:
    table = [[Result.ok(1.0), Result.ok(0.0)] for _ in range(4)]
    report = repeat_report(["a", "b"], table)
    assert (report["max_spread"], report["max_sd"], report["cases_that_moved"]) == (0.0, 0.0, 0)
    assert report["verdict_flips"] == 0 and report["rounds_for_precision"] == 1


def test_a_case_that_moves_reports_its_range_its_flips_and_the_rounds_a_mean_needs() -> None:
    table = [[Result.ok(1.0), Result.ok(0.5)], [Result.ok(0.0), Result.ok(0.5)]]
    report = repeat_report(["coin", "steady"], table, threshold=1.0, precision=0.1)
    coin, steady = report["cases"]
    assert coin["scores"] == [1.0, 0.0] and coin["spread"] == 1.0 and coin["sd"] == 0.5 and coin["verdict_flips"]
    assert steady["spread"] == 0.0 and not steady["verdict_flips"]
    assert report["verdict_flips"] == 1 and report["cases_that_moved"] == 1
    assert report["rounds_for_precision"] == repeats_for_precision(0.5, 0.1) == 97  # (1.96 * 0.5 / 0.1)^2


def test_a_round_that_errs_is_shown_and_counts_as_movement() -> None:
    table = [[Result.ok(1.0)], [Result.failed("judge reply unreadable")]]
    [case] = repeat_report(["x"], table)["cases"]
    assert case["scores"] == [1.0] and case["errors"] == ["judge reply unreadable"]
    assert repeat_report(["x"], table)["cases_that_moved"] == 1


def judged(score: float, temperature: float) -> Result:
    """A verdict as a model judge signs it: its verdict key and ``details.model`` with the decoding."""
    decoding = {"verdict": "last_line", "temperature": temperature, "max_tokens": 32}
    model = {"name": "smollm2-135m-instruct", "backend": "transformers", "dtype": "float32", "decoding": decoding}
    key = {"verifier": "judge", "version": "1", "config_hash": f"t{temperature}"}
    return Result.ok(score, model=model, verdict_key=key)


def test_the_report_names_the_judge_and_its_decoding_once_however_many_rounds() -> None:
    table = [[judged(1.0, 1.0), judged(0.0, 1.0)] for _ in range(3)]
    report = repeat_report(["a", "b"], table)
    [judge] = report["judges"]
    assert judge["model"]["decoding"]["temperature"] == 1.0 and judge["verdict_key"]["config_hash"] == "t1.0"
    assert '"temperature": 1.0' in repeat_text(report)


def test_two_decodings_in_one_table_show_as_two_judges() -> None:
    """A spread between a greedy and a sampled judge is not one judge's spread: the report shows both."""
    table = [[judged(1.0, 0.0)], [judged(0.0, 1.0)]]
    decodings = [j["model"]["decoding"]["temperature"] for j in repeat_report(["a"], table)["judges"]]
    assert decodings == [0.0, 1.0]


# ---- through the service's scoring path -------------------------------------------------------


def test_repeat_runs_with_the_cache_off_even_where_the_settings_cache_the_verifier(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = tmp_path / "coin.py"
    plugin.write_text(COIN_PLUGIN)
    monkeypatch.setenv("REWARDHUB_CACHE_VERIFIERS", "coin")
    monkeypatch.setenv("REWARDHUB_CACHE_BACKEND", "memory")
    args = ("coin", "--plugin", str(plugin), "--cases", str(write_cases(tmp_path)), "--workers", "1")
    code, out = run_cli(capsys, *args, "--repeat", "3", "--json")
    report = json.loads(out)
    assert code == 0 and report["rounds"] == 3 and report["n"] == 3
    assert all(len(case["scores"]) == 3 for case in report["cases"])
    assert report["cases_that_moved"] == 3  # a cached verdict would have come back unchanged
    assert report["rounds_for_precision"] > 1
    assert [judge["verdict_key"]["verifier"] for judge in report["judges"]] == ["coin"]


@pytest.mark.parametrize("args", [("--repeat", "3"), ("--repeat", "1", "--cases", "CASES")])
def test_repeat_without_cases_or_with_one_round_is_refused(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = tuple(str(write_cases(tmp_path)) if a == "CASES" else a for a in args)
    assert main(["audit", "math", *args]) == 2
    assert "--repeat" in capsys.readouterr().err


# ---- a real judge ---------------------------------------------------------------------------

MODEL = "smollm2-135m-instruct"


@pytest.fixture(scope="module")
def installed() -> None:
    from rewardhub.models import kit

    if kit.installed_manifest(MODEL) is None:
        message = f"{MODEL} is not installed: run `rewardhub models install {MODEL}` (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.slow
def test_a_greedy_judge_on_a_real_model_repeats_itself_exactly(
    installed: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = json.dumps({"model": MODEL, "backend": "transformers", "verdict": "logprobs", "temperature": 0.0})
    args = ("judge", "--config", config, "--cases", str(write_cases(tmp_path)), "--workers", "1")
    code, out = run_cli(capsys, *args, "--repeat", "3", "--json", "--threshold", "0.5")
    report = json.loads(out)
    print(json.dumps({k: v for k, v in report.items() if k != "cases"}))
    assert code == 0 and all(len(case["scores"]) == 3 for case in report["cases"])
    assert report["max_spread"] == 0.0 and report["verdict_flips"] == 0
