"""The transformers backend in batches: padding never changes an answer, a batch that runs out of
GPU memory is split instead of failed, and judges generate side by side, left-padded."""

from __future__ import annotations

import pytest
import torch

from rewardhub.models.backends import ChatRequest, get_backend
from rewardhub.models.backends.chunking import run_in_chunks, split_rows
from rewardhub.models.backends.generation import cut_at_eos, eos_token_ids
from rewardhub.models.backends.padding import left_pad, longest_first, right_pad
from rewardhub.models.config import BackendSpec
from rewardhub.models.errors import BackendError

# different lengths, so every batch below pads
SEQS = [[5, 6, 7, 8, 9, 10, 11, 12], [13, 14, 15], [16, 17, 18, 19, 20], [21, 22], [23, 24, 25, 26, 27, 28]]


def backend(path: str):
    return get_backend(BackendSpec(backend="transformers", model=path, device="cpu"))


def test_right_and_left_padding_put_the_real_tokens_on_their_side() -> None:
    ids, mask = right_pad([[1, 2, 3], [4]], pad_id=0)
    assert ids.tolist() == [[1, 2, 3], [4, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    ids, mask = left_pad([[1, 2, 3], [4]], pad_id=0)
    assert ids.tolist() == [[1, 2, 3], [0, 0, 4]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    assert longest_first([[1], [1, 2, 3], [1, 2], [4, 5, 6]]) == [1, 3, 2, 0]


def test_token_logprobs_in_a_padded_batch_equal_one_sequence_at_a_time(tiny_models: dict[str, str]) -> None:
    b = backend(tiny_models["causal"])
    starts = [3, 1, 4, 1, 6]
    together = b.token_logprobs(SEQS, starts, batch_size=3)
    for seq, start, got in zip(SEQS, starts, together, strict=True):
        [alone] = b.token_logprobs([seq], [start], batch_size=1)
        assert len(got) == len(seq) - start
        assert got == pytest.approx(alone, abs=1e-5)


def test_token_logprobs_are_the_full_forward_pass_log_softmax(tiny_models: dict[str, str]) -> None:
    b = backend(tiny_models["causal"])
    [got] = b.token_logprobs([SEQS[0]], [2], batch_size=1)
    ids = torch.tensor([SEQS[0]])
    with torch.no_grad():
        full = b.model("causal")(ids).logits[0, :-1].log_softmax(-1).gather(-1, ids[0, 1:, None])[:, 0]
    assert got == pytest.approx(full[1:].tolist(), abs=1e-5)


def test_step_probabilities_in_a_padded_batch_equal_one_sequence_at_a_time(tiny_models: dict[str, str]) -> None:
    tag = 7  # appears in some rows only, at different positions
    rows = [[5, 7, 6, 7], [7, 8], [9, 10, 11, 12, 7, 13, 7, 7], [14, 15]]
    for path, call in (
        (tiny_models["causal"], lambda b, batch, size: b.step_token_probs(batch, tag, [20, 21], size)),
        (tiny_models["prm"], lambda b, batch, size: b.step_label_probs(batch, tag, size)),
    ):
        b = backend(path)
        together = call(b, rows, 4)
        assert [len(r) for r in together] == [2, 1, 3, 0]
        for seq, got in zip(rows, together, strict=True):
            [alone] = call(b, [seq], 1)
            assert [p for step in got for p in step] == pytest.approx([p for step in alone for p in step], abs=1e-5)
            assert all(sum(p) == pytest.approx(1.0) for p in got)


def test_chunks_that_run_out_of_memory_are_halved_until_they_fit() -> None:
    tried: list[list[int]] = []
    released: list[bool] = []

    def attempt(rows: list[int]) -> list[int]:
        tried.append(rows)
        if len(rows) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return [10 * r for r in rows]

    done = run_in_chunks([4, 3, 2, 1, 0], 8, attempt, lambda force=False: released.append(force), str)
    assert done == {r: 10 * r for r in range(5)}
    assert tried == [[4, 3, 2, 1, 0], [4, 3], [2, 1], [0]]
    assert released == [True]


def test_one_sequence_that_does_not_fit_is_an_error_naming_it() -> None:
    def attempt(rows: list[int]) -> list[int]:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")

    with pytest.raises(BackendError, match="out of GPU memory on item 3"):
        run_in_chunks([3, 1], 2, attempt, lambda force=False: None, lambda rows: f"item {rows[0]}")


def test_a_model_that_runs_out_of_memory_on_big_batches_still_answers_every_sample(
    tiny_models: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    b = get_backend(BackendSpec(backend="transformers", model=tiny_models["outcome"], device="cpu", dtype="float32"))
    expected = b.classify(SEQS, batch_size=8)
    model = b.model("sequence")
    forward = type(model.base_model).forward
    batches: list[int] = []

    def small_batches_only(self, input_ids=None, **kwargs):
        batches.append(input_ids.shape[0])
        if input_ids.shape[0] > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return forward(self, input_ids=input_ids, **kwargs)

    monkeypatch.setattr(type(model.base_model), "forward", small_batches_only)
    got = b.classify(SEQS, batch_size=8)
    assert [row[0] for row in got] == pytest.approx([row[0] for row in expected], abs=1e-5)
    assert batches == [5, 2, 2, 1]


def test_split_rows_cuts_in_order() -> None:
    assert split_rows([1, 2, 3, 4, 5], [2, 0, 3]) == [[1, 2], [], [3, 4, 5]]
    with pytest.raises(ValueError):
        split_rows([1, 2], [3])


def test_a_reply_ends_at_its_first_end_token() -> None:
    assert cut_at_eos([4, 5, 2, 0, 0], eos=[2, 3]) == ([4, 5, 2], True)
    assert cut_at_eos([4, 5, 6], eos=[2]) == ([4, 5, 6], False)
    assert cut_at_eos([3], eos=[2, 3]) == ([3], True)


def test_end_tokens_are_the_generation_configs_and_the_tokenizers(tiny_models: dict[str, str]) -> None:
    b = backend(tiny_models["causal"])
    model = b.model("causal")
    assert eos_token_ids(model, b.tokenizer) == [b.tokenizer.eos_token_id]

    class Chat:
        class generation_config:  # noqa: N801 - the attribute name transformers uses
            eos_token_id = [7, 9]

    assert eos_token_ids(Chat(), b.tokenizer) == sorted({7, 9, b.tokenizer.eos_token_id})


QUESTIONS = [
    "Is 2+2=4? Answer True or False.",
    "1+1?",
    "What is the capital of France? Think step by step, then answer with one word.",
    "?",
]


def test_batched_greedy_generation_equals_one_prompt_at_a_time(tiny_models: dict[str, str]) -> None:
    b = backend(tiny_models["causal"])
    requests = [ChatRequest((("user", q),), max_tokens=12, top_logprobs=3) for q in QUESTIONS]
    together = b.chat(requests)
    for request, got in zip(requests, together, strict=True):
        [alone] = b.chat([request])
        assert not isinstance(got, Exception) and not isinstance(alone, Exception)
        assert got.text == alone.text and got.finish_reason == alone.finish_reason
        assert got.logprobs is not None and alone.logprobs is not None and len(got.logprobs) == len(alone.logprobs)
        for step_got, step_alone in zip(got.logprobs, alone.logprobs, strict=True):
            assert [t for t, _ in step_got] == [t for t, _ in step_alone]
            assert [lp for _, lp in step_got] == pytest.approx([lp for _, lp in step_alone], abs=1e-4)


def test_choices_for_many_requests_in_one_pass_equal_one_at_a_time(tiny_models: dict[str, str]) -> None:
    b = backend(tiny_models["causal"])
    requests = [ChatRequest((("user", q),), choices=("True", "False", "Maybe not")) for q in QUESTIONS]
    together = b.chat(requests)
    assert [r.text for r in together] == [b.chat([r])[0].text for r in requests]  # type: ignore[union-attr]


def test_mixed_requests_each_get_their_own_kind_of_reply(tiny_models: dict[str, str]) -> None:
    b = backend(tiny_models["causal"])
    free, chosen, probed, sampled = b.chat(
        [
            ChatRequest((("user", QUESTIONS[0]),), max_tokens=5),
            ChatRequest((("user", QUESTIONS[1]),), choices=("True", "False")),
            ChatRequest((("user", QUESTIONS[2]),), max_tokens=1, top_logprobs=4),
            ChatRequest((("user", QUESTIONS[3]),), max_tokens=6, temperature=1.0),
        ]
    )
    assert not isinstance(free, Exception) and free.logprobs is None and free.finish_reason in ("stop", "length")
    assert not isinstance(chosen, Exception) and chosen.text in ("True", "False")
    assert not isinstance(probed, Exception) and probed.logprobs is not None and len(probed.logprobs[0]) == 4
    assert not isinstance(sampled, Exception) and isinstance(sampled.text, str)


def test_a_request_that_cannot_be_rendered_fails_alone(tiny_models: dict[str, str], tmp_path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_models["causal"])
    tokenizer.chat_template = None
    b = backend(tiny_models["causal"])
    b._tokenizer = tokenizer  # a checkpoint shipped without a chat template
    [reply] = b.chat([ChatRequest((("user", "hi"),), max_tokens=2)])
    assert isinstance(reply, BackendError) and "chat template" in str(reply)
