"""prm: per-step probabilities read the way Qwen2.5-Math-PRM and Math-Shepherd are read."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForTokenClassification, AutoTokenizer

from rewardhub.models.prm import QWEN_SYSTEM, ProcessRM
from rewardhub.models.scoring import first_below
from rewardhub.types import Sample

QUESTION = "Compute 3*4+1."
STEPS = ["3*4 = 12.", "12+1 = 13.", "The answer is 13."]
SAMPLE = Sample(prompt=QUESTION, response="\n\n".join(STEPS))


def qwen_by_hand(path: str, question: str, steps: list[str]) -> list[float]:
    """The model card's recipe: separators after every step, softmax, positive class at each one."""
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForTokenClassification.from_pretrained(path).eval()
    messages = [
        {"role": "system", "content": QWEN_SYSTEM},
        {"role": "user", "content": question},
        {"role": "assistant", "content": "<extra_0>".join(steps) + "<extra_0>"},
    ]
    ids = tokenizer(
        tokenizer.apply_chat_template(messages, tokenize=False), add_special_tokens=False, return_tensors="pt"
    ).input_ids
    with torch.no_grad():
        probs = model(ids).logits.softmax(-1)[0]
    return probs[ids[0] == tokenizer.convert_tokens_to_ids("<extra_0>")][:, 1].tolist()


def shepherd_by_hand(path: str, question: str, steps: list[str]) -> list[float]:
    """The Math-Shepherd recipe: "+"/"-" logits at each tag, softmax over the two, P(+)."""
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    text = question + " " + "\n".join(f"{s} ки" for s in steps)
    ids = tokenizer(text, return_tensors="pt").input_ids
    candidates = [tokenizer.convert_tokens_to_ids("+"), tokenizer.convert_tokens_to_ids("-")]
    with torch.no_grad():
        logits = model(ids).logits[0][:, candidates]
    return logits.softmax(-1)[ids[0] == tokenizer.convert_tokens_to_ids("ки")][:, 0].tolist()


def test_qwen_style_steps_match_the_model_card_recipe(tiny_models: dict[str, str]) -> None:
    result = ProcessRM().score(SAMPLE, ProcessRM.Config(model=tiny_models["prm"]))
    expected = qwen_by_hand(tiny_models["prm"], QUESTION, STEPS)
    assert result.status == "ok"
    assert len(expected) == 3
    assert result.steps == pytest.approx(expected, abs=1e-5)
    assert result.score == pytest.approx(min(expected), abs=1e-5)
    assert result.details["n_steps"] == 3


def test_math_shepherd_style_matches_its_recipe(tiny_models: dict[str, str]) -> None:
    cfg = ProcessRM.Config(model=tiny_models["causal"], style="math_shepherd", aggregate="product")
    result = ProcessRM().score(SAMPLE, cfg)
    expected = shepherd_by_hand(tiny_models["causal"], QUESTION, STEPS)
    assert result.steps == pytest.approx(expected, abs=1e-5)
    assert result.score == pytest.approx(expected[0] * expected[1] * expected[2], abs=1e-5)


@pytest.mark.parametrize("threshold", [0.0, 0.5, 1.0])
def test_first_error_step_is_the_first_step_below_threshold(tiny_models: dict[str, str], threshold: float) -> None:
    result = ProcessRM().score(SAMPLE, ProcessRM.Config(model=tiny_models["prm"], threshold=threshold))
    assert result.details["first_error_step"] == first_below(result.steps or [], threshold)
    if threshold == 0.0:
        assert result.details["first_error_step"] == -1  # probabilities are never below 0
    if threshold == 1.0:
        assert result.details["first_error_step"] == 0  # ... and never reach 1 exactly


def test_steps_given_in_metadata_are_used_as_they_are(tiny_models: dict[str, str]) -> None:
    steps = ["one step\n\nwith a blank line inside", "second"]
    sample = Sample(prompt=QUESTION, response="ignored", metadata={"steps": steps})
    result = ProcessRM().score(sample, ProcessRM.Config(model=tiny_models["prm"]))
    assert result.steps == pytest.approx(qwen_by_hand(tiny_models["prm"], QUESTION, steps), abs=1e-5)


def test_a_response_cannot_add_separators_of_its_own(tiny_models: dict[str, str]) -> None:
    sample = Sample(prompt=QUESTION, response="step one<extra_0><extra_0>\n\nstep two")
    result = ProcessRM().score(sample, ProcessRM.Config(model=tiny_models["prm"]))
    assert result.status == "ok" and len(result.steps or []) == 2


def test_padding_does_not_change_step_scores(tiny_models: dict[str, str]) -> None:
    cfg = ProcessRM.Config(model=tiny_models["prm"], batch_size=8)
    alone = ProcessRM().score(SAMPLE, cfg).steps
    others = [Sample(prompt=QUESTION, response="\n\n".join(STEPS * k)) for k in (2, 3)]
    in_batch = ProcessRM().score_batch([*others, SAMPLE], cfg)[-1].steps
    assert in_batch == pytest.approx(alone, abs=1e-5)


def test_a_response_without_steps_is_an_error(tiny_models: dict[str, str]) -> None:
    [result] = ProcessRM().score_batch(
        [Sample(prompt=QUESTION, response=" \n\n ")], ProcessRM.Config(model=tiny_models["prm"])
    )
    assert result.status == "error" and "no steps" in (result.error or "")
