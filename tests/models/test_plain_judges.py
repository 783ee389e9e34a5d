"""A judge for a base model: ``chat_template: false`` asks with one plain prompt ending in ``Answer:``.

A base model (Gemma 3 270M in the model kit) has no chat template; its judge prompt is the same
instruction as plain text, sent as a completion (``/v1/completions`` over HTTP, ``LLM.generate``
on vLLM, the tokenizer's own BOS on transformers). Verdict words are offered after a space (the
text after a colon runs on that way), grades follow a prompt that ends in the space; the verdict
is read by ``choices`` or ``logprobs`` only, and nothing falls back to a chat.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from rm_fake_judge import FakeJudge

from rewardhub.models import Judge, PairwiseJudge, RubricJudge
from rewardhub.models.backends import ChatRequest, get_backend
from rewardhub.models.backends.generation import chat_replies
from rewardhub.models.config import BackendSpec
from rewardhub.models.errors import BackendError
from rewardhub.types import Sample

RIGHT = Sample(prompt="What is 7 + 5?", reference="12", response="So it is \\boxed{12}")


def plain(judge: FakeJudge, cls: type = Judge, **extra: Any) -> Any:
    options = {"model": "gemma", "base_url": judge.url, "api_key_env": None, "chat_template": False}
    return cls.Config(**{**options, **extra})


def test_a_plain_prompt_is_a_completion_ending_in_the_cue(fake_judge: FakeJudge) -> None:
    fake_judge.responder = lambda body: (" True", [(" True", -0.1), (" False", -2.4)])
    [result] = Judge().score_batch([RIGHT], plain(fake_judge, verdict="logprobs", system_prompt="Be strict."))
    [body] = fake_judge.requests
    assert fake_judge.paths == ["/v1/completions"] and "messages" not in body
    assert body["prompt"].startswith("Be strict.\n\nYou are an AI tasked with identifying false negatives")
    assert "<model_answer>12</model_answer>" in body["prompt"]
    assert body["prompt"].endswith("True or False, and nothing else.\n\nAnswer:")
    assert body["logprobs"] == 20 and body["max_tokens"] == 1  # the legacy protocol's number of alternatives
    assert result.status == "ok" and result.score == pytest.approx(1 / (1 + 2.718281828**-2.3), abs=1e-6)
    assert result.details["model"]["decoding"]["prompt"] == "plain"


def test_plain_choices_carry_the_space_the_cue_runs_on_with(fake_judge: FakeJudge) -> None:
    fake_judge.responder = lambda body: " False"
    [result] = Judge().score_batch([RIGHT], plain(fake_judge, verdict="choices"))
    assert fake_judge.requests[0]["guided_choice"] == [" True", " False"]
    assert result.status == "ok" and result.score == 0.0


def test_a_plain_grade_follows_a_prompt_that_ends_in_the_space(fake_judge: FakeJudge) -> None:
    """Digit-splitting tokenizers write "Answer: 7" as ":", " ", "7": the grade is the next token."""
    fake_judge.responder = lambda body: ("7", [("7", -0.1), ("8", -2.0)])
    config = plain(fake_judge, mode="grade", verdict="logprobs", scale=(0, 9))
    [result] = Judge().score_batch([RIGHT], config)
    assert fake_judge.requests[0]["prompt"].endswith("\n\nAnswer: ")
    assert result.status == "ok" and 7.0 < result.details["grade"] < 8.0


def test_pairwise_and_rubric_ask_plainly_too(fake_judge: FakeJudge) -> None:
    fake_judge.responder = lambda body: " A"
    group = [RIGHT, RIGHT.model_copy(update={"response": "\\boxed{13}"})]
    results = PairwiseJudge().score_group(group, plain(fake_judge, PairwiseJudge, verdict="choices"))
    assert [r.status for r in results] == ["ok", "ok"]
    assert {body["guided_choice"] == [" A", " B", " tie"] for body in fake_judge.requests} == {True}
    assert set(fake_judge.paths) == {"/v1/completions"}
    fake_judge.reset(lambda body: " True")
    rubric = RIGHT.model_copy(update={"reference": [{"criterion": "States 12", "weight": 1}]})
    [result] = RubricJudge().score_batch([rubric], plain(fake_judge, RubricJudge, verdict="choices"))
    assert result.status == "ok" and result.score == 1.0
    assert fake_judge.requests[0]["prompt"].endswith("\n\nAnswer:")


def test_a_plain_prompt_cannot_be_read_from_its_last_line() -> None:
    """A base model runs on past its verdict (another question, another answer): refused at once."""
    with pytest.raises(ValidationError, match="'choices' or 'logprobs'"):
        Judge.Config(model="gemma", backend="transformers", chat_template=False)


def test_a_request_carries_chat_messages_or_a_plain_prompt_never_both() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ChatRequest((("user", "hi"),), prompt="hi")
    with pytest.raises(ValueError, match="exactly one"):
        ChatRequest(())


def test_transformers_tokenizes_a_plain_prompt_with_its_own_specials(tiny_models: dict[str, str]) -> None:
    """Tokenized as the tokenizer tokenizes text (a base model's BOS first: tests/models/test_gemma_judge.py)."""
    backend = get_backend(BackendSpec(backend="transformers", model=tiny_models["causal"]))
    seen: list[list[int]] = []
    real = backend.token_logprobs

    def spy(batch: Any, starts: Any, batch_size: int) -> Any:
        seen.extend(list(seq[:start]) for seq, start in zip(batch, starts, strict=True))
        return real(batch, starts, batch_size)

    backend.token_logprobs = spy  # type: ignore[method-assign]
    try:
        [reply] = chat_replies(backend, [ChatRequest((), choices=(" True", " False"), prompt="Is 1 < 2?\n\nAnswer:")])
    finally:
        del backend.token_logprobs
    tokenizer = backend.tokenizer
    assert not isinstance(reply, Exception) and reply.text in (" True", " False")
    assert seen == [tokenizer("Is 1 < 2?\n\nAnswer:").input_ids] * 2


def test_a_chat_request_without_a_chat_template_is_an_error_naming_the_option(tiny_models: dict[str, str]) -> None:
    from transformers import AutoTokenizer

    backend = get_backend(BackendSpec(backend="transformers", model=tiny_models["causal"]))
    tokenizer = AutoTokenizer.from_pretrained(tiny_models["causal"])
    tokenizer.chat_template = None  # a base model's checkpoint
    saved, backend._tokenizer = backend._tokenizer, tokenizer
    try:
        [chat, completion] = backend.chat(
            [ChatRequest((("user", "hi"),), max_tokens=2), ChatRequest((), max_tokens=2, top_logprobs=2, prompt="hi")]
        )
    finally:
        backend._tokenizer = saved
    assert isinstance(chat, BackendError) and "set chat_template=false" in str(chat)
    assert not isinstance(completion, Exception) and completion.logprobs is not None
