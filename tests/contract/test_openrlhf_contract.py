"""OpenRLHF 0.11.2, its own code: the argument parser, the HTTP reward fetch and the reward_func loader.

The guide's command lines run through bash (so ``$(...)`` and ``export`` expand as they would for a
user) with ``python -m openrlhf.cli.train_ppo_ray`` caught before it starts Ray; what it would have
received is parsed by ``train_ppo_ray``'s own ``__main__`` block, up to the point where it would call
``train(args)``. Ray and OpenRLHF's trainer modules (GPU actors) are not on that path and are stood
in for by empty modules; everything else is OpenRLHF's released code.

For a sample the service could not judge, OpenRLHF has no per-sample discard: it trains on
``rewards`` (the failure score) and logs ``extra_logs``; its one filter is ``--algo.dynamic_filtering``,
which drops a prompt whose samples' mean ``scores`` falls outside an open range (0, 1 by default)
and draws another. That filter is run here as OpenRLHF's own tests run it
(``tests/test_samples_generator.py`` in its wheel): its ``samples_generator`` module loaded with
stand-ins for Ray, vLLM and the engine module, the rollouts produced by its real executor against
the service.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import sys
import types
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from contract_support import REPO, doc_command_lines, installed

VERSION = "0.11.2"


def UPSTREAM() -> Path:
    return installed(f"openrlhf-{VERSION}", [f"openrlhf=={VERSION}", "pylatexenc==2.10"])


pytestmark = pytest.mark.usefixtures("on_path")

# what a user puts where the guide writes "...": a model and a data set (never loaded here)
USER_ARGS = ["--actor.model_name_or_path", "/models/policy", "--data.prompt_data", "/data/train.jsonl"]


class _Parsed(Exception):
    """Raised where train_ppo_ray would call train(args): parsing and validation are done."""

    def __init__(self, args: Any) -> None:
        self.parsed = args


def parse_like_openrlhf(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``args`` as ``python -m openrlhf.cli.train_ppo_ray ARGV`` builds and validates them."""
    import openrlhf.cli

    source_path = Path(openrlhf.cli.__file__).parent / "train_ppo_ray.py"
    tree = ast.parse(source_path.read_text())
    gpu_only = ("ray", "openrlhf.trainer")
    for name in ("ray", "ray.util", "ray.util.placement_group", "openrlhf.trainer", "openrlhf.trainer.ray"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    for name in ("openrlhf.trainer.ray.launcher", "openrlhf.trainer.ray.ppo_actor", "openrlhf.trainer.ray.ppo_critic"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    body = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(gpu_only):
            continue
        if isinstance(node, ast.Import) and any(a.name.startswith(gpu_only) for a in node.names):
            continue
        body.append(node)
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": str(source_path)}

    def train(args: Any) -> None:
        raise _Parsed(args)

    module = ast.Module(body=body, type_ignores=[])
    definitions = ast.Module(body=[n for n in body if not isinstance(n, ast.If)], type_ignores=[])
    exec(compile(definitions, str(source_path), "exec"), namespace)
    namespace["train"] = train
    main = ast.Module(body=[n for n in module.body if isinstance(n, ast.If)], type_ignores=[])
    monkeypatch.setattr(sys, "argv", ["train_ppo_ray.py", *argv])
    with pytest.raises(_Parsed) as parsed:
        exec(compile(main, str(source_path), "exec"), namespace)
    return parsed.value.parsed


def guide_command_lines_of_openrlhf() -> list[list[str]]:
    """The guide's OpenRLHF block run by bash; each train_ppo_ray command line as it would be received."""
    lines = doc_command_lines("openrlhf", "-m", "openrlhf.cli.train_ppo_ray")
    return [[t for argument in line for t in (USER_ARGS if argument == "..." else [argument])] for line in lines]


def test_openrlhfs_parser_accepts_the_doc_command_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    to_server, to_file = guide_command_lines_of_openrlhf()
    args = parse_like_openrlhf(to_server, monkeypatch)
    assert args.reward.remote_url == ["http://127.0.0.1:8000/get_reward"]
    assert args.data.label_key == "answer"
    args = parse_like_openrlhf(to_file, monkeypatch)
    [reward_file] = args.reward.remote_url
    assert Path(reward_file) == REPO / "rewardhub" / "integrations" / "openrlhf_reward_func.py"


def test_openrlhfs_parser_rejects_the_old_flag_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: 0.11.2 stops on the pre-0.11 spelling."""
    with pytest.raises(SystemExit):
        parse_like_openrlhf([*USER_ARGS, "--remote_rm_url", "http://127.0.0.1:8000/get_reward"], monkeypatch)


def _executor(url: str) -> Any:
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    return SingleTurnAgentExecutor(remote_rm_url=[url])


def test_the_http_fetch_scores_one_sample(served: str) -> None:
    executor = _executor(f"{served}/get_reward")
    [answer] = asyncio.run(executor._fetch_rewards_via_http(["1+1=2<|im_end|>"], ["1+1="], ["2"]))
    assert answer["rewards"] == [1.0]
    assert answer["scores"] == [1.0]
    assert answer["extra_logs"]["status/ok"] == [1.0]


def test_the_http_fetch_scores_a_batch(served: str) -> None:
    executor = _executor(f"{served}/get_reward")
    queries = ["<pad><pad>1+1=2</s>", "2+2=5</s>", "3+3=6</s>"]
    [answer] = asyncio.run(executor._fetch_rewards_via_http(queries, ["1+1=", "2+2=", "3+3="], ["2", "4", "6"]))
    assert answer["rewards"] == [1.0, 0.0, 1.0]
    assert answer["status"] == ["ok", "ok", "ok"]


def test_a_label_the_verifier_cannot_read_is_an_error_status_not_a_zero(served: str) -> None:
    executor = _executor(f"{served}/get_reward")
    [answer] = asyncio.run(executor._fetch_rewards_via_http(["1+1=2", "1+1=2"], ["1+1=", "1+1="], ["2", {"no": 1}]))
    assert answer["status"] == ["ok", "error"]
    assert answer["extra_logs"]["status/error"] == [0.0, 1.0]


def test_a_whole_rollout_through_the_executor_gets_the_services_reward(served: str) -> None:
    """``execute``: OpenRLHF decodes prompt + response with special tokens and asks for one sample."""
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    tokenizer = _CharTokenizer()
    engine = SimpleNamespace(generate=_generates("2</s>", tokenizer))
    params = SimpleNamespace(max_tokens=8, logprobs=None)
    executor = SingleTurnAgentExecutor(remote_rm_url=f"{served}/get_reward")
    output = asyncio.run(executor.execute("1+1=", "2", params, 64, tokenizer, engine))
    assert output["reward"] == [1.0]
    assert output["extra_logs"]["status/ok"] == [1.0]


def test_the_reward_func_file_loads_and_scores_through_the_service(
    served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    import rewardhub.integrations.openrlhf_reward_func as reward_file

    monkeypatch.setenv("REWARDHUB_URL", served)
    monkeypatch.setenv("REWARDHUB_VERIFIER", "math")
    executor = SingleTurnAgentExecutor(remote_rm_url=[reward_file.__file__])
    assert executor.reward_func is not None
    queries = ["What is 2+2? The answer is \\boxed{4}</s>", "What is 2+2? \\boxed{5}</s>"]
    answers = asyncio.run(executor._fetch_rewards_via_func(queries, ["What is 2+2?"] * 2, ["4", "4"]))
    assert [float(a["rewards"][0]) for a in answers] == [1.0, 0.0]  # one call per sample, as OpenRLHF makes them
    assert float(answers[0]["extra_logs"]["status/ok"][0]) == 1.0


class _CharTokenizer:
    """One token per character, ``</s>`` one token: enough for ``execute``'s encode and decode."""

    def __init__(self) -> None:
        self.vocab = ["</s>", *"0123456789+=? abcdefghijklmnopqrstuvwxyz"]

    def __call__(self, text: str, add_special_tokens: bool = False, return_tensors: str | None = None) -> Any:
        import torch

        return {"input_ids": torch.tensor([self.encode(text)])}

    def encode(self, text: str) -> list[int]:
        ids = []
        while text:
            if text.startswith("</s>"):
                ids.append(0)
                text = text[4:]
            else:
                ids.append(self.vocab.index(text[0]))
                text = text[1:]
        return ids

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(self.vocab[i] for i in ids if not (skip_special_tokens and i == 0))


def _generates(response: str, tokenizer: _CharTokenizer) -> Any:
    async def generate(prompt_ids: list[int], params: Any, multi_modal_data: Any = None) -> Any:
        output = SimpleNamespace(token_ids=tokenizer.encode(response), finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[output])

    return generate


def _samples_generator(monkeypatch: pytest.MonkeyPatch) -> Any:
    """OpenRLHF's ``samples_generator`` module, loaded as its own tests load it: Ray's ``wait`` hands
    back the first pending result and ``get`` the result itself; vLLM and the engine module are
    not on the reward path and are empty stand-ins."""
    import openrlhf.trainer.ppo_utils as ppo_utils

    ray = types.ModuleType("ray")
    ray.wait = lambda refs, **_: (refs[:1], refs[1:])  # type: ignore[attr-defined]
    ray.get = lambda ref: ref  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", ray)
    vllm = types.ModuleType("vllm")
    vllm.SamplingParams = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", vllm)
    engine = types.ModuleType("openrlhf.trainer.ray.vllm_engine")
    engine.batch_vllm_engine_call = lambda *_, **__: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, engine.__name__, engine)
    path = Path(ppo_utils.__file__).parent / "samples_generator.py"
    spec = importlib.util.spec_from_file_location("_openrlhf_samples_generator", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


# prompt, label, the two responses the policy gives; the second prompt's label is one the verifier cannot read
PROMPTS = [("1+1=", "2", ["2</s>", "3</s>"]), ("2+2=", {"no": 1}, ["4</s>", "4</s>"]), ("3+3=", "6", ["6</s>", "5</s>"])]  # fmt: skip


def test_dynamic_filtering_drops_a_prompt_none_of_whose_samples_could_be_judged(
    served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    module = _samples_generator(monkeypatch)
    tokenizer = _CharTokenizer()
    params = SimpleNamespace(max_tokens=8, logprobs=None)
    responses = {prompt: texts for prompt, _, texts in PROMPTS}

    def dispatch(prompts: list[str], labels: list[Any], **_: Any) -> list[list[dict[str, Any]]]:
        """What each vLLM actor's generate_responses returns: the executor's output per sample."""

        async def rollouts(prompt: str, label: Any) -> list[dict[str, Any]]:
            executor = SingleTurnAgentExecutor(remote_rm_url=f"{served}/get_reward")
            engines = [SimpleNamespace(generate=_generates(text, tokenizer)) for text in responses[prompt]]
            return [await executor.execute(prompt, label, params, 64, tokenizer, engine) for engine in engines]

        return [asyncio.run(rollouts(prompt, label)) for prompt, label in zip(prompts, labels, strict=True)]

    generator = module.SamplesGenerator.__new__(module.SamplesGenerator)
    generator.args = SimpleNamespace(algo=SimpleNamespace(dynamic_filtering_range=(0.0, 1.0)))  # its default
    generator._dispatch_prompts_to_vllm = dispatch
    dataloader = iter((None, [prompt], [label], [None]) for prompt, label, _ in PROMPTS)
    experiences, consumed, _ = generator._generate_vllm(dataloader, num_prompts=2, dynamic_filtering=True)

    assert [e.prompts[0] for e in experiences] == ["1+1=", "1+1=", "3+3=", "3+3="]  # 2+2= dropped, 3+3= drawn
    assert consumed == 3
    assert [float(e.rewards.flatten()[0]) for e in experiences] == [1.0, 0.0, 1.0, 0.0]
    assert {float(e.info["status/ok"].flatten()[0]) for e in experiences} == {1.0}


def test_without_dynamic_filtering_an_unjudged_sample_trains_with_the_failure_score(
    served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenRLHF's experience of an unjudged sample: reward and score 0, and ``status/error`` 1 in its
    info, which OpenRLHF averages into its logged metrics; nothing keeps it out of the loss."""
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    module = _samples_generator(monkeypatch)
    tokenizer = _CharTokenizer()
    executor = SingleTurnAgentExecutor(remote_rm_url=f"{served}/get_reward")
    engine = SimpleNamespace(generate=_generates("4</s>", tokenizer))
    params = SimpleNamespace(max_tokens=8, logprobs=None)
    output = asyncio.run(executor.execute("2+2=", {"no": 1}, params, 64, tokenizer, engine))
    generator = module.SamplesGenerator.__new__(module.SamplesGenerator)
    experience = generator._process_response_into_experience(output, max_len=64)
    assert float(experience.rewards.flatten()[0]) == 0.0 and float(experience.scores.flatten()[0]) == 0.0
    assert float(experience.info["status/error"].flatten()[0]) == 1.0
    assert int(experience.action_mask.sum()) > 0  # its tokens are in the loss
