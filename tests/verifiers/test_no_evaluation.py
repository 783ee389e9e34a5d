"""No verifier evaluates a sample's text, or its reference, as code on the reward host.

Each payload below, were anything to evaluate it, would write a canary file of its own into a
folder of this host. Every registered verifier gets every payload form (``__import__``, ``eval``,
``exec``, an attribute chain to ``object.__subclasses__``, sympy's ``sympify``/``S``/``Function``,
a ``lambda``, a list around a call) in every wrapping a model writes (plain, ``<answer>``,
``\\boxed{}``, a code fence, JSON) in the response, in the messages (content and tool-call
arguments) and in the reference; reasoning-gym gets them in each family whose released scorer
evaluates text, in the answer and in every string of the entry. Everything goes through
``POST /v1/score`` of the test service, whose CPU pool scores in worker processes as in
production. Afterwards no canary exists, every result is a status, and the service still scores.

The judges (judge, rubric, pairwise_judge) get a local endpoint that answers with the prompt it
was sent, so their verdict parsers read the payloads too. The checkpoint-based verifiers
(outcome_rm, prm, implicit_prm) are left out: this service has no model, and they hand text to a
tokenizer. ``code`` and ``session_tests`` run programs
by design, in the sandbox, where the host's folder is out of reach: their canaries are checked
all the same. A reference is hostile too: a JSON Schema's ``$ref`` to an address is never fetched.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from rewardhub.registry import Registry

sys.path.insert(0, str(Path(__file__).parents[1] / "models"))
from rm_fake_judge import FakeJudge  # noqa: E402 (tests/models' local endpoint)

reasoning_gym = pytest.importorskip("reasoning_gym")

JUDGES = {"judge": "7", "rubric": [{"criterion": "Says 7", "weight": 1}], "pairwise_judge": None}
MODEL_BASED = {"outcome_rm", "prm", "implicit_prm"} | set(JUDGES)

EVALUATING_FAMILIES = (
    "spiral_matrix",
    "string_insertion",
    "binary_matrix",
    "n_queens",
    "number_sorting",
    "bitwise_arithmetic",
    "puzzle24",
    "countdown",
    "simple_integration",
    "intermediate_integration",
    "polynomial_multiplication",
)

REASONING_GYM = {"name": "reasoning_gym", "config": {"timeout_s": 60}}
"""A worker's first entry imports reasoning-gym (every family registers): longer than this test
service's 5 s per sample on a loaded machine."""

SPECS: dict[str, dict[str, Any]] = {  # a config each verifier accepts, and a reference of its own shape
    "choice": {"reference": "A"},
    "code": {"reference": {"assert": "assert add(2, 3) == 5", "entry_point": "add"}},
    "cosine_length": {"reference": "7", "metadata": {"correct": True}},
    "exact": {"reference": "7"},
    "f1": {"reference": "7"},
    "format": {"reference": None},
    "grounding": {"reference": {"box": [600, 400, 700, 450], "image_size": [1280, 720]}},
    "ifeval": {"reference": [{"type": "lowercase"}]},
    "json_schema": {"reference": {"type": "object"}},
    "language_consistency": {"reference": None},
    "length": {"reference": None},
    "math": {"reference": "7"},
    "qa_match": {"reference": "7"},
    "regex": {"reference": r"\d+"},
    "self_certainty": {"reference": None, "metadata": {"logprobs": [[-0.1, -2.5], [-0.2, -1.9]]}},
    "session_tests": {"config": {"command": "true"}, "reference": None},
    "sql": {
        "reference": {
            "schema": "CREATE TABLE t (x INTEGER);",
            "rows": {"t": [[1], [2]]},
            "gold_sql": "SELECT x FROM t",
        }
    },
    "steps": {"config": {"turn": {"name": "math"}}, "reference": "7"},
    "string_check": {"reference": "7"},
    "text_similarity": {"reference": "7"},
    "tool_call": {"reference": {"name": "f", "arguments": {"x": "1"}}},
    "tool_sequence": {"reference": {"required": ["f"]}},
    "diversity": {"reference": "7"},
    "length_group_relative": {"reference": "7", "metadata": {"correct": True}},
    "length_pass_rate": {"reference": "7", "metadata": {"correct": True}},
    "majority_vote": {"reference": "7"},
    "pass_at_k": {"reference": "7"},
}


class Canaries:
    """Files that exist only if a payload ran; each is named for where its payload was sent."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.where: dict[str, str] = {}

    def forms(self, where: str) -> dict[str, str]:
        """Every payload form, each with a canary of its own."""
        return {form: build(self._path(f"{where} {form}")) for form, build in FORMS.items()}

    def _path(self, label: str) -> str:
        name = f"c{len(self.where)}"
        self.where[name] = label
        return str(self.folder / name)

    def ran(self) -> list[str]:
        return sorted(self.where[p.name] for p in self.folder.iterdir())


def _write(path: str) -> str:
    return f"__import__('pathlib').Path({path!r}).write_text('ran')"


FORMS: dict[str, Callable[[str], str]] = {
    "import": _write,
    "eval": lambda path: f"eval({_write(path)!r})",
    "exec": lambda path: f"exec({_write(path)!r})",
    "subclasses": lambda path: (
        f"[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'FileIO'][0]({path!r}, 'w')"
    ),
    "sympify": lambda path: f"sympify({_write(path)!r})",
    "S": lambda path: f"S({_write(path)!r}) + 1",
    "Function": lambda path: f"Function('x')({_write(path)})",
    "lambda": lambda path: f"(lambda: {_write(path)})()",
    "list": lambda path: f"[{_write(path)}, 1]",
}

WRAPS: dict[str, Callable[[str], str]] = {
    "plain": lambda p: p,
    "answer": lambda p: f"<think>working</think><answer>{p}</answer>",
    "boxed": lambda p: f"The answer is \\boxed{{{p}}}.",
    "fence": lambda p: f"```python\n{p}\n```",
    "json": lambda p: json.dumps({"answer": p, "name": "f", "arguments": {"x": p}}),
}


def _samples(name: str, canaries: Canaries) -> list[dict[str, Any]]:
    """The verifier's own reference with hostile responses and messages, then hostile references."""
    spec = SPECS[name]
    base = {"reference": spec["reference"], "metadata": spec.get("metadata", {}), "group": "g"}
    samples = []
    for wrap, wrapped in WRAPS.items():
        for payload in canaries.forms(f"{name} response {wrap}").values():
            samples.append({**base, "prompt": "What is 3+4?", "response": wrapped(payload)})
    for payload in canaries.forms(f"{name} messages").values():
        call = {"id": "1", "type": "function", "function": {"name": "f", "arguments": payload}}
        messages = [
            {"role": "user", "content": payload},
            {"role": "assistant", "content": payload, "tool_calls": [call]},
            {"role": "tool", "content": payload, "tool_call_id": "1"},
            {"role": "assistant", "content": payload},
        ]
        samples.append({**base, "messages": messages})
    for payload in canaries.forms(f"{name} reference").values():
        samples.append({**base, "response": "7", "reference": payload})
        samples.append({**base, "response": "7", "reference": {"answer": payload, "gold_sql": payload}})
    return samples


def _families(canaries: Canaries) -> list[dict[str, Any]]:
    """reasoning-gym entries of each evaluating family: hostile answers, then each string of the entry hostile."""
    samples = []
    for task in EVALUATING_FAMILIES:
        entry = reasoning_gym.create_dataset(task, size=1, seed=1)[0]
        for wrap in ("plain", "answer", "boxed"):
            for payload in canaries.forms(f"reasoning_gym {task} answer {wrap}").values():
                samples.append({"response": WRAPS[wrap](payload), "reference": entry})
        fields = ["answer", *(k for k, v in entry["metadata"].items() if isinstance(v, str) and k != "source_dataset")]
        for field in fields:
            for payload in canaries.forms(f"reasoning_gym {task} entry {field}").values():
                hostile = {**entry, "metadata": {**entry["metadata"]}}
                target = hostile if field == "answer" else hostile["metadata"]
                target[field] = payload
                for response in (entry["answer"], "[1, 2]", "x"):
                    samples.append({"response": f"<answer>{response}</answer>", "reference": hostile})
    return samples


def _score(http, spec: Any, samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    reply = http.post("/v1/score", json={"verifier": spec, "samples": samples}, timeout=600)
    assert reply.status_code == 200, reply.text[:500]
    return reply.json()["results"]


def test_every_verifier_is_offered_every_payload_and_none_runs_on_the_host(http, tmp_path: Path) -> None:
    canaries = Canaries(tmp_path)
    registered = set(Registry.load().names())  # the built-ins (the test service adds a plugin's)
    assert registered == set(SPECS) | MODEL_BASED | {"reasoning_gym"}
    assert registered <= {v["name"] for v in http.get("/v1/verifiers").json()["verifiers"]}
    statuses: dict[str, set[str]] = {}
    for name in sorted(SPECS):
        spec = {"name": name, "config": SPECS[name].get("config", {})}
        results = _score(http, spec, _samples(name, canaries))
        statuses[name] = {r["status"] for r in results}
    results = _score(http, REASONING_GYM, _families(canaries))
    statuses["reasoning_gym"] = {r["status"] for r in results}
    assert canaries.ran() == []
    assert {name: s for name, s in statuses.items() if not s <= {"ok", "error"}} == {}
    assert _score(http, "exact", [{"response": "4", "reference": "4"}])[0]["score"] == 1.0  # still serving
    print(f"\n{len(canaries.where)} canaries over {len(statuses)} verifiers: none written")


def test_the_reported_spiral_matrix_payload_scores_0_and_leaves_no_file(http, tmp_path: Path) -> None:
    canary = tmp_path / "x"
    reference = {"question": "q", "answer": "1 2 3", "metadata": {"source_dataset": "spiral_matrix"}}
    response = (
        f"<answer>[__import__('pathlib').Path({str(canary)!r}).write_text(repr(__import__('os').getuid()))]</answer>"
    )
    (result,) = _score(http, REASONING_GYM, [{"response": response, "reference": reference}])
    assert (result["status"], result["score"]) == ("ok", 0.0)
    assert "literal" in result["details"]["refused"]
    assert not canary.exists()


def test_a_json_schema_ref_to_an_address_is_never_fetched(http) -> None:
    """A reference must not make the reward host send requests (jsonschema's default registry would)."""
    fetched: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            fetched.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "integer"}')

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/schema.json"
        references = [{"$ref": url}, {"type": "object", "properties": {"a": {"$ref": url}}}]
        results = _score(http, "json_schema", [{"response": '{"a": 1}', "reference": r} for r in references])
    finally:
        server.shutdown()
        server.server_close()
    assert [(r["status"], "cannot be resolved" in (r["error"] or "")) for r in results] == [("error", True)] * 2
    assert fetched == []


def test_the_judges_verdict_parsers_read_the_payloads_back_and_run_none(http, tmp_path: Path) -> None:
    canaries = Canaries(tmp_path)
    judge = FakeJudge()
    judge.reset(lambda body: body["messages"][-1]["content"])  # the judge "answers" with what it was shown
    try:
        statuses = {}
        for name, reference in JUDGES.items():
            prompt = canaries.forms(f"{name} prompt")["import"]  # one prompt: a pairwise group shares it
            samples = [
                {"prompt": prompt, "response": WRAPS[wrap](p), "reference": reference, "group": "g"}
                for wrap in ("plain", "answer")
                for p in canaries.forms(f"{name} {wrap}").values()
            ]
            config = {"model": "judge", "base_url": judge.url, "api_key_env": None, "max_retries": 0}
            results = _score(http, {"name": name, "config": {**config, "max_concurrency": 4}}, samples)
            statuses[name] = {r["status"] for r in results}
    finally:
        judge.close()
    assert judge.requests, "the judges were asked"
    assert canaries.ran() == []
    assert {name: s for name, s in statuses.items() if not s <= {"ok", "error"}} == {}


def test_the_nemo_gym_route_scores_reasoning_gym_payloads_without_running_them(http, tmp_path: Path) -> None:
    canaries = Canaries(tmp_path)
    requests = []
    for task in EVALUATING_FAMILIES:
        entry = reasoning_gym.create_dataset(task, size=1, seed=1)[0]
        for payload in canaries.forms(f"nemo-gym {task}").values():
            message = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": payload}]}
            requests.append(
                {
                    "responses_create_params": {"input": entry["question"]},
                    "response": {"output": [message]},
                    **entry,
                    "verifier": {**REASONING_GYM, "config": {"on_scorer_error": "zero", "timeout_s": 60}},
                }
            )
    reply = http.post("/v1/compat/nemo-gym/reasoning_gym/verify_batch", json={"verify_requests": requests})
    assert reply.status_code == 200, reply.text[:500]
    rewards = [r["reward"] for r in reply.json()["verify_responses"]]
    assert canaries.ran() == []
    assert len(rewards) == len(requests) and max(rewards) <= 0.01
