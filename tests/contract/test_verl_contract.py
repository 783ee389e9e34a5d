"""verl 0.9.1, its own code: Hydra composes the guide's overrides with verl's ``ppo_trainer.yaml``,
``load_reward_manager`` loads our function from that config, and the reward loop's ``naive``
manager scores verl ``DataProto`` items through it against a real ``rewardhub serve``.

Ray is installed (verl's ``DataProto`` imports it) but never started.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from contract_support import doc_command_lines, installed

VERSION = "0.9.1"


def UPSTREAM() -> Path:
    return installed(
        f"verl-{VERSION}",
        [
            f"verl=={VERSION}",
            "ray==2.52.1",
            "tensordict==0.10.0",
            "pyvers==0.2.3",
            "omegaconf==2.3.0",
            "hydra-core==1.3.2",
            "antlr4-python3-runtime==4.9.3",
            "codetiming==1.4.0",
            "pylatexenc==2.11",
            "msgpack==1.2.4",
            "cloudpickle==3.1.3",
            "requests==2.34.2",
            "urllib3==2.8.0",
            "charset-normalizer==3.5.3",
            "orjson==3.13.0",
        ],
    )


pytestmark = pytest.mark.usefixtures("on_path")


def doc_overrides(block: str) -> list[list[str]]:
    """Each ``python -m verl.trainer.main_ppo`` line of a guide's block (the verl one), as its overrides."""
    return [[t for t in line if t != "..."] for line in doc_command_lines(block, "-m", "verl.trainer.main_ppo")]


def verl_config(overrides: list[str]) -> Any:
    """The trainer config as ``verl.trainer.main_ppo`` composes it (Hydra, verl's own YAML files)."""
    import verl
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


class CharTokenizer:
    """One token per character, id 0 the end-of-sequence token: what the manager decodes."""

    alphabet = "\0" + "0123456789+-=?. abcdefghijklmnopqrstuvwxyz\\{}"

    def encode(self, text: str) -> list[int]:
        return [self.alphabet.index(c) for c in text]

    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        return "".join(self.alphabet[int(i)] for i in ids if not (skip_special_tokens and int(i) == 0))


def rollouts(items: list[tuple[str, str, Any]], tokenizer: CharTokenizer) -> Any:
    """A verl batch: right-padded responses after a left-padded prompt, as the rollout writes them."""
    import torch
    from verl import DataProto

    prompt_len, response_len = 4, 24
    prompts = torch.zeros(len(items), prompt_len, dtype=torch.long)
    responses = torch.zeros(len(items), response_len, dtype=torch.long)
    mask = torch.zeros(len(items), prompt_len + response_len, dtype=torch.long)
    for i, (_, response, _) in enumerate(items):
        ids = tokenizer.encode(response)
        responses[i, : len(ids)] = torch.tensor(ids)
        mask[i, :prompt_len] = 1
        mask[i, prompt_len : prompt_len + len(ids)] = 1
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": responses, "attention_mask": mask},
        non_tensors={
            "data_source": np.array([source for source, _, _ in items], dtype=object),
            "reward_model": np.array([{"ground_truth": truth} for _, _, truth in items], dtype=object),
            "extra_info": np.array([{"index": i} for i in range(len(items))], dtype=object),
        },
    )


def score_each(config: Any, tokenizer: CharTokenizer, batch: Any) -> tuple[Any, list[dict[str, Any]]]:
    """The manager verl loads from ``config``, scoring each item concurrently on one event loop.

    Built inside the loop, as verl's reward-loop worker builds it: the manager keeps the loop it
    was created on and runs synchronous reward functions in that loop's executor.
    """
    from verl.trainer.ppo.reward import load_reward_manager

    async def run() -> tuple[Any, list[dict[str, Any]]]:
        manager = load_reward_manager(config, tokenizer)
        results = await asyncio.gather(*(manager.run_single(batch[i : i + 1]) for i in range(len(batch))))
        return manager, list(results)

    return asyncio.run(run())


@pytest.fixture
def service(served: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("REWARDHUB_URL", served)
    return served


def test_the_doc_overrides_compose_with_verls_own_config() -> None:
    for overrides in doc_overrides("verl"):
        config = verl_config(overrides)
        assert config.reward.custom_reward_function.path == "pkg://rewardhub.integrations.verl"
        assert config.reward.reward_manager.name == "naive"  # verl's default, a manager its registry has


def test_the_guides_sandbox_fusion_line_composes_with_verls_own_config() -> None:
    [overrides] = doc_overrides("verl-sandbox-fusion")
    config = verl_config(overrides)
    assert config.reward.sandbox_fusion.url == "http://HOST:8000/run_code"
    assert config.reward.sandbox_fusion.memory_limit_mb == 1024


def test_verls_config_refuses_a_key_it_does_not_have() -> None:
    """The check above can fail: a key outside verl's config stops the composition."""
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException):
        verl_config(["reward.custom_reward_function.no_such_key=1"])


def test_verls_reward_loop_has_no_batch_manager() -> None:
    from verl.trainer.ppo.reward import resolve_reward_manager_cls

    with pytest.raises(ValueError, match="Unknown reward manager: batch"):
        resolve_reward_manager_cls(verl_config(["reward.reward_manager.name=batch"]))


@pytest.mark.parametrize("line", [0, 1], ids=["async", "sync-with-routes"])
def test_the_naive_manager_scores_through_our_function(service: str, line: int) -> None:
    config = verl_config(doc_overrides("verl")[line])
    tokenizer = CharTokenizer()
    source = "openai/gsm8k" if line == 0 else "my_source"  # the second line routes my_source to `exact`
    right = "the answer is \\boxed{4}" if line == 0 else "4"
    batch = rollouts([(source, right, "4"), (source, "5", "4")], tokenizer)
    manager, (first, second) = score_each(config, tokenizer, batch)
    assert type(manager).__name__ == "NaiveRewardManager"
    assert first["reward_score"] == 1.0
    assert second["reward_score"] == 0.0
    assert first["reward_extra_info"]["status"] == "ok"
    assert first["reward_extra_info"].keys() == second["reward_extra_info"].keys()  # verl stacks these per key


def test_a_data_source_with_no_route_stops_the_step_instead_of_scoring_zero(service: str) -> None:
    tokenizer = CharTokenizer()
    with pytest.raises(NotImplementedError, match="unknown_source"):
        score_each(
            verl_config(doc_overrides("verl")[0]), tokenizer, rollouts([("unknown_source", "4", "4")], tokenizer)
        )


def test_an_answer_the_verifier_cannot_judge_is_an_error_status(service: str) -> None:
    tokenizer = CharTokenizer()
    batch = rollouts([("my_source", "4", {"not": "a string"})], tokenizer)
    _, [result] = score_each(verl_config(doc_overrides("verl")[1]), tokenizer, batch)
    assert result["reward_extra_info"]["status"] == "error"
    assert result["reward_extra_info"]["error"]


def test_the_batch_reward_manager_class_calls_compute_score_batch(service: str) -> None:
    from verl.workers.reward_manager.batch import BatchRewardManager

    from rewardhub.integrations.verl import compute_score_batch

    tokenizer = CharTokenizer()
    manager = BatchRewardManager(tokenizer, num_examine=0, compute_score=compute_score_batch)
    batch = rollouts([("gsm8k", "\\boxed{4}", "4"), ("mmlu", "b", "B"), ("gsm8k", "3", "4")], tokenizer)
    scores = manager.verify(batch)
    assert [s["score"] for s in scores] == [1.0, 1.0, 0.0]
    rewards = manager(batch)
    assert rewards.sum(dim=-1).tolist() == [1.0, 1.0, 0.0]


def test_an_unjudged_sample_reaches_verl_as_its_failure_score_with_its_status_in_the_extra_info(service: str) -> None:
    """verl has no per-sample discard in its reward path: the naive manager trains on ``score``, so
    an unjudged sample among judged ones is rewarded with the failure score (0), and its status,
    error and ``status/ok`` ride in ``reward_extra_info`` (the keys verl logs, dumps and filters on)."""
    tokenizer = CharTokenizer()
    judged = [("my_source", "4", "4"), ("my_source", "5", "4")]
    batch = rollouts([*judged, ("my_source", "4", {"not": "a string"})], tokenizer)
    _, results = score_each(verl_config(doc_overrides("verl")[1]), tokenizer, batch)
    assert [r["reward_score"] for r in results] == [1.0, 0.0, 0.0]
    info = [r["reward_extra_info"] for r in results]
    assert [i["status"] for i in info] == ["ok", "ok", "error"]
    assert [i["status/ok"] for i in info] == [1.0, 1.0, 0.0]
    assert [i["acc"] for i in info] == [1.0, 0.0, 0.0]


def test_verls_group_filter_reads_a_key_under_which_a_wholly_unjudged_group_has_no_signal(service: str) -> None:
    """verl 0.9.1's data filtering is DAPO's ``algorithm.filter_groups`` (the V1 trainer's replay
    buffer, ``verl/trainer/ppo/v1/replay_buffer.py``, ``_dapo_filtered_keys``): it evicts and refills
    a group whose ``metric`` (a ``reward_extra_info`` key) is the same for every trajectory. With
    ``metric=acc`` a group of which no sample could be judged has acc 0 throughout, so verl drops it
    as it drops an all-wrong group; a group holding one judged right answer keeps its spread. (The
    buffer itself runs on TransferQueue actors in a Ray cluster, which is not started here: this
    checks the config verl composes and the values its rule reads.)"""
    overrides = [*doc_overrides("verl")[1], "trainer.use_v1=True"]
    overrides += ["algorithm.filter_groups.enable=True", "algorithm.filter_groups.metric=acc"]
    config = verl_config(overrides)
    assert (config.algorithm.filter_groups.enable, config.algorithm.filter_groups.metric) == (True, "acc")
    tokenizer = CharTokenizer()
    unreadable = {"not": "a string"}
    batch = rollouts([("my_source", "4", unreadable)] * 3 + [("my_source", "4", "4"), ("my_source", "4", unreadable)], tokenizer)  # fmt: skip
    _, results = score_each(config, tokenizer, batch)
    acc = [r["reward_extra_info"][config.algorithm.filter_groups.metric] for r in results]
    unjudged_group, mixed_group = acc[:3], acc[3:]
    assert len(set(unjudged_group)) == 1  # verl's rule: len(values) > 1 and np.std(values) == 0 -> evicted
    assert len(set(mixed_group)) == 2  # kept: its unjudged sample trains with the failure score
