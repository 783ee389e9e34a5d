"""TRL: reward functions with TRL's signature, scored by a real service, and a real GRPOTrainer run."""

from __future__ import annotations

import asyncio
import math
import pickle
from pathlib import Path

import pytest

from rewardhub.integrations.trl import async_reward_func, build_samples, completion_text, reward_func

BAD_REFERENCE = {"not": "a string"}  # `exact` cannot judge against this: an error status


def test_plain_completions_are_scored_with_the_solution_column(service_url: str) -> None:
    score = reward_func("exact", url=service_url)
    rewards = score(prompts=["1+1=", "2+2="], completions=["2", "5"], completion_ids=[[1], [2]], solution=["2", "4"])
    assert rewards == [1.0, 0.0]


def test_a_sample_the_verifier_cannot_judge_is_none_not_zero(service_url: str) -> None:
    score = reward_func("exact", url=service_url)
    rewards = score(prompts=["q", "q"], completions=["a", "a"], completion_ids=None, answer=["a", BAD_REFERENCE])
    assert rewards == [1.0, None]


def test_conversational_completions_score_the_assistant_text(service_url: str) -> None:
    prompts = [[{"role": "user", "content": "Capital of France?"}]] * 2
    completions = [
        [{"role": "assistant", "content": "Paris"}],
        [{"role": "assistant", "content": [{"type": "text", "text": "Lyon"}]}],
    ]
    score = reward_func("exact", url=service_url)
    assert score(prompts=prompts, completions=completions, completion_ids=None, reference=["paris", "paris"]) == [
        1.0,
        0.0,
    ]


def test_reference_key_picks_the_column() -> None:
    samples = build_samples(["p"], ["x"], {"solution": ["s"], "gold": ["g"]}, reference_key="gold")
    assert samples[0].reference == "g"
    with pytest.raises(KeyError):
        build_samples(["p"], ["x"], {"solution": ["s"]}, reference_key="gold")


def test_reference_columns_are_read_in_documented_order() -> None:
    samples = build_samples(["p"], ["x"], {"answer": ["from answer"], "solution": ["from solution"]})
    assert samples[0].reference == "from solution"


def test_completions_of_one_prompt_share_a_group() -> None:
    samples = build_samples(["a", "a", "b", "b"], ["1", "2", "3", "4"], {})
    assert [s.group for s in samples] == ["0", "0", "1", "1"]


def test_completion_text_reads_only_assistant_messages() -> None:
    conversation = [{"role": "tool", "content": "42"}, {"role": "assistant", "content": "The answer is 42."}]
    assert completion_text(conversation) == "The answer is 42."
    assert completion_text("plain") == "plain"


def test_status_rates_and_components_go_to_trls_log_metric(service_url: str) -> None:
    metrics: dict[str, float] = {}
    columns: dict[str, list[str]] = {}
    spec = {"sum": [{"verifier": "exact", "weight": 0.5}, {"verifier": "format", "weight": 0.5}]}
    score = reward_func(spec, url=service_url, name="combo")
    rewards = score(
        prompts=["q", "q"],
        completions=["<think>x</think>a", "b"],
        completion_ids=None,
        reference=["a", "a"],
        log_metric=metrics.__setitem__,
        log_extra=columns.__setitem__,
    )
    assert rewards == [1.0, 0.0]
    assert metrics["combo/status/ok"] == 1.0
    assert metrics["combo/component/exact"] == 0.5  # one of the two matched
    assert metrics["combo/component/format"] == 0.5
    assert columns["combo_status"] == ["ok", "ok"]


def test_the_function_is_named_for_trls_logs_and_pickles(service_url: str) -> None:
    score = reward_func("exact", url=service_url)
    assert score.__name__ == "rewardhub_exact"
    score(prompts=["q"], completions=["a"], completion_ids=None, reference=["a"])  # creates the HTTP client
    copy = pickle.loads(pickle.dumps(score))
    assert copy(prompts=["q"], completions=["a"], completion_ids=None, reference=["a"]) == [1.0]


def test_async_twin_answers_the_same(service_url: str) -> None:
    score = async_reward_func("exact", url=service_url)
    rewards = asyncio.run(
        score(prompts=["q", "q"], completions=["a", "b"], completion_ids=None, reference=["a", BAD_REFERENCE])
    )
    assert rewards == [1.0, None]
    assert asyncio.run(score(prompts=["q"], completions=["b"], completion_ids=None, reference=["b"])) == [
        1.0
    ]  # a new loop


def test_an_unknown_verifier_raises_instead_of_scoring(service_url: str) -> None:
    from rewardhub.client import ClientError

    score = reward_func("no_such_verifier", url=service_url)
    with pytest.raises(ClientError) as caught:
        score(prompts=["q"], completions=["a"], completion_ids=None, reference=["a"])
    assert caught.value.status_code == 404


# --- a real GRPOTrainer ---------------------------------------------------------------------------


def _tiny_model_and_tokenizer(root: Path) -> tuple[str, str]:
    """A 2-layer Qwen2 with hidden size 32 and a character tokenizer, saved locally (no downloads)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    specials = ["<pad>", "</s>", "<unk>"]
    alphabet = "0123456789+= ab"
    vocab = {token: i for i, token in enumerate(specials + list(alphabet))}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    backend.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", padding_side="left"
    )
    tokenizer.save_pretrained(root / "tokenizer")
    config = Qwen2Config(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["</s>"],
        tie_word_embeddings=True,
    )
    Qwen2ForCausalLM(config).save_pretrained(root / "model")
    return str(root / "model"), str(root / "tokenizer")


def test_grpo_trainer_trains_two_steps_on_rewardhub_rewards(service_url: str, tmp_path: Path) -> None:
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    model_path, tokenizer_path = _tiny_model_and_tokenizer(tmp_path)
    rows = [
        {"prompt": "1+1=", "solution": "2"},
        {"prompt": "2+2=", "solution": "4"},
        {"prompt": "3+3=", "solution": None},  # no gold answer: `exact` cannot judge these two
        {"prompt": "4+4=", "solution": None},
    ]
    dataset = Dataset.from_list(rows)
    sync_reward = reward_func({"name": "exact", "config": {"strip_think": False}}, url=service_url, name="rh_sync")
    async_reward = async_reward_func("exact", url=service_url, name="rh_async")
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=4,
        max_steps=2,
        learning_rate=1e-3,
        beta=0.0,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        disable_tqdm=True,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model_path,
        reward_funcs=[sync_reward, async_reward],
        args=args,
        train_dataset=dataset,
        processing_class=AutoTokenizer.from_pretrained(tokenizer_path),
    )
    trainer.train()

    logged = [entry for entry in trainer.state.log_history if "rewards/rh_sync/mean" in entry]
    assert len(logged) == 2  # both steps were rewarded by the service
    for name in ("rh_sync", "rh_async"):
        error_rates = [entry[f"{name}/status/error"] for entry in logged]
        assert sum(error_rates) / len(error_rates) == pytest.approx(0.5)  # the epoch's two rows without gold
        for entry in logged:
            if entry[f"{name}/status/error"] == 1.0:
                assert entry[f"rewards/{name}/mean"] is None  # nothing could be judged: no reward, not 0
            else:
                assert math.isfinite(entry[f"rewards/{name}/mean"])


# --- tool-calling completions, as GRPOTrainer's tool loop builds them -------------------------------


def tool_calling_completion(factor: int, answer: str) -> list[dict]:
    """TRL appends the assistant turn (calls with dict arguments, no ids), each tool's result
    (``{"role": "tool", "name", "content"}``) and the next assistant turn to the completion."""
    call = {"type": "function", "function": {"name": "multiply", "arguments": {"a": 6, "b": factor}}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": "multiply", "content": str(6 * factor)},
        {"role": "assistant", "content": f"The product is \\boxed{{{answer}}}."},
    ]


def test_tool_calling_completions_are_sent_as_conversations(service_url: str) -> None:
    prompts = [[{"role": "user", "content": "What is 6 times 7?"}]] * 3
    completions = [
        tool_calling_completion(7, "42"),
        tool_calling_completion(8, "42"),
        [{"role": "assistant", "content": "\\boxed{42}"}],
    ]
    [sample, *_] = build_samples(prompts, completions, {})
    assert [m.role for m in sample.messages] == ["assistant", "tool", "assistant"]
    assert sample.response == "The product is \\boxed{42}."
    assert [m.role for m in sample.conversation()] == ["user", "assistant", "tool", "assistant"]

    final_answer = reward_func("math", url=service_url)
    assert final_answer(prompts=prompts, completions=completions, completion_ids=None, solution=["42"] * 3) == [1.0] * 3
    used_the_tool = reward_func({"name": "tool_sequence", "config": {"required": ["multiply"]}}, url=service_url)
    assert used_the_tool(prompts=prompts, completions=completions, completion_ids=None) == [1.0, 1.0, 0.0]
    call_ok = reward_func(
        {"name": "steps", "config": {"turn": {"name": "tool_call"}, "aggregate": "min"}}, url=service_url
    )
    turns = {"turns": [[{"multiply": {"a": [6], "b": [7]}}], []]}
    assert call_ok(prompts=prompts[:2], completions=completions[:2], completion_ids=None, reference=[turns] * 2) == [
        1.0,
        0.0,
    ]
