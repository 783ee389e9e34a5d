"""`rewardhub-train plot` draws whatever the run logged."""

import json

import pytest

from rewardhub.trainer.plot import plot_run


def test_plot_writes_a_png_from_metrics_and_evals(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": s, "reward/mean": s / 10, "actor/entropy": 2 - s / 10}) + "\n" for s in range(1, 6))
    )
    (tmp_path / "eval.jsonl").write_text(json.dumps({"step": 0, "eval/reward_mean": 0.0}) + "\n")
    out = plot_run(tmp_path)
    assert out == tmp_path / "curves.png"
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_plot_without_metrics_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="metrics"):
        plot_run(tmp_path)
