"""`pass_at_k`: per-sample expected pass@k credit, checked against hand-computed numbers."""

from importlib.metadata import entry_points
from itertools import combinations

import pytest

from rewardhub.calls import Call, run_call
from rewardhub.registry import Registry
from rewardhub.types import Sample
from rewardhub.verifiers.group.pass_at_k import PassAtKVerifier, group_pass_at_k, sample_pass_at_k


def shape(samples, **config):
    return PassAtKVerifier().score_group(samples, PassAtKVerifier.Config(**config))


def flagged(*correct):
    return [Sample(response="...", metadata={"correct": c}) for c in correct]


@pytest.mark.parametrize(
    ("n", "c", "k", "group", "wrong_sample"),
    [
        (4, 1, 1, 1 / 4, 0.0),  # k=1 is plain correctness
        (4, 1, 2, 1 - 3 / 6, 1 - 2 / 3),  # C(3,2)/C(4,2); wrong: C(2,1)/C(3,1)
        (4, 2, 2, 1 - 1 / 6, 1 - 1 / 3),
        (8, 1, 4, 1 - 35 / 70, 1 - 20 / 35),
        (4, 0, 2, 0.0, 0.0),
        (4, 3, 2, 1.0, 1.0),  # every pair with the one wrong sample has a right one
        (4, 4, 4, 1.0, None),
    ],
)
def test_closed_forms(n, c, k, group, wrong_sample):
    assert group_pass_at_k(n, c, k) == pytest.approx(group)
    if wrong_sample is not None:
        assert sample_pass_at_k(n, c, k, is_correct=False) == pytest.approx(wrong_sample)
    assert sample_pass_at_k(n, c, k, is_correct=True) == 1.0


@pytest.mark.parametrize("correct", [(1, 0, 0, 0, 0), (1, 1, 0, 0, 0), (0, 1, 0, 1, 1), (0, 0, 0, 0, 0)])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_sample_credit_is_the_mean_over_the_k_subsets_that_contain_it(correct, k):
    n, c = len(correct), sum(correct)
    for i, is_correct in enumerate(correct):
        subsets = [s for s in combinations(range(n), k) if i in s]
        by_enumeration = sum(any(correct[j] for j in s) for s in subsets) / len(subsets)
        assert sample_pass_at_k(n, c, k, bool(is_correct)) == pytest.approx(by_enumeration)
    mean = sum(sample_pass_at_k(n, c, k, bool(x)) for x in correct) / n
    assert mean == pytest.approx(group_pass_at_k(n, c, k))


def test_metadata_correctness():
    results = shape(flagged(True, False, False, False), k=2)
    assert [r.score for r in results] == pytest.approx([1.0, 1 / 3, 1 / 3, 1 / 3])
    assert results[1].details == {
        "correct": False,
        "correct_count": 1,
        "group_size": 4,
        "k": 2,
        "group_pass_at_k": 0.5,
        "correctness_from": "metadata",
    }


def test_numeric_scores_count_from_the_threshold():
    results = shape(flagged(0.9, 0.4, 1, 0), k=1, threshold=0.5)
    assert [r.details["correct"] for r in results] == [True, False, True, False]


def test_k_is_clamped_to_the_group_size():
    results = shape(flagged(True, False), k=8)
    assert [r.score for r in results] == [1.0, 1.0]
    assert results[0].details["k"] == 2


@pytest.mark.parametrize("equivalence", ["math", "text"])
def test_reference_correctness_when_metadata_is_missing(equivalence):
    responses = ["\\boxed{\\frac{1}{2}}", "The answer is 0.5", "\\boxed{2}", "I am not sure."]
    samples = [Sample(response=r, reference="1/2") for r in responses]
    results = shape(samples, k=2, equivalence=equivalence)
    assert [r.details["correct"] for r in results] == [True, True, False, False]
    assert [r.score for r in results] == pytest.approx([1.0, 1.0, 2 / 3, 2 / 3])
    assert results[0].details["correctness_from"] == "reference"


@pytest.mark.parametrize(
    ("response", "reference", "math", "text"),
    [
        ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}", True, False),
        ("\\boxed{x = 3}", "3", True, True),
        ("The answer is 3", "\\boxed{3}", True, False),  # a boxed gold is read by math only
        ("\\boxed{4}", 4, True, True),
    ],
)
def test_math_and_text_equivalence(response, reference, math, text):
    sample = [Sample(response=response, reference=reference)]
    assert shape(sample, k=1)[0].details["correct"] is math
    assert shape(sample, k=1, equivalence="text")[0].details["correct"] is text


def test_forced_reference_source_ignores_metadata():
    samples = [Sample(response="\\boxed{3}", reference="3", metadata={"correct": False})]
    assert shape(samples, k=1, correctness="reference")[0].score == 1.0


@pytest.mark.parametrize(
    ("samples", "config", "message"),
    [
        ([Sample(response="\\boxed{3}")], {}, "no usable reference"),
        ([Sample(response="\\boxed{3}", reference=["3"])], {}, "no usable reference"),
        ([Sample(response="x", metadata={"correct": "yes"})], {}, "must be a bool or a number"),
        ([Sample(response="x", reference="3")], {"correctness": "metadata"}, "must be a bool or a number"),
        ([Sample(response="\\boxed{3}", reference="\\frac{")], {}, "not readable math"),
        ([Sample(response="\\boxed{9^{9^{9^{9}}}}", reference="3")], {}, "too complex to judge"),
    ],
)
def test_unknown_correctness_is_an_error_for_the_group(samples, config, message):
    registry = Registry([PassAtKVerifier])
    call = Call("pass_at_k", PassAtKVerifier.Config(**config), tuple(samples), "group", timeout_s=5)
    results = run_call(registry, call)
    assert [r.status for r in results] == ["error"] * len(samples)
    assert message in results[0].error


def test_config_fields_are_documented_and_registered():
    assert all(field.description for field in PassAtKVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="pass_at_k")
    assert ep.load() is PassAtKVerifier
