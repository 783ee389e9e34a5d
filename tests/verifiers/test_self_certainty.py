"""self_certainty: INTUITOR's KL from uniform and token entropy over the top-k log-probs a sample carries.

Worked numbers by hand, the truncations' bounds against full distributions, lm-polygraph 0.7.0's
released ``SelfCertainty`` on full-vocabulary log-probs, INTUITOR's logits formula, every accepted
shape and every malformed one.
"""

from __future__ import annotations

import importlib.util
import math
import random
import sys
import types
from importlib.metadata import PackageNotFoundError, distribution, entry_points

import pytest
from pydantic import ValidationError

from rewardhub.calls import Call, run_call
from rewardhub.registry import Registry
from rewardhub.types import Sample
from rewardhub.verifiers.self_certainty import SelfCertaintyVerifier, read_top_logprobs, token_stats

LN = math.log
LM_POLYGRAPH = "0.7.0"


def score(logprobs, **config):
    [result] = run_call(
        Registry([SelfCertaintyVerifier]),
        Call(
            "self_certainty",
            SelfCertaintyVerifier.Config(**config),
            (Sample(response="x", metadata=logprobs),),
            "rule",
            10,
        ),
    )
    return result


# --- worked by hand ---------------------------------------------------------------------------------


def test_one_token_by_hand():
    # p = (1/2, 1/4, 1/4): KL(U_3 ‖ p) = -ln 3 - (ln ½ + 2 ln ¼)/3 = 0.0566330; H = ½ ln 2 + ½ ln 4 = 1.0397208
    stats = token_stats([LN(0.5), LN(0.25), LN(0.25)])
    assert stats.self_certainty == pytest.approx(0.0566330, abs=1e-7)
    assert stats.entropy == pytest.approx(1.0397208, abs=1e-7)
    uniform = token_stats([LN(0.5), LN(0.5)])
    assert uniform.self_certainty == pytest.approx(0.0, abs=1e-12) and uniform.entropy == pytest.approx(LN(2))


def test_the_two_truncations_by_hand():
    top2 = [LN(0.6), LN(0.2)]  # the top 2 of (0.6, 0.2, 0.1, 0.1) over a vocabulary of 4
    # renormalised: (0.75, 0.25) over U_2: -ln 2 - (ln .75 + ln .25)/2 = 0.1438410
    renormalized = token_stats(top2, "renormalized")
    assert renormalized.self_certainty == pytest.approx(0.1438410, abs=1e-7)
    assert renormalized.entropy == pytest.approx(-(0.75 * LN(0.75) + 0.25 * LN(0.25)))
    # uniform tail: the 0.2 left is 0.1 + 0.1, which is the true distribution, so both are exact:
    # KL = -ln 4 - (ln .6 + ln .2 + 2 ln .1)/4 = 0.2950641; H = -(.6 ln .6 + .2 ln .2 + .2 ln .1) = 1.0889000
    tail = token_stats(top2, "uniform_tail", vocab_size=4)
    assert tail.self_certainty == pytest.approx(0.2950641, abs=1e-7)
    assert tail.entropy == pytest.approx(1.0889000, abs=1e-7)


def _random_distribution(rng: random.Random, vocab: int) -> list[float]:
    logits = [rng.gauss(0, 3) for _ in range(vocab)]
    top = max(logits)
    norm = top + LN(sum(math.exp(x - top) for x in logits))
    return sorted((x - norm for x in logits), reverse=True)


def test_uniform_tail_bounds_the_full_vocabulary_values():
    """An even tail is the flattest: self-certainty from below, entropy from above; k = |V| is exact."""
    rng = random.Random(0)
    for _ in range(50):
        full = _random_distribution(rng, 64)
        exact = token_stats(full)
        for k in (2, 5, 20):
            bound = token_stats(full[:k], "uniform_tail", vocab_size=64)
            assert bound.self_certainty <= exact.self_certainty + 1e-9
            assert bound.entropy >= exact.entropy - 1e-9
        assert token_stats(full).self_certainty == pytest.approx(-LN(64) - sum(full) / 64)


# --- the reference: lm-polygraph's released SelfCertainty, and INTUITOR's formula ----------------------


@pytest.fixture
def polygraph_self_certainty(monkeypatch):
    """lm-polygraph 0.7.0's ``SelfCertainty``, its two modules loaded as released (installed --no-deps:
    its package __init__ pulls in models and datasets; only the logging decorator is stood in for)."""
    try:
        dist = distribution("lm-polygraph")
    except PackageNotFoundError:
        pytest.skip("lm-polygraph is not installed (.ci/run installs it --no-deps)")
    assert dist.version == LM_POLYGRAPH
    common = types.ModuleType("lm_polygraph.utils.common")
    common.polygraph_module_init = lambda init: init  # type: ignore[attr-defined]
    for name in ("lm_polygraph", "lm_polygraph.utils", "lm_polygraph.estimators"):
        package = types.ModuleType(name)
        package.__path__ = []  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, name, package)
    monkeypatch.setitem(sys.modules, "lm_polygraph.utils.common", common)
    for module in ("estimator", "self_certainty"):
        name = f"lm_polygraph.estimators.{module}"
        spec = importlib.util.spec_from_file_location(name, dist.locate_file(f"lm_polygraph/estimators/{module}.py"))
        loaded = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, loaded)
        spec.loader.exec_module(loaded)
    return sys.modules["lm_polygraph.estimators.self_certainty"].SelfCertainty()


def test_agrees_with_lm_polygraph_on_full_vocabulary_log_probs(polygraph_self_certainty):
    import numpy as np

    rng = random.Random(1)
    responses = [[_random_distribution(rng, 48) for _ in range(rng.randint(1, 12))] for _ in range(30)]
    theirs = polygraph_self_certainty({"greedy_log_probs": [[np.array(t) for t in r] for r in responses]})
    ours = [score({"logprobs": r}).score for r in responses]
    agree = sum(math.isclose(o, -t, abs_tol=1e-9) for o, t in zip(ours, theirs, strict=True))
    print(f"self_certainty vs lm-polygraph {LM_POLYGRAPH} SelfCertainty (negated): {agree}/{len(responses)} agree")
    assert agree == len(responses)


def test_intuitor_logits_formula_is_this_plus_log_vocab():
    """INTUITOR's code: ``logsumexp(logits) - mean(logits)`` per token, averaged: ours plus ln |V|."""
    rng = random.Random(2)
    logits = [[rng.gauss(0, 2) for _ in range(32)] for _ in range(7)]
    lse = [max(row) + LN(sum(math.exp(x - max(row)) for x in row)) for row in logits]
    intuitor = sum(z - sum(row) / len(row) for z, row in zip(lse, logits, strict=True)) / len(logits)
    logprobs = [[x - z for x in row] for z, row in zip(lse, logits, strict=True)]
    assert score({"logprobs": logprobs}).score == pytest.approx(intuitor - LN(32), abs=1e-9)


# --- the verifier -----------------------------------------------------------------------------------


def test_scores_and_details():
    tokens = [[LN(0.5), LN(0.25), LN(0.25)], [LN(0.5), LN(0.5)]]
    result = score({"logprobs": tokens, "response_tokens": 2}, per_token=True)
    assert result.status == "ok" and result.score == pytest.approx(0.0566330 / 2, abs=1e-7)
    assert result.steps == pytest.approx([0.0566330, 0.0], abs=1e-7)
    assert result.details["entropy"] == pytest.approx((1.0397208 + LN(2)) / 2)
    assert (result.details["tokens"], result.details["top_k"]) == (2, 2)
    negative = score({"logprobs": tokens}, score="negative_entropy")
    assert negative.score == pytest.approx(-(1.0397208 + LN(2)) / 2) and negative.steps is None


def test_every_engine_shape_reads_the_same():
    values = [[LN(0.7), LN(0.2)], [LN(0.9), LN(0.05)]]
    chat = [
        {
            "token": "a",
            "logprob": v[0],
            "top_logprobs": [{"token": "a", "logprob": v[0]}, {"token": "b", "logprob": v[1]}],
        }
        for v in values
    ]
    completions = [{"a": v[0], "b": v[1]} for v in values]
    for shape in (values, chat, {"content": chat}, completions):
        assert read_top_logprobs(shape) == values


def test_confident_repetition_is_the_best_score():
    """The known hack: self-certainty rewards confidence, not correctness (pair it with a correctness term)."""
    repeated = [[LN(0.999), LN(0.0005), LN(0.0005)]] * 50
    varied = [[LN(0.6), LN(0.3), LN(0.1)]] * 8
    assert score({"logprobs": repeated}).score > score({"logprobs": varied}).score


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({}, "metadata.logprobs is missing"),
        ({"logprobs": "nope"}, "metadata.logprobs must be a list"),
        ({"logprobs": []}, "metadata.logprobs is empty"),
        ({"logprobs": [[-0.1, -3.0], [-0.5]]}, "metadata.logprobs[1] holds 1 alternative(s)"),
        ({"logprobs": [[-0.1, 0.5]]}, "metadata.logprobs[0][1] = 0.5 is not a log-probability"),
        ({"logprobs": [[-0.1, float("nan")]]}, "metadata.logprobs[0][1] is not a finite log-probability"),
        ({"logprobs": [[-0.1, "x"]]}, "metadata.logprobs[0][1] is not a finite"),
        ({"logprobs": [[-0.1, -0.2]]}, "metadata.logprobs[0]: its probabilities sum to 1.7236"),
        ({"logprobs": [{"top_logprobs": 3}]}, "metadata.logprobs[0].top_logprobs must be a list or a map"),
        ({"logprobs": [[-0.1, -3.0]], "response_tokens": 4}, "has 1 entries but metadata.response_tokens is 4"),
        ({"logprobs": {"content": [[-0.1, -3.0], 7]}}, "metadata.logprobs.content[1] must be a list"),
    ],
)
def test_malformed_log_probs_are_an_error_naming_the_field(metadata, message):
    result = score(metadata)
    assert result.status == "error" and result.score == 0.0
    assert message in (result.error or ""), result.error


def test_uniform_tail_needs_a_vocabulary_larger_than_k():
    with pytest.raises(ValidationError, match="needs vocab_size"):
        SelfCertaintyVerifier.Config(truncation="uniform_tail")
    result = score({"logprobs": [[-0.1, -3.0, -4.0]]}, truncation="uniform_tail", vocab_size=3)
    assert result.status == "error" and "vocab_size 3 leaves no tail" in (result.error or "")


def test_registered_and_documented():
    assert all(field.description for field in SelfCertaintyVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="self_certainty")
    assert ep.load() is SelfCertaintyVerifier
