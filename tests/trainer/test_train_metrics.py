"""The metrics table and the writer."""

import json

from rewardhub.trainer.metrics import METRICS, MetricsWriter, describe_metric, format_metrics_table


def test_every_metric_is_namespaced_and_described():
    for name, meaning in METRICS.items():
        assert "/" in name, name
        assert len(meaning) > 20, name


def test_families_match_per_verifier_names():
    assert describe_metric("reward/verifier/exact/mean") == METRICS["reward/verifier/{name}/mean"]
    assert describe_metric("eval/verifier/math/mean") == METRICS["eval/verifier/{name}/mean"]
    assert describe_metric("reward/made_up") is None


def test_table_renders_as_markdown():
    table = format_metrics_table()
    assert table.splitlines()[0] == "| metric | meaning |"
    assert "`actor/entropy`" in table


def test_writer_appends_rows_and_truncates_on_resume(tmp_path):
    writer = MetricsWriter(tmp_path)
    for step in (1, 2, 3):
        writer.write({"step": step, "reward/mean": step / 10, "actor/grad_norm": float("nan")})
    writer.truncate_after(2)
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    assert rows[0]["actor/grad_norm"] is None  # NaN is not JSON; it is written as null
