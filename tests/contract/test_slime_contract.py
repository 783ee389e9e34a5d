"""slime, as its source reads at pinned commits of github.com/THUDM/slime, against a real ``rewardhub serve``.

slime is not released on PyPI (the PyPI package named "slime" is unrelated) and its trainer needs
Megatron and SGLang, so its code cannot be installed here. What the reward path uses is
transcribed below, each piece citing the file and commit it was read from:

- ``slime/rollout/rm_hub/__init__.py`` @ 701749b73cc0a292b76659beb937b74f0a8f1915: ``remote_rm``
  POSTs ``{"prompt", "response", "label"}`` (aiohttp, ``json=``) to ``args.rm_url``, raises on an
  HTTP error status and stores the JSON answer as the reward; with ``args.custom_rm_path`` set,
  ``async_rm`` returns ``await load_function(path)(args, sample, **kwargs)`` and, with ``--group-rm``,
  ``batched_async_rm`` returns ``await load_function(path)(args, samples, **kwargs)``.
- ``slime/utils/misc.py`` @ 582d0e8fd7a03758182e2348d25c21b4bad3d9dd: ``load_function`` imports
  the dotted path's module and takes its last name.
- ``slime/utils/types.py`` @ 0d234f3e3a83c81b7d37209994e0b994deacbb24: the ``Sample`` fields a
  reward reads, and ``get_reward_value``: ``reward if not args.reward_key else reward[args.reward_key]``.
- ``slime/utils/arguments.py`` @ 002fa9d6bac42357d127df88ba01853fc56f939b: the reward-model flags
  (``add_reward_model_arguments``), which parse the guide's slime lines here.
- ``slime/ray/rollout.py`` @ a51f0714179da87b1abdff81f99ae1e22034be92: the loss masks of
  ``RolloutManager._convert_samples_to_train_data`` (a missing mask is all ones; a sample with
  ``remove_sample`` set gets all zeros), slime's discard of one sample.

A change upstream after these commits is not seen by this test; docs/compat.md says so.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import shlex
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from contract_support import doc_command_lines


@dataclass
class Sample:
    """slime's ``Sample`` (types.py @ 0d234f3e), the fields on the reward path."""

    group_index: int | None = None
    index: int | None = None
    prompt: str | list[dict[str, str]] = ""
    tokens: list[int] = field(default_factory=list)
    response: str = ""
    response_length: int = 0
    label: str | None = None
    reward: float | dict[str, Any] | None = None
    loss_mask: list[int] | None = None
    remove_sample: bool = False
    metadata: dict = field(default_factory=dict)

    def get_reward_value(self, args: Any) -> float:
        return self.reward if not args.reward_key else self.reward[args.reward_key]


def loss_masks(samples: list[Sample]) -> list[list[int]]:
    """The loss masks of ``_convert_samples_to_train_data`` (rollout.py @ a51f0714)."""
    masks = []
    for sample in samples:
        if sample.loss_mask is None:
            sample.loss_mask = [1] * sample.response_length
        assert len(sample.loss_mask) == sample.response_length
        if sample.remove_sample:
            sample.loss_mask = [0] * sample.response_length
        masks.append(sample.loss_mask)
    return masks


def reward_model_parser() -> argparse.ArgumentParser:
    """slime's ``add_reward_model_arguments`` (arguments.py @ 002fa9d6), on a parser of its own."""
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--rm-type", type=str, default=None)
    parser.add_argument("--reward-key", type=str, default=None)
    parser.add_argument("--eval-reward-key", type=str, default=None)
    parser.add_argument("--group-rm", action="store_true", default=False)
    parser.add_argument("--rm-url", type=str, default=None)
    parser.add_argument("--custom-rm-path", type=str, default=None)
    parser.add_argument("--custom-reward-post-process-path", type=str, default=None)
    parser.add_argument("--custom-convert-samples-to-train-data-path", type=str, default=None)
    return parser


async def remote_rm(args: Any, sample: Sample) -> Any:
    """slime's ``remote_rm`` (rm_hub/__init__.py @ 701749b7), without its retry loop."""
    payload = {"prompt": sample.prompt, "response": sample.response, "label": sample.label}
    connector = aiohttp.TCPConnector(force_close=True, enable_cleanup_closed=True)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=30)) as session:
        async with session.post(args.rm_url, json=payload) as resp:
            resp.raise_for_status()
            return await resp.json()


def load_function(path: str) -> Any:
    """slime's ``load_function`` (misc.py @ 582d0e8f)."""
    module_path, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module_path), attr)


async def rm(args: Any, samples: list[Sample]) -> list[Any]:
    """``async_rm`` per sample, or ``batched_async_rm`` with ``--group-rm``, for a custom path."""
    function = load_function(args.custom_rm_path)
    if args.group_rm:
        return await function(args, samples)
    return list(await asyncio.gather(*(function(args, sample) for sample in samples)))


def guide_args(served: str) -> list[argparse.Namespace]:
    """The guide's ``python train.py`` lines, run by bash, parsed by slime's reward flags."""
    lines = [[t for t in line if t != "..."] for line in doc_command_lines("slime", "train.py")]
    parser = reward_model_parser()
    parsed = []
    for argv in lines:
        args = parser.parse_args(argv)
        if args.rm_url:
            args.rm_url = args.rm_url.replace("http://127.0.0.1:8000", served)
        parsed.append(args)
    return parsed


@pytest.fixture
def service(served: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("REWARDHUB_URL", served)
    monkeypatch.setenv("REWARDHUB_VERIFIER", "math")
    return served


def test_the_guides_lines_use_flags_slime_has(service: str) -> None:
    remote, custom = guide_args(service)
    assert (remote.rm_type, remote.reward_key) == ("remote_rm", "score")
    assert remote.rm_url == f"{service}/v1/compat/slime"
    assert (custom.custom_rm_path, custom.group_rm, custom.reward_key) == (
        "rewardhub.integrations.slime.reward",
        True,
        "score",
    )
    with pytest.raises(SystemExit):  # the check can fail: a flag slime lacks stops the parse
        reward_model_parser().parse_args(shlex.split("--rm-endpoint http://x"))


def test_remote_rm_gets_a_reward_object_its_reward_key_reads(service: str) -> None:
    """slime's body has no verifier: the server's ``get_reward_verifier`` (``exact`` here) judges."""
    remote, _ = guide_args(service)
    samples = [
        Sample(index=0, prompt="What is 2+2?", response="4", label="4"),
        Sample(index=1, prompt=[{"role": "user", "content": "What is 2+2?"}], response="5", label="4"),
    ]
    for sample in samples:
        sample.reward = asyncio.run(remote_rm(remote, sample))
    assert [s.get_reward_value(remote) for s in samples] == [1.0, 0.0]
    assert samples[0].reward["status"] == "ok"


def test_remote_rm_with_a_label_the_verifier_cannot_read_gets_an_error_status(service: str) -> None:
    remote, _ = guide_args(service)
    sample = Sample(prompt="q", response="4", label=None)  # a row without a label: nothing to compare with
    sample.reward = asyncio.run(remote_rm(remote, sample))
    assert sample.reward["status"] == "error"
    assert sample.reward["error"]


def test_remote_rm_with_a_body_slime_would_not_send_is_a_4xx(service: str) -> None:
    remote, _ = guide_args(service)
    sample = Sample(prompt="q", response=["not", "text"], label="4")  # type: ignore[arg-type]
    with pytest.raises(aiohttp.ClientResponseError) as refused:
        asyncio.run(remote_rm(remote, sample))
    assert 400 <= refused.value.status < 500


def test_the_custom_rm_path_scores_one_sample_at_a_time_and_a_group(service: str) -> None:
    _, custom = guide_args(service)
    group = [
        Sample(group_index=7, index=i, prompt="What is 2+2?", response=response, label="4")
        for i, response in enumerate(["\\boxed{4}", "\\boxed{5}", "4"])
    ]
    for group_rm in (False, True):
        custom.group_rm = group_rm
        rewards = asyncio.run(rm(custom, group))
        for sample, reward in zip(group, rewards, strict=True):
            sample.reward = reward
        assert [s.get_reward_value(custom) for s in group] == [1.0, 0.0, 1.0]


def test_the_custom_rm_path_removes_a_sample_it_could_not_judge_from_the_loss(service: str) -> None:
    """slime's discard is ``sample.remove_sample``: our reward function sets it for a sample the
    service could not judge, and slime's conversion to training data zeroes that sample's loss mask."""
    _, custom = guide_args(service)
    custom.group_rm = True
    group = [
        Sample(group_index=3, index=0, prompt="What is 2+2?", response="\\boxed{4}", label="4", response_length=3),
        Sample(group_index=3, index=1, prompt="What is 2+2?", response="\\boxed{5}", label="4", response_length=2),
        Sample(group_index=3, index=2, prompt="What is 2+2?", response="\\boxed{4}", label=None, response_length=4),
    ]
    for sample, reward in zip(group, asyncio.run(rm(custom, group)), strict=True):
        sample.reward = reward
    assert [s.reward["status"] for s in group] == ["ok", "ok", "error"]
    assert [s.get_reward_value(custom) for s in group] == [1.0, 0.0, 0.0]  # the failure score, still in the group
    assert [s.remove_sample for s in group] == [False, False, True]
    assert loss_masks(group) == [[1, 1, 1], [1, 1], [0, 0, 0, 0]]


def test_slimes_own_remote_rm_cannot_discard_an_unjudged_sample(service: str) -> None:
    """With ``--rm-type remote_rm`` slime stores the reward object only: the sample keeps its loss mask
    and trains with the failure score; its status is in the reward object for the logs."""
    remote, _ = guide_args(service)
    sample = Sample(prompt="q", response="4", label=None, response_length=2)
    sample.reward = asyncio.run(remote_rm(remote, sample))
    assert (sample.reward["status"], sample.get_reward_value(remote)) == ("error", 0.0)
    assert loss_masks([sample]) == [[1, 1]]
