"""`rewardhub-train plot` draws whatever the run logged: one panel per group of metrics that has
data, two panels a row."""

import json
import struct

import pytest

from rewardhub.trainer.plot import plot_run

PANEL_ROW_PX = 352  # a row of panels is 3.2 inches at 110 dpi


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the PNG header's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def write_metrics(run, keys):
    (run / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": s, **{k: s / 10 for k in keys}}) + "\n" for s in range(1, 6))
    )


def test_plot_writes_a_png_from_metrics_and_evals(tmp_path):
    write_metrics(tmp_path, ["reward/mean", "actor/entropy"])
    (tmp_path / "eval.jsonl").write_text(json.dumps({"step": 0, "eval/reward_mean": 0.0}) + "\n")
    out = plot_run(tmp_path)
    assert out == tmp_path / "curves.png"
    assert png_size(out.read_bytes()) == (1210, PANEL_ROW_PX)  # reward (with the evals) and entropy: one row


def test_a_third_group_with_data_adds_a_row(tmp_path):
    write_metrics(tmp_path, ["reward/mean", "actor/entropy", "actor/grad_norm"])
    assert png_size(plot_run(tmp_path).read_bytes())[1] == 2 * PANEL_ROW_PX


def test_plot_without_metrics_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="metrics"):
        plot_run(tmp_path)
