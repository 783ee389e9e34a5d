"""`majority_vote`: answer extraction and normalisation, the vote, ties, consensus, label accuracy."""

from importlib.metadata import entry_points

import pytest

from rewardhub.execution.calls import Call, run_call
from rewardhub.registry import Registry
from rewardhub.types import Sample
from verifiers.group.answers import extract_final_answer, normalize_final_answer
from verifiers.group.majority_vote import MajorityVoteVerifier


def vote(responses, reference=None, **config):
    samples = [Sample(response=r, reference=reference, group="g") for r in responses]
    return MajorityVoteVerifier().score_group(samples, MajorityVoteVerifier.Config(**config))


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("so it is \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"),
        ("\\boxed{1} then \\boxed{\\{2, 3\\}}", "\\{2, 3\\}"),  # the last box, braces balanced
        ("<answer> 42 </answer>", "42"),
        ("Thus the answer is $7$.", "$7$."),
        ("Answer: B", "B"),
        ("6 * 7 = 42\n#### 42", "42"),
        ("<think>The answer is 5</think>I think it is 6", None),  # only the answer part counts
        ("I am not sure.", None),
        ("\\boxed{unclosed", None),
    ],
)
def test_extraction(response, answer):
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
def test_same_answers_have_one_normal_form(a, b):
    assert normalize_final_answer(a) == normalize_final_answer(b)


@pytest.mark.parametrize(("a", "b"), [("2\\sqrt{2}", "\\sqrt{8}"), ("1/2", "1/3"), ("1,5", "15"), ("-1", "1")])
def test_different_answers_stay_different(a, b):
    assert normalize_final_answer(a) != normalize_final_answer(b)


@pytest.mark.parametrize(
    ("responses", "config", "scores", "majority"),
    [
        (["\\boxed{4}", "\\boxed{4.0}", "\\boxed{5}"], {}, [1, 1, 0], "4"),
        (
            ["\\boxed{1/2}", "The answer is 0.5", "\\boxed{3}", "\\boxed{3}", "<answer>\\frac12</answer>"],
            {},
            [1, 1, 0, 0, 0],
            "1/2",
        ),
        (["\\boxed{4}", "no idea", "no idea", "still no idea"], {}, [1, 0, 0, 0], "4"),  # no answer, no vote
        (["\\boxed{5}", "\\boxed{4}", "\\boxed{4}", "\\boxed{5}"], {}, [1, 0, 0, 1], "5"),  # tie: first seen wins
        (["\\boxed{4}", "\\boxed{4}", "\\boxed{5}", "\\boxed{6}"], {"min_share": 0.5}, [1, 1, 0, 0], "4"),
        (
            ["\\boxed{4}", "\\boxed{5}", "\\boxed{6}", "\\boxed{4}"],
            {"min_share": 0.6},
            [0, 0, 0, 0],
            "4",
        ),  # no consensus
        (["nothing", "at all"], {}, [0, 0], None),
        (["\\boxed{4}"], {}, [1], "4"),
    ],
)
def test_the_vote(responses, config, scores, majority):
    results = vote(responses, **config)
    assert [r.score for r in results] == scores
    assert all(r.status == "ok" and r.details["majority"] == majority for r in results)


def test_details():
    results = vote(["\\boxed{5}", "\\boxed{4}", "\\boxed{4}", "no"], reference="4")
    assert results[1].details == {
        "answer": "4",
        "normalized": "4",
        "majority": "4",
        "majority_votes": 2,
        "voters": 3,
        "group_size": 4,
        "tie": False,
        "consensus": True,
        "majority_matches_reference": True,
    }
    assert results[3].details["answer"] is None
    assert vote(["\\boxed{5}"], reference="4")[0].details["majority_matches_reference"] is False
    assert "majority_matches_reference" not in vote(["\\boxed{5}"])[0].details


def test_it_runs_as_a_group_call():
    registry = Registry([MajorityVoteVerifier])
    samples = tuple(Sample(response=f"\\boxed{{{a}}}", group="g") for a in (1, 1, 2))
    call = Call("majority_vote", MajorityVoteVerifier.Config(), samples, "group", timeout_s=5)
    assert [r.score for r in run_call(registry, call)] == [1.0, 1.0, 0.0]


def test_config_fields_are_documented_and_registered():
    assert all(field.description for field in MajorityVoteVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="majority_vote")
    assert ep.load() is MajorityVoteVerifier


def test_through_the_service_group_rewards_sum_with_per_sample_ones(http):
    spec = {"sum": [{"verifier": "exact", "weight": 1.0}, {"verifier": "majority_vote", "weight": 0.5}]}
    responses = ["\\boxed{4}", "\\boxed{4}", "\\boxed{5}", "4"]
    samples = [{"response": r, "reference": "4", "group": "q"} for r in responses]
    results = http.post("/v1/score", json={"verifier": spec, "samples": samples}).json()["results"]
    # exact only matches the bare "4"; the last sample gives no boxed answer, so it has no vote
    assert [r["score"] for r in results] == [0.5, 0.5, 0.0, 1.0]
    assert results[0]["details"]["components"]["majority_vote"]["details"]["majority"] == "4"
