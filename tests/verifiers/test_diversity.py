"""`diversity`: n-grams, pairwise Jaccard dissimilarity and distinct-n, on hand-computed groups."""

from importlib.metadata import entry_points

import pytest

from rewardhub.types import Sample
from rewardhub.verifiers.group.diversity import DiversityVerifier, jaccard, ngrams


def bonus(responses, **config):
    samples = [Sample(response=r, group="g") for r in responses]
    return DiversityVerifier().score_group(samples, DiversityVerifier.Config(**config))


def test_ngrams_are_lowercased_word_runs():
    assert ngrams("The cat, the CAT!", 2) == [("the", "cat"), ("cat", "the"), ("the", "cat")]
    assert ngrams("one", 2) == []


@pytest.mark.parametrize(
    ("a", "b", "similarity"),
    [({1, 2}, {1, 2}, 1.0), ({1, 2}, {2, 3}, 1 / 3), ({1}, {2}, 0.0), (set(), set(), 1.0), (set(), {1}, 0.0)],
)
def test_jaccard(a, b, similarity):
    assert jaccard(a, b) == pytest.approx(similarity)


@pytest.mark.parametrize(
    ("responses", "config", "scores"),
    [
        (["a b c", "a b c"], {}, [0.0, 0.0]),  # identical
        (["a b c", "x y z"], {}, [1.0, 1.0]),  # nothing shared
        # bigrams: {ab, bc}, {ab, bd}, {xy}; J(1,2) = 1/3, J(1,3) = J(2,3) = 0
        (["a b c", "a b d", "x y"], {}, [1 - (1 / 3) / 2, 1 - (1 / 3) / 2, 1.0]),
        (["a b c", "a b d", "x y"], {"n": 1}, [1 - (2 / 4) / 2, 1 - (2 / 4) / 2, 1.0]),
        (["a b c", "a b d", "x y"], {"method": "distinct"}, [0.5, 0.5, 1.0]),
        (["a b c", "a b"], {"method": "distinct"}, [0.5, 0.0]),
        (["alone in its group"], {}, [1.0]),
        (["alone in its group"], {"method": "distinct"}, [1.0]),
        (["<think>same same</think>a b", "<think>same same</think>c d"], {"strip_think": True}, [1.0, 1.0]),
        (["<think>same same</think>a b", "<think>same same</think>c d"], {}, [4 / 7, 4 / 7]),  # 3 of 7 bigrams shared
    ],
)
def test_bonus(responses, config, scores):
    results = bonus(responses, **config)
    assert [r.status for r in results] == ["ok"] * len(responses)
    assert [r.score for r in results] == pytest.approx(scores)


def test_details_carry_group_distinct_n():
    results = bonus(["a b c", "a b d", "x y"])
    # 5 bigrams in all, 4 distinct
    assert results[0].details == {"ngrams": 2, "group_size": 3, "group_distinct_n": 0.8}
    assert bonus(["a", "b"])[0].details["group_distinct_n"] == 0.0


def test_config_fields_are_documented_and_registered():
    assert all(field.description for field in DiversityVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="diversity")
    assert ep.load() is DiversityVerifier
