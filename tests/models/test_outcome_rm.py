"""outcome_rm: the head's logit at the conversation's last token, raw or normalised."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from rewardhub.models.outcome_rm import OutcomeRM
from rewardhub.types import ChatMessage, Sample

PROMPT = "What is 2+2?"


def config(path: str, **extra: object) -> OutcomeRM.Config:
    return OutcomeRM.Config(model=path, **extra)


def by_hand(path: str, prompt: str, response: str) -> float:
    """What a user would write with transformers: template, tokenize, one forward pass."""
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}], tokenize=False
    )
    ids = tokenizer(text, add_special_tokens=False, return_tensors="pt").input_ids
    with torch.no_grad():
        return model(ids).logits[0, 0].item()


def test_score_is_the_reward_models_logit(tiny_models: dict[str, str]) -> None:
    result = OutcomeRM().score(Sample(prompt=PROMPT, response="4"), config(tiny_models["outcome"]))
    assert result.status == "ok"
    assert result.score == pytest.approx(by_hand(tiny_models["outcome"], PROMPT, "4"), abs=1e-5)
    assert result.details["raw"] == result.score


def test_chat_prompts_and_string_prompts_agree(tiny_models: dict[str, str]) -> None:
    verifier, cfg = OutcomeRM(), config(tiny_models["outcome"])
    as_text = verifier.score(Sample(prompt=PROMPT, response="4"), cfg)
    as_chat = verifier.score(Sample(prompt=[ChatMessage(role="user", content=PROMPT)], response="4"), cfg)
    assert as_chat.score == as_text.score


def test_a_trajectory_is_scored_whole_tool_results_included(tiny_models: dict[str, str]) -> None:
    """The reward model reads the conversation through its chat template, not only the final text."""
    verifier, cfg = OutcomeRM(), config(tiny_models["outcome"])
    call = {"id": "c", "type": "function", "function": {"name": "calc", "arguments": '{"e": "2+2"}'}}

    def trajectory(tool_output: str) -> Sample:
        turns = [
            {"role": "user", "content": PROMPT},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": tool_output},
            {"role": "assistant", "content": "4"},
        ]
        return Sample.model_validate({"messages": turns})

    tokenizer = AutoTokenizer.from_pretrained(tiny_models["outcome"])
    model = AutoModelForSequenceClassification.from_pretrained(tiny_models["outcome"]).eval()
    turns = [
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": ""},
        {"role": "tool", "content": "4"},
        {"role": "assistant", "content": "4"},
    ]
    ids = tokenizer(tokenizer.apply_chat_template(turns, tokenize=False), add_special_tokens=False, return_tensors="pt")
    with torch.no_grad():
        expected = model(ids.input_ids).logits[0, 0].item()
    first, second = verifier.score(trajectory("4"), cfg), verifier.score(trajectory("5"), cfg)
    assert first.score == pytest.approx(expected, abs=1e-5)  # the tiny template prints roles and contents
    assert first.score != second.score  # the tool's output is part of what is scored


def test_padding_does_not_change_a_score(tiny_models: dict[str, str]) -> None:
    verifier, cfg = OutcomeRM(), config(tiny_models["outcome"], batch_size=8)
    short = Sample(prompt=PROMPT, response="4")
    alone = verifier.score(short, cfg).score
    batch = [Sample(prompt=PROMPT, response="4 " + "because " * k) for k in range(1, 6)] + [short]
    in_batch = verifier.score_batch(batch, cfg)[-1].score
    assert in_batch == pytest.approx(alone, abs=1e-5)


def test_normalisations_are_functions_of_the_raw_logit(tiny_models: dict[str, str]) -> None:
    sample, path = Sample(prompt=PROMPT, response="4"), tiny_models["outcome"]
    raw = OutcomeRM().score(sample, config(path)).score
    standard = OutcomeRM().score(sample, config(path, normalize="standardize", mean=0.1, std=2.0)).score
    squashed = OutcomeRM().score(sample, config(path, normalize="sigmoid", mean=0.1, std=2.0)).score
    assert standard == pytest.approx((raw - 0.1) / 2.0)
    assert squashed == pytest.approx(1 / (1 + math.exp(-(raw - 0.1) / 2.0)))


def test_a_too_long_sample_fails_alone(tiny_models: dict[str, str]) -> None:
    cfg = config(tiny_models["outcome"], max_length=64)
    results = OutcomeRM().score_batch(
        [Sample(prompt=PROMPT, response="x" * 200), Sample(prompt=PROMPT, response="4")], cfg
    )
    assert results[0].status == "error" and "max_length" in (results[0].error or "")
    assert results[1].status == "ok"


def test_a_missing_model_is_an_error_not_a_score(tmp_path: object) -> None:
    from rewardhub.calls import Call, run_call
    from rewardhub.registry import Registry

    call = Call("outcome_rm", config(str(tmp_path) + "/nothing-here"), (Sample(response="4"),), "model", 60.0)
    [result] = run_call(Registry([OutcomeRM]), call)
    assert result.status == "error" and "cannot load" in (result.error or "")
