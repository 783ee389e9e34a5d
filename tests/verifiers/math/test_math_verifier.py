"""The ``math`` verifier as the service sees it: results, failure classes, config, registration."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from pydantic import ValidationError

import rewardhub.verifiers.math
from rewardhub.calls import run_call
from rewardhub.errors import VerifierError
from rewardhub.execution.base import Executor
from rewardhub.registry import ENTRY_POINT_GROUP, Registry
from rewardhub.scoring import Scorer
from rewardhub.settings import Settings
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier
from rewardhub.verifiers.math import verifier as math_verifier
from rewardhub.verifiers.math.verifier import MathVerifier

VERIFIER = MathVerifier()
DATA = Path(__file__).parents[2] / "data" / "math_qwen_cot_sample.jsonl"


def score(gold, response, **config):
    return VERIFIER.score(Sample(response=response, reference=gold), MathVerifier.Config(**config))


@pytest.mark.parametrize(
    ("gold", "response", "status", "reason"),
    [
        ("42", "\\boxed{42}", "ok", "equivalent"),
        ("42", "\\boxed{41}", "ok", "not_equivalent"),
        ("42", "I do not know.", "ok", "no_answer"),
        ("42", "\\boxed{\\frac{1}{}}", "ok", "unparseable_answer"),
        ("42", "\\boxed{9^{9^{9^{9}}}}", "error", "too_complex"),
        ("\\frac{1}{", "\\boxed{1}", "error", "gold_unparseable"),
    ],
)
def test_every_result_says_what_was_read_and_why(gold, response, status, reason):
    result = score(gold, response)
    assert (result.status, result.details["reason"]) == (status, reason)
    assert "gold" in result.details and "extracted" in result.details
    json.dumps(result.details)  # details travel as JSON


def test_no_answer_is_a_zero_not_an_error():
    result = score("42", "Let me think about it.")
    assert (result.status, result.score, result.details["extracted"]) == ("ok", 0.0, None)


def test_an_unparseable_gold_is_an_error_with_a_message_not_a_zero():
    result = score("\\frac{1}{", "\\boxed{1}", failure_score=-1.0)
    assert result.status == "error" and result.score == -1.0
    assert "unparseable" in result.error


def test_too_complex_is_an_error_from_the_pre_screen():
    result = score("1", "\\boxed{(10^{10})!}")
    assert result.status == "error" and result.error.startswith("too complex")
    assert result.details["extracted"] == "(10^{10})!"


@pytest.mark.parametrize("reference", [None, "", "   ", True])
def test_a_missing_gold_cannot_be_judged(reference):
    with pytest.raises(VerifierError):
        score(reference, "\\boxed{1}")


@pytest.mark.parametrize(
    ("reference", "response"),
    [(42, "\\boxed{42}"), (0.5, "\\boxed{\\frac12}"), (["1", "2"], "\\boxed{2, 1}"), ({"answer": "7"}, "\\boxed{7}")],
)
def test_gold_as_users_pass_it(reference, response):
    assert score(reference, response).score == 1.0


@pytest.mark.parametrize("gold", ["\\frac{1}{2}", "$\\frac{1}{2}$", "\\boxed{\\frac{1}{2}}", "0.5", "$0.5$", "1/2"])
def test_gold_spellings(gold):
    assert score(gold, "So the probability is $\\boxed{\\dfrac{1}{2}}$.").score == 1.0


def test_unboxed_responses_score_only_if_the_policy_allows():
    assert score("7", "so it is 7").score == 1.0
    result = score("7", "so it is 7", anchors=["boxed"], unanchored=False)
    assert (result.score, result.details["reason"]) == (0.0, "no_answer")


def test_real_chain_of_thought_responses_match_their_labels():
    for line in DATA.read_text().splitlines():
        case = json.loads(line)
        assert score(case["gold"], case["response"]).score == float(case["label"]), case["gold"]


def test_model_text_is_never_executed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for payload in (
        "__import__('os').system('touch marker') or 0",
        "open('marker', 'w').write('x') or 0",
        "\\boxed{__import__('os').system('touch marker')}",
        "().__class__.__base__.__subclasses__()",
    ):
        assert score("0", payload).score == 0.0
    assert not (tmp_path / "marker").exists()


def test_a_group_parses_its_gold_once():
    math_verifier._read_gold.cache_clear()
    for answer in ("3", "4", "3", "\\frac{6}{2}"):
        score("\\frac{9}{3}", f"\\boxed{{{answer}}}")
    info = math_verifier._read_gold.cache_info()
    assert (info.misses, info.hits) == (1, 3)


def test_config_is_strict_and_documented():
    with pytest.raises(ValidationError):
        MathVerifier.Config(tolerance=0.1)
    with pytest.raises(ValidationError):
        MathVerifier.Config(anchors=["somewhere"])
    for name, field in MathVerifier.Config.model_fields.items():
        assert field.description, name
    schema = MathVerifier.describe()["config_schema"]
    assert {"anchors", "unanchored", "percent", "decimal_places", "order", "escalate_to"} <= set(schema["properties"])


@pytest.mark.parametrize("target", [None, "judge", {"name": "judge", "config": {"rubric": "strict"}}])
def test_escalate_to_names_a_verifier(target):
    assert MathVerifier.Config(escalate_to=target).escalate_to == target


def test_registered_by_entry_point():
    (entry,) = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == "math"]
    assert entry.load() is MathVerifier
    registry = Registry([MathVerifier])
    assert registry.get("math").name == "math"
    described = MathVerifier.describe()
    assert described["kind"] == "rule" and described["description"]


def test_public_surface():
    assert sorted(rewardhub.verifiers.math.__all__) == sorted(
        [
            "Incomparable",
            "Limits",
            "MathConfig",
            "MathVerifier",
            "Policy",
            "TooComplex",
            "Unparseable",
            "equivalent",
            "parse_answer",
            "screen",
        ]
    )
    for name in rewardhub.verifiers.math.__all__:
        assert hasattr(rewardhub.verifiers.math, name)


class _InlineExecutor(Executor):
    """Runs calls in this process: enough to drive the scoring pipeline in a unit test."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def run(self, calls, on_progress=None):
        return [run_call(self.registry, call) for call in calls]


class _Judge(Verifier):
    """A stand-in model judge that accepts every answer."""

    name = "lenient_judge"

    def score(self, sample, config):
        return Result.ok(1.0, judged=sample.response)


async def test_escalation_hook_consults_the_named_verifier_when_the_rule_says_no():
    registry = Registry([MathVerifier, _Judge])
    scorer = Scorer(registry, _InlineExecutor(registry), Settings())
    spec = {"name": "math", "config": {"escalate_to": "lenient_judge"}}
    samples = [Sample(response="\\boxed{0.5}", reference="1/2"), Sample(response="one half", reference="1/2")]
    right, wrong = await scorer.score(samples, spec)
    assert right.score == 1.0 and "escalation" not in right.details
    assert wrong.score == 1.0
    assert wrong.details["rule"]["score"] == 0.0 and wrong.details["reason"] == "no_answer"
    assert wrong.details["escalation"]["details"]["judged"] == "one half"


def test_no_string_reaches_an_evaluating_parser(monkeypatch):
    """``parse_expr`` and string ``sympify`` run ``eval``: no answer text may ever reach them."""
    import latex2sympy2_extended.latex2sympy2 as latex_parser
    import latex2sympy2_extended.logic as latex_logic
    import latex2sympy2_extended.sets as latex_sets
    import sympy.parsing.sympy_parser as sympy_parser

    def refuse(*_args, **_kwargs):
        raise AssertionError("parse_expr called")

    def guard(original):
        def checked(value, *args, **kwargs):
            assert not isinstance(value, str), f"string sympify({value!r})"
            return original(value, *args, **kwargs)

        return checked

    from rewardhub.verifiers.math import parse

    parse._parse_cached.cache_clear()  # parse for real, not from an earlier test's cache
    math_verifier._read_gold.cache_clear()
    monkeypatch.setattr(latex_parser, "parse_expr", refuse)
    monkeypatch.setattr(sympy_parser, "parse_expr", refuse)
    monkeypatch.setattr(latex_sets, "sympify", guard(latex_sets.sympify))
    monkeypatch.setattr(latex_logic, "sympify", guard(latex_logic.sympify))
    for response in (
        "\\boxed{\\frac{1}{2}}",
        "2**(1/4)",
        "-1 + sqrt(3)",
        "\\boxed{\\{1,2,3\\}}",
        "\\boxed{x \\in \\{1,2,3\\}}",
        "\\boxed{x<y<z}",
        "\\boxed{(-\\infty,-8)\\cup(8,\\infty)}",
        "\\boxed{\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}}",
        "1,234.5",
        "().__class__.__base__.__subclasses__()",
        "__import__('os').system('ls') or 0",
    ):
        score("1/2", response)
