"""implicit_prm: r_t = β·(log π_φ − log π_ref) per response token; exactly 0 when π_φ = π_ref."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from rewardhub.models.implicit_prm import ImplicitPRM
from rewardhub.types import Sample

SAMPLE = Sample(prompt="Add 2 and 3.", response="2+3 = 5.\n\nSo the answer is 5.")


def response_logprobs(path: str, prompt: str, response: str) -> list[float]:
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    head = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
    )
    prompt_ids = tokenizer(head, add_special_tokens=False).input_ids
    ids = torch.tensor([prompt_ids + tokenizer(response, add_special_tokens=False).input_ids])
    with torch.no_grad():
        logprobs = model(ids).logits[0, :-1].log_softmax(-1).gather(-1, ids[0, 1:, None])[:, 0]
    return logprobs[len(prompt_ids) - 1 :].tolist()


def test_same_model_gives_exactly_zero(tiny_models: dict[str, str]) -> None:
    path = tiny_models["causal"]
    result = ImplicitPRM().score(SAMPLE, ImplicitPRM.Config(model=path, ref_model=path))
    assert result.status == "ok"
    assert result.score == 0.0
    assert result.steps and set(result.steps) == {0.0}


def test_identical_weights_loaded_twice_give_exactly_zero(tiny_models: dict[str, str]) -> None:
    cfg = ImplicitPRM.Config(
        model=tiny_models["causal"], ref_model=tiny_models["causal_copy"], granularity="step", aggregate="sum"
    )
    result = ImplicitPRM().score(SAMPLE, cfg)
    assert result.score == 0.0 and set(result.steps or []) == {0.0}


def test_token_rewards_are_beta_times_the_log_ratio(tiny_models: dict[str, str]) -> None:
    policy, ref = tiny_models["causal"], tiny_models["causal_other"]
    result = ImplicitPRM().score(SAMPLE, ImplicitPRM.Config(model=policy, ref_model=ref, beta=0.5))
    by_hand = [
        0.5 * (p - r)
        for p, r in zip(
            response_logprobs(policy, SAMPLE.prompt_text(), SAMPLE.response),
            response_logprobs(ref, SAMPLE.prompt_text(), SAMPLE.response),
            strict=True,
        )
    ]
    assert len(result.steps or []) == len(SAMPLE.response)  # one token per character
    assert result.steps == pytest.approx(by_hand, abs=1e-5)
    assert result.score == pytest.approx(min(by_hand), abs=1e-5)


def test_step_rewards_sum_the_token_rewards_of_each_step(tiny_models: dict[str, str]) -> None:
    base = {"model": tiny_models["causal"], "ref_model": tiny_models["causal_other"]}
    tokens = ImplicitPRM().score(SAMPLE, ImplicitPRM.Config(**base)).steps or []
    steps = ImplicitPRM().score(SAMPLE, ImplicitPRM.Config(**base, granularity="step", aggregate="sum"))
    cut = SAMPLE.response.index("So")  # the second step starts here; the blank line belongs to the first
    assert steps.steps == pytest.approx([sum(tokens[:cut]), sum(tokens[cut:])], abs=1e-6)
    assert steps.score == pytest.approx(sum(tokens), abs=1e-6)


def test_padding_does_not_change_rewards(tiny_models: dict[str, str]) -> None:
    cfg = ImplicitPRM.Config(model=tiny_models["causal"], ref_model=tiny_models["causal_other"])
    alone = ImplicitPRM().score(SAMPLE, cfg).steps
    longer = Sample(prompt="Add 2 and 3, carefully and slowly.", response=SAMPLE.response * 3)
    in_batch = ImplicitPRM().score_batch([longer, SAMPLE], cfg)[1].steps
    assert in_batch == pytest.approx(alone, abs=1e-5)


def test_an_empty_response_is_an_error(tiny_models: dict[str, str]) -> None:
    path = tiny_models["causal"]
    [result] = ImplicitPRM().score_batch(
        [Sample(prompt="hi", response="")], ImplicitPRM.Config(model=path, ref_model=path)
    )
    assert result.status == "error"
