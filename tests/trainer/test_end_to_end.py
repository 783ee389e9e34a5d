"""The whole path, with no TRL and no mocks: the CLI, an embedded rewardhub service over HTTP,
the `exact` verifier, metrics on disk, and the plot."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from rewardhub.trainer.cli import EXIT_CONFIG, EXIT_SERVICE, main

ONE_TOKEN_ANSWERS = ["", *"0123456789+="]
"""Every answer a policy given one new token can write: a character of the toy alphabet, or
nothing (an end-of-sequence or other special token decodes to "")."""


@pytest.fixture
def config_file(tmp_path, make_config):
    """Starts its own embedded service, as a newcomer's first run would.

    Each step draws all four prompts. Two accept every one-token answer, so half the samples are
    known to score 1; the other two accept only their sum.
    """
    known = tmp_path / "known.jsonl"
    records = [
        {"prompt": "1+2=", "reference": ONE_TOKEN_ANSWERS},
        {"prompt": "2+2=", "reference": ONE_TOKEN_ANSWERS},
        {"prompt": "3+4=", "reference": "7"},
        {"prompt": "5+4=", "reference": "9"},
    ]
    known.write_text("".join(json.dumps(r) + "\n" for r in records))
    cfg = make_config(
        steps=3,
        data={"train": str(known)},
        rollout={"max_new_tokens": 1},
        reward={"embedded": True, "verifier": "exact"},
        eval={"every": 2, "samples_per_prompt": 2},
        debug={"dump": True},
    )
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    return path


def exact(response: str, reference: str | list[str]) -> float:
    """What `exact` must answer here: the toy alphabet has no letters, spaces or punctuation it
    ignores, so its normalised match is string equality with the reference or one of its aliases."""
    return float(response in (reference if isinstance(reference, list) else [reference]))


@pytest.fixture
def url_config_file(tmp_path, make_config, service_url):
    """Points at an already running service (the suite's shared one, tests/conftest.py)."""
    cfg = make_config(reward={"url": service_url, "verifier": "exact"})
    path = tmp_path / "train_url.yaml"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    return path


@pytest.mark.integration  # a training run against a service it starts
def test_train_against_the_embedded_service_then_plot(config_file, tmp_path, capsys):
    run = tmp_path / "cli_run"
    assert main([str(config_file), f"output_dir={run}", "rollout.group_size=4", "--quiet"]) == 0
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]
    for row in rows:
        assert row["reward/ok_frac"] == 1.0  # every sample judged by the service
        assert row["reward/verifier/exact/count"] == 16
        samples = [json.loads(line) for line in (run / "debug" / f"step_{row['step']:06d}.jsonl").open()]
        expected = [exact(s["response"], s["reference"]) for s in samples]
        assert [s["reward_score"] for s in samples] == expected  # the service's verdict on each sample
        assert sum(expected) >= 8  # the two prompts that accept any answer
        assert row["reward/mean"] == pytest.approx(sum(expected) / 16)
    assert "eval/reward_mean" in rows[1] and "eval/reward_mean" in rows[2]
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert saved["output_dir"] == str(run) and saved["reward"]["embedded"] is True

    assert main(["plot", str(run)]) == 0
    png = (run / "curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_dry_run_checks_the_service_and_the_verifier(url_config_file, capsys):
    assert main([str(url_config_file), "--dry-run", "--quiet"]) == 0
    assert "dry run ok" in capsys.readouterr().err
    assert main([str(url_config_file), "--dry-run", "--quiet", "reward.verifier=no_such_verifier"]) == EXIT_SERVICE


def test_dry_run_reports_an_unreachable_service(url_config_file, capsys):
    code = main([str(url_config_file), "--dry-run", "--quiet", "reward.url=http://127.0.0.1:9", "reward.max_retries=0"])
    assert code == EXIT_SERVICE
    assert "unreachable" in capsys.readouterr().err


def test_a_bad_config_is_refused_before_anything_runs(config_file, capsys):
    assert main([str(config_file), "rollout.group_sise=4"]) == EXIT_CONFIG
    assert "group_sise" in capsys.readouterr().err


@pytest.mark.integration  # a training run against a service it starts
def test_sigterm_stops_a_run_cleanly(tmp_path, make_config):
    cfg = make_config(steps=100_000, reward={"embedded": True, "verifier": "exact"}, data={"eval": None})
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    run = subprocess.Popen(
        [sys.executable, "-m", "rewardhub.trainer.cli", str(path), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    metrics = Path(cfg.output_dir) / "metrics.jsonl"
    deadline = time.monotonic() + 120
    while not (metrics.exists() and metrics.read_text().count("\n") >= 2):
        assert run.poll() is None and time.monotonic() < deadline, "the run did not get going"
        time.sleep(0.2)
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=60) == 128 + signal.SIGTERM  # unwound through SystemExit, not killed outright
    rows = [json.loads(line) for line in metrics.read_text().splitlines()]  # every written line is whole
    assert rows and rows[-1]["step"] == len(rows)


def test_a_service_that_goes_missing_mid_run_is_reported_not_a_traceback(url_config_file, capsys):
    code = main([str(url_config_file), "--quiet", "reward.url=http://127.0.0.1:9", "reward.max_retries=0"])
    assert code == EXIT_SERVICE
    err = capsys.readouterr().err
    assert "reward service error at step 1" in err and "cannot reach" in err
