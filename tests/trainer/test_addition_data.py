"""The addition examples' data: the committed files are the generator's, and held-out pairs are never trained on."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "data"


def _generator():
    spec = importlib.util.spec_from_file_location("make_addition_data", ROOT / "examples" / "make_addition_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ids(name: str) -> list[str]:
    return [json.loads(line)["id"] for line in (DATA / name).read_text().splitlines()]


def test_the_committed_files_are_what_the_generator_writes(tmp_path: Path) -> None:
    _generator().main(["--out", str(tmp_path)])
    for name in ("addition_train.jsonl", "addition_eval.jsonl", "smollm2_addition_train.jsonl",
                 "smollm2_addition_eval.jsonl"):
        assert (tmp_path / name).read_text() == (DATA / name).read_text(), name


def test_two_digit_held_out_pairs_are_never_trained_on() -> None:
    train, held_out = _ids("smollm2_addition_train.jsonl"), _ids("smollm2_addition_eval.jsonl")
    assert len(train) == len(set(train)) == 1000 and len(held_out) == 64
    assert not set(train) & set(held_out)
    [record] = [json.loads(line) for line in (DATA / "smollm2_addition_eval.jsonl").read_text().splitlines()][:1]
    a, b = (int(x) for x in record["id"].split("+"))
    assert record["reference"] == str(a + b) and 10 <= a <= 99 and 10 <= b <= 99
    assert record["prompt"] == [{"role": "user", "content": f"What is {a} + {b}? Reply with only the number."}]
