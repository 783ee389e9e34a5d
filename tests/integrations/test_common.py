"""What every adapter shares, written once: the environment, one client per process, messages as
text, verifier labels, and dataset values as JSON."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import threading
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from rewardhub.api.compat.slime import SlimeRequest, slime_sample
from rewardhub.integrations import common, openrlhf, slime, trl, verl
from rewardhub.integrations.common import (
    as_reference,
    chat_messages,
    chat_prompt,
    content_text,
    json_fields,
    service_spec,
    shared_async_client,
    shared_client,
    verifier_spec,
)
from rewardhub.types import ChatMessage, Gate, VerifierRef, WeightedSum, WeightedTerm, verifier_label

# A chat prompt of the kind multimodal datasets carry: a system message, then a user message whose
# content is a list of parts: text, an image, a bare string and a Responses-API text part. The
# old TRL reader made "What is 2+2" of it (it dropped input_text), the old slime reader "What is ?"
# (it dropped bare strings).
CHAT_PROMPT = [
    {"role": "system", "content": "Be brief."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is "},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            "2+2",
            {"type": "input_text", "text": "?"},
        ],
    },
]
EXPECTED = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="What is 2+2?")]


# --- messages as text -------------------------------------------------------------------------------


def test_trl_and_slime_turn_the_same_chat_prompt_into_the_same_messages() -> None:
    [from_trl] = trl.build_samples([CHAT_PROMPT], ["4"], {"solution": ["4"]})
    payload = slime.slime_payload(
        SimpleNamespace(prompt=CHAT_PROMPT, response="4", label="4", index=0, metadata={"verifier": "exact"})
    )
    from_slime = slime_sample(SlimeRequest.model_validate(payload))  # what the service reads of it
    assert from_trl.prompt == from_slime.prompt == EXPECTED
    assert from_trl.prompt_text() == from_slime.prompt_text() == "Be brief.\nWhat is 2+2?"


def test_trl_completions_read_content_by_the_same_rule() -> None:
    completion = [{"role": "assistant", "content": CHAT_PROMPT[1]["content"]}]
    assert trl.completion_text(completion) == "What is 2+2?"


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (None, ""),
        ("plain", "plain"),
        (
            [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "ab",
        ),  # parts touch, as chat templates render them
        ([{"text": "no type is text"}], "no type is text"),
        ([{"type": "output_text", "text": "from the Responses API"}], "from the Responses API"),
        ([{"type": "input_image", "image_url": "x"}, {"type": "input_audio", "input_audio": {}}], ""),
        ([{"type": "image_url", "text": "a caption on an image part is not text"}], ""),
        ([{"type": "text", "text": None}, {"type": "text"}], ""),
        ({"type": "text", "text": "one part, not in a list"}, "one part, not in a list"),
        (("a", "b"), "ab"),
        (42, "42"),
    ],
)
def test_message_content_as_text(content: Any, text: str) -> None:
    assert content_text(content) == text


def test_chat_prompt_keeps_text_and_defaults_the_role() -> None:
    assert chat_prompt(None) is None
    assert chat_prompt("plain prompt") == "plain prompt"
    assert chat_prompt([{"content": "hi"}]) == [ChatMessage(role="user", content="hi")]
    assert chat_prompt({"role": "user", "content": "one message"}) == [ChatMessage(role="user", content="one message")]


def test_a_chat_prompt_with_something_other_than_messages_raises() -> None:
    with pytest.raises(ValueError, match="item 1 is a str"):
        chat_prompt([{"role": "user", "content": "hi"}, "not a message"])


# --- the environment --------------------------------------------------------------------------------


def test_service_spec_takes_arguments_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDHUB_URL", "http://env:1")
    monkeypatch.setenv("REWARDHUB_API_KEY", "env-key")
    assert service_spec() == common.ServiceSpec("http://env:1", "env-key")
    assert service_spec("http://arg:2", "arg-key") == common.ServiceSpec("http://arg:2", "arg-key")
    monkeypatch.setenv("REWARDHUB_URL", "")
    monkeypatch.delenv("REWARDHUB_API_KEY")
    assert service_spec() == common.ServiceSpec(None, None)  # the client's default URL, no key


@pytest.mark.parametrize(
    ("raw", "spec"),
    [
        ("math", "math"),
        ('"math"', "math"),
        (
            '{"name": "exact", "config": {"case_sensitive": true}}',
            {"name": "exact", "config": {"case_sensitive": True}},
        ),
        ('{"sum": [{"verifier": "exact"}, {"verifier": "format", "weight": 0.2}]}', None),
    ],
)
def test_the_verifier_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, raw: str, spec: Any) -> None:
    monkeypatch.setenv("REWARDHUB_VERIFIER", f"  {raw} ")
    assert verifier_spec() == (spec if spec is not None else json.loads(raw))
    assert verifier_spec("choice") == "choice"  # an explicit spec wins


def test_no_verifier_in_the_environment_means_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REWARDHUB_VERIFIER", raising=False)
    assert verifier_spec() is None
    assert verifier_spec(default="math") == "math"


@pytest.mark.parametrize("raw", ['{"name": "math"', '{"nme": "math"}', "[1, 2]", '{"sum": []}'])
def test_a_broken_verifier_variable_raises_naming_it(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("REWARDHUB_VERIFIER", raw)
    with pytest.raises(ValueError, match="REWARDHUB_VERIFIER"):
        verifier_spec()


def test_openrlhf_and_slime_refuse_a_broken_verifier_variable_before_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDHUB_URL", "http://127.0.0.1:9")  # nothing listens: no request may go out
    monkeypatch.setenv("REWARDHUB_VERIFIER", '{"name": ')
    with pytest.raises(ValueError, match="REWARDHUB_VERIFIER"):
        openrlhf.reward_func(["Q: 4"], ["Q: "], ["4"])
    with pytest.raises(ValueError, match="REWARDHUB_VERIFIER"):
        asyncio.run(slime.reward(SimpleNamespace(), SimpleNamespace(prompt="q", response="4", label="4", metadata={})))


# --- one client per service and process ----------------------------------------------------------------


def test_threads_share_one_client_per_service() -> None:
    spec = service_spec("http://127.0.0.1:9", "k")
    seen: list[Any] = []
    barrier = threading.Barrier(8)

    def grab() -> None:
        barrier.wait()
        seen.append(shared_client(spec))

    threads = [threading.Thread(target=grab) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(client) for client in seen}) == 1
    assert shared_client(service_spec("http://127.0.0.1:9", "other")) is not seen[0]  # another key, another client


def test_each_event_loop_gets_its_own_async_client() -> None:
    spec = service_spec("http://127.0.0.1:9")

    async def twice() -> tuple[Any, Any]:
        return shared_async_client(spec), shared_async_client(spec)

    first, again = asyncio.run(twice())
    assert first is again
    second, _ = asyncio.run(twice())  # a new loop: the closed loop's client is dropped, a new one made
    assert second is not first


def test_a_forked_child_gets_its_own_client() -> None:
    script = (
        "import os, sys\n"
        "from rewardhub.integrations.common import service_spec, shared_client\n"
        "spec = service_spec('http://127.0.0.1:9')\n"
        "parent = shared_client(spec)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0 if shared_client(spec) is not parent else 1)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n"
    )
    assert subprocess.run([sys.executable, "-c", script], timeout=60).returncode == 0


def test_verl_threads_score_through_one_client(service_url: str) -> None:
    answers: list[dict[str, Any]] = []

    def score(i: int) -> None:
        answers.append(verl.compute_score("custom", str(i), str(i), url=service_url, verifier="exact"))

    threads = [threading.Thread(target=score, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a["score"] for a in answers] == [1.0] * 6
    assert shared_client(service_spec(service_url)) is shared_client(service_spec(service_url))


# --- labels -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        (None, "default"),
        ("math", "math"),
        ({"name": "math", "config": {}}, "math"),
        (VerifierRef(name="math"), "math"),
        ({"sum": [{"verifier": "exact"}]}, "sum"),
        (WeightedSum(sum=[WeightedTerm(verifier="exact")]), "sum"),
        ({"gate": "format", "then": "math"}, "gate"),
        (Gate(gate="format", then="math"), "gate"),
        ({}, "composite"),
    ],
)
def test_a_spec_has_one_label(spec: Any, label: str) -> None:
    assert verifier_label(spec) == label


def test_the_trainer_and_the_adapters_name_a_spec_the_same_way() -> None:
    pytest.importorskip("torch")
    from rewardhub.trainer import rewards

    assert rewards.verifier_label is common.verifier_label is verifier_label
    spec = WeightedSum(sum=[WeightedTerm(verifier="exact")])
    assert trl.reward_func(spec).__name__ == f"rewardhub_{rewards.verifier_label(spec)}" == "rewardhub_sum"


# --- dataset values as JSON -------------------------------------------------------------------------


def test_labels_from_parquet_become_json() -> None:
    assert as_reference(np.array(["a", "b"])) == ["a", "b"]
    assert as_reference({"answer": np.float64(0.5), "tests": (np.int64(1),)}) == {"answer": 0.5, "tests": [1]}
    assert as_reference(float("nan")) is None  # pandas' missing value: nothing to judge against
    assert as_reference("4") == "4"


def test_a_label_json_cannot_carry_raises_naming_its_type() -> None:
    with pytest.raises(ValueError, match="of type object"):
        as_reference(object())
    with pytest.raises(ValueError, match="of type list"):
        as_reference([1.0, math.inf])


def test_metadata_keeps_what_json_can_carry() -> None:
    fields = {"source": "mmlu", "index": np.int64(3), "score": math.nan, "handle": object(), "tags": np.array([1])}
    assert json_fields(fields) == {"source": "mmlu", "index": 3, "tags": [1]}


def test_trl_raises_on_a_reference_column_json_cannot_carry() -> None:
    with pytest.raises(ValueError, match="cannot be sent as JSON"):
        trl.build_samples(["p"], ["x"], {"solution": [object()]})


def test_chat_messages_keep_calls_and_results() -> None:
    stream_call = {"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    messages = chat_messages(
        [
            {"role": "assistant", "content": None, "tool_calls": [stream_call], "reasoning_content": "hm"},
            {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "r"}, {"type": "image"}]},
            {"content": "done"},
        ]
    )
    assert [(m.role, m.content) for m in messages] == [("assistant", ""), ("tool", "r"), ("assistant", "done")]
    assert messages[0].tool_calls[0].function.arguments == '{"x": 1}' and messages[0].reasoning_content == "hm"
    assert messages[1].tool_call_id == "a"


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([{"role": "robot", "content": "x"}], "message 0"),
        ([{"role": "assistant", "content": "x"}, "text"], "message 1 is a str"),
        ("just text", "not a str"),
        ([{"role": "user", "content": "x", "tool_calls": [{"function": {"name": "f"}}]}], "message 0"),
    ],
)
def test_chat_messages_refuse_what_the_wire_would(messages: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        chat_messages(messages)
