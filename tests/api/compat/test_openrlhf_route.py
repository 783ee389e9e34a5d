"""OpenRLHF's /get_reward, the server side, read the way OpenRLHF 0.11 reads it.

OpenRLHF makes a tensor of every value it gets back: ``torch.as_tensor`` on each shard's lists and
``torch.cat`` across shards on its batched path; ``torch.tensor([value])`` per key on its current
single-sample path. Those two readers are in tests/openrlhf_support.py; the
trainer side (``reward_func``, OpenRLHF's own executor) is tested in tests/integrations/test_openrlhf.py.
"""

from __future__ import annotations

import httpx
import pytest
from openrlhf_support import get_reward, read_batched, read_single

from rewardhub.api.compat.openrlhf import openrlhf_answer, split_query, strip_special_tokens
from rewardhub.types import Result


@pytest.mark.parametrize(
    ("query", "prompt", "response"),
    [
        ("Q: 2+2? 4", "Q: 2+2? ", "4"),
        ("<|endoftext|><|endoftext|>Q: 2+2? 4<|im_end|><|endoftext|>", "Q: 2+2? ", "4"),  # left padding, EOS
        ("what is 2+2? Answer: 4</s>", "Question: what is 2+2? Answer: ", "4"),  # prompt truncated on the left
        ("<s>[INST] hi [/INST] hello</s>", "[INST] hi [/INST]", " hello"),
        ("no prompt given", "", "no prompt given"),
        ("4 <｜end▁of▁sentence｜>", "", "4"),
    ],
)
def test_split_query_recovers_the_response(query: str, prompt: str, response: str) -> None:
    assert split_query(query, prompt) == response


def test_strip_special_tokens_leaves_ordinary_text_alone() -> None:
    assert strip_special_tokens("a < b and c > d ") == "a < b and c > d "
    assert strip_special_tokens("x<|im_end|>\n<|endoftext|>") == "x"


def test_batched_answer_reads_as_openrlhf_tensors(composite_url: str) -> None:
    prompts = ["Q: ", "Q: "]
    shards = [
        get_reward(composite_url, ["Q: <think>ok</think>42", "Q: 41"], prompts, ["42", "42"]),
        get_reward(composite_url, ["Q: <think>ok</think>7"], ["Q: "], ["7"]),
    ]
    merged = read_batched(shards)
    assert merged["rewards"].tolist() == pytest.approx([1.0, 0.0, 1.0])
    assert merged["component/exact"].tolist() == [1.0, 0.0, 1.0]
    assert merged["component/format"].tolist() == [1.0, 0.0, 1.0]
    assert merged["status/ok"].tolist() == [1.0, 1.0, 1.0]


def test_single_sample_answer_reads_as_openrlhf_tensors(composite_url: str) -> None:
    answer = get_reward(composite_url, ["Q: <think>hm</think>42<|im_end|>"], ["Q: "], ["42"])
    info = read_single(answer)
    assert info["reward"].item() == pytest.approx(1.0)
    assert info["component/exact"].item() == 1.0 and info["status/ok"].item() == 1.0


def test_scores_are_clipped_to_zero_one_for_dynamic_filtering() -> None:
    answer = openrlhf_answer([Result.ok(2.0), Result.ok(-1.0), Result.ok(0.5)])
    assert answer["rewards"] == [2.0, -1.0, 0.5] and answer["scores"] == [1.0, 0.0, 0.5]


def test_a_sample_that_cannot_be_judged_says_so_in_every_channel(composite_url: str) -> None:
    answer = get_reward(composite_url, ["Q: 42", "Q: 42"], ["Q: ", "Q: "], ["42", None])
    assert answer["status"] == ["ok", "error"]
    assert answer["rewards"][1] == 0.0  # the failure score, flagged as such:
    assert answer["extra_logs"]["status/error"] == [0.0, 1.0]
    assert "exact" in answer["error"][1]
    read_batched([answer])  # and still one tensor per key


def test_the_body_may_name_the_verifier_which_openrlhf_itself_never_sends(composite_url: str) -> None:
    response = httpx.post(
        f"{composite_url}/get_reward",
        json={
            "query": ["Q: Paris", "Q: paris"],
            "prompts": ["Q: ", "Q: "],
            "labels": ["Paris", "Paris"],
            "verifier": {"name": "exact", "config": {"case_sensitive": True}},
        },
        timeout=60,
    )
    assert response.status_code == 200 and response.json()["rewards"] == [1.0, 0.0]


def test_a_bad_body_is_a_422_and_the_route_keeps_serving(composite_url: str) -> None:
    bad = httpx.post(f"{composite_url}/get_reward", json={"query": ["a", "b"], "prompts": ["a"]}, timeout=60)
    assert bad.status_code == 422 and "differ in length" in bad.text
    assert get_reward(composite_url, ["Q: 42"], ["Q: "], ["42"])["status"] == ["ok"]
