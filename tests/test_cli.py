"""``rewardhub score`` scores a file offline through the same execution pool."""

from __future__ import annotations

import json
import subprocess
import sys


def test_score_writes_one_result_per_line_in_order(tmp_path):
    data = tmp_path / "data.jsonl"
    rows = [
        {"response": "B", "answer": "B"},
        {"response": "The answer is (C)", "answer": "B"},
        {"response": "x", "answer": "?"},
        {"messages": [{"role": "user", "content": "Which?"}, {"role": "assistant", "content": "B"}], "answer": "B"},
    ]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rewardhub.cli",
            "score",
            str(data),
            "--verifier",
            "choice",
            "--reference-field",
            "answer",
            "--workers",
            "1",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in results] == ["1", "2", "3", "4"]
    assert [r["score"] for r in results] == [1.0, 0.0, 0.0, 1.0]  # a conversation: its last assistant turn
    assert [r["status"] for r in results] == ["ok", "ok", "error", "ok"]
    assert "1 error, 3 ok" in proc.stdout


def test_score_reports_an_unknown_verifier_clearly(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"response": "x"}\n')
    proc = subprocess.run(
        [sys.executable, "-m", "rewardhub.cli", "score", str(data), "--verifier", "nope"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "unknown verifier 'nope'" in proc.stderr
