"""Prompt records, tokenisation, and the seeded, resumable prompt stream."""

import json

import pytest

from rewardhub.trainer.char_tokenizer import build_char_tokenizer
from rewardhub.trainer.config import DataConfig
from rewardhub.trainer.data import DataError, PromptStream, StreamPosition, load_records, tokenize_prompt


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_jsonl_records_keep_their_fields(tmp_path):
    train = write(tmp_path / "t.jsonl", [{"prompt": "1+1=", "reference": "2", "verifier": "math", "id": 7}])
    [record] = load_records(DataConfig(train=train), "train")
    assert (record.prompt, record.reference, record.verifier, record.id) == ("1+1=", "2", "math", "7")
    assert load_records(DataConfig(train=train), "eval") == []


def test_bad_records_are_reported_with_their_place(tmp_path):
    broken = tmp_path / "t.jsonl"
    broken.write_text('{"prompt": "a"}\nnot json\n')
    with pytest.raises(DataError, match="t.jsonl:2"):
        load_records(DataConfig(train=str(broken)), "train")
    with pytest.raises(DataError, match="unknown fields"):
        load_records(DataConfig(train=write(tmp_path / "u.jsonl", [{"prompt": "a", "answer": 1}])), "train")


def build(split):
    return [{"prompt": f"{split}-{i}", "reference": str(i)} for i in range(3)]


def test_a_python_builder_replaces_the_files():
    records = load_records(DataConfig(builder="test_prompt_data:build"), "eval")
    assert [r.prompt for r in records] == ["eval-0", "eval-1", "eval-2"]


def test_prompts_are_tokenised_and_overlong_ones_refused():
    tokenizer = build_char_tokenizer()
    assert tokenize_prompt(tokenizer, "1+2=", 10) == [1, 5, 14, 6, 15]
    with pytest.raises(DataError, match="max_prompt_tokens"):
        tokenize_prompt(tokenizer, "1+2=", 3)


def test_the_stream_is_seeded_covers_each_epoch_and_resumes(tmp_path):
    records = load_records(DataConfig(builder="test_prompt_data:build"), "train")
    stream = PromptStream(records, seed=3)
    first = [r.index for r in stream.take(2)] + [r.index for r in stream.take(2)]
    assert sorted(first[:3]) == [0, 1, 2]  # the first epoch is a permutation
    assert stream.position == StreamPosition(epoch=1, offset=1)
    again = PromptStream(records, seed=3)
    assert [r.index for r in again.take(4)] == first
    resumed = PromptStream(records, seed=3)
    resumed.position = StreamPosition(epoch=1, offset=1)
    assert [r.index for r in resumed.take(2)] == [r.index for r in again.take(2)]
