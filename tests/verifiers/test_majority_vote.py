"""`majority_vote`: reading answers, when two agree (math and text), the vote, ties, consensus."""

from importlib.metadata import entry_points

import pytest

from rewardhub.calls import Call, run_call
from rewardhub.registry import Registry
from rewardhub.types import Sample
from rewardhub.verifiers.group.answers import extract_final_answer, normalize_final_answer, read_answer, same_answer
from rewardhub.verifiers.group.majority_vote import MajorityVoteVerifier


def vote(responses, reference=None, **config):
    samples = [Sample(response=r, reference=reference, group="g") for r in responses]
    return MajorityVoteVerifier().score_group(samples, MajorityVoteVerifier.Config(**config))


# -- text equivalence: extraction and normal form ------------------------------------------------


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("so it is \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"),
        ("\\boxed{1} then \\boxed{\\{2, 3\\}}", "\\{2, 3\\}"),  # the last box, braces balanced
        ("<answer> 42 </answer>", "42"),
        ("Thus the answer is $7$.", "7"),
        ("Answer: B", "(B)"),
        ("The answer is Paris.", "Paris"),  # text equivalence: answers in words too
        ("6 * 7 = 42\n#### 42", "42"),
        ("<think>The answer is 5</think>I think it is 6", "6"),  # only the answer part counts
        ("I am not sure.", None),
        ("\\boxed{unclosed", None),
    ],
)
def test_text_extraction(response, answer):
    assert extract_final_answer(response) == answer


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("\\frac{1}{2}", "0.5"),
        ("\\dfrac{1}{2}", "1/2"),
        ("$0.50$.", "\\left(\\frac{2}{4}\\right)"),
        ("x = 3", "3"),
        ("1,000", "1000"),
        ("\\text{(A)}", "a"),
        ("3.0", "3"),
        ("\\{1, 2\\}", "\\{1,2\\}"),
        ("10\\,\\text{cm}", "10cm"),
    ],
)
def test_text_normal_form_is_shared_by_equal_answers(a, b):
    assert normalize_final_answer(a) == normalize_final_answer(b)


@pytest.mark.parametrize(("a", "b"), [("2\\sqrt{2}", "\\sqrt{8}"), ("1/2", "1/3"), ("1,5", "15"), ("-1", "1")])
def test_text_normal_form_keeps_different_answers_apart(a, b):
    assert normalize_final_answer(a) != normalize_final_answer(b)


# -- math equivalence -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("\\boxed{\\frac{1}{2}}", "The answer is 0.5", True),
        ("\\boxed{2\\sqrt{2}}", "\\boxed{\\sqrt{8}}", True),  # what text equivalence cannot see
        ("\\boxed{x = 3}", "#### 3", True),
        ("<answer>\\frac12</answer>", "\\boxed{1/2}", True),  # an <answer> block is read first
        ("\\boxed{(0, 1]}", "\\boxed{[0, 1]}", False),
        ("\\boxed{\\{1, 2\\}}", "\\boxed{\\{2, 1\\}}", True),
    ],
)
def test_math_equivalence(a, b, same):
    first, other = read_answer(a, "math"), read_answer(b, "math")
    assert same_answer(first, other) is same


# -- the vote -------------------------------------------------------------------------------------


@pytest.mark.parametrize("equivalence", ["math", "text"])
@pytest.mark.parametrize(
    ("responses", "config", "scores", "majority"),
    [
        (["\\boxed{4}", "\\boxed{4.0}", "\\boxed{5}"], {}, [1, 1, 0], "4"),
        (
            ["\\boxed{1/2}", "The answer is 0.5", "\\boxed{3}", "\\boxed{3}", "\\boxed{\\frac{1}{2}}"],
            {},
            [1, 1, 0, 0, 1],
            "1/2",
        ),
        (["\\boxed{4}", "I am not sure.", "I am not sure.", "I am not sure."], {}, [1, 0, 0, 0], "4"),  # no vote
        (["\\boxed{5}", "\\boxed{4}", "\\boxed{4}", "\\boxed{5}"], {}, [1, 0, 0, 1], "5"),  # tie: first seen wins
        (["\\boxed{4}", "\\boxed{4}", "\\boxed{5}", "\\boxed{6}"], {"min_share": 0.5}, [1, 1, 0, 0], "4"),
        (
            ["\\boxed{4}", "\\boxed{5}", "\\boxed{6}", "\\boxed{4}"],
            {"min_share": 0.6},
            [0, 0, 0, 0],
            "4",
        ),  # no consensus
        (["I am not sure.", "Neither am I."], {}, [0, 0], None),
        (["\\boxed{4}"], {}, [1], "4"),
    ],
)
def test_the_vote(responses, config, scores, majority, equivalence):
    results = vote(responses, equivalence=equivalence, **config)
    assert [r.score for r in results] == scores
    assert all(r.status == "ok" and r.details["majority"] == majority for r in results)


def test_math_equivalence_merges_what_text_keeps_apart():
    responses = ["\\boxed{\\sqrt{8}}", "\\boxed{2\\sqrt{2}}", "\\boxed{3}", "\\boxed{3}", "\\boxed{2 \\sqrt 2}"]
    assert [r.score for r in vote(responses)] == [1, 1, 0, 0, 1]
    assert [r.score for r in vote(responses, equivalence="text")] == [0, 0, 1, 1, 0]


def test_an_answer_too_complex_to_read_is_that_samples_error_and_casts_no_vote():
    results = vote(["\\boxed{9^{9^{9^{9}}}}", "\\boxed{2}", "\\boxed{3}", "\\boxed{3}"])
    assert [r.status for r in results] == ["error", "ok", "ok", "ok"]
    assert "too complex" in results[0].error
    assert [r.score for r in results[1:]] == [0, 1, 1]
    assert results[1].details["voters"] == 3


def test_details():
    results = vote(["\\boxed{5}", "\\boxed{4}", "\\boxed{4}", "I am not sure."], reference="4")
    assert results[1].details == {
        "answer": "4",
        "majority": "4",
        "majority_votes": 2,
        "voters": 3,
        "distinct_answers": 2,
        "group_size": 4,
        "tie": False,
        "consensus": True,
        "majority_matches_reference": True,
    }
    assert results[3].details["answer"] is None
    assert vote(["\\boxed{5}"], reference="4")[0].details["majority_matches_reference"] is False
    assert vote(["\\boxed{0.5}"], reference="\\frac{1}{2}")[0].details["majority_matches_reference"] is True
    assert "majority_matches_reference" not in vote(["\\boxed{5}"])[0].details
    assert "majority_matches_reference" not in vote(["\\boxed{5}"], reference="\\frac{")[0].details


def test_it_runs_as_a_group_call():
    registry = Registry([MajorityVoteVerifier])
    samples = tuple(Sample(response=f"\\boxed{{{a}}}", group="g") for a in (1, 1, 2))
    call = Call("majority_vote", MajorityVoteVerifier.Config(), samples, "group", timeout_s=5)
    assert [r.score for r in run_call(registry, call)] == [1.0, 1.0, 0.0]


def test_config_fields_are_documented_and_registered():
    assert all(field.description for field in MajorityVoteVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="majority_vote")
    assert ep.load() is MajorityVoteVerifier
