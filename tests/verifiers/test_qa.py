"""`f1` and `qa_match`: SQuAD normalisation, alias lists, answer extraction, bad references."""

from importlib.metadata import entry_points

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.qa import F1Verifier, QAMatchVerifier, extract_answer, normalize_answer, token_f1


def f1(response, reference, **config):
    return F1Verifier().score(Sample(response=response, reference=reference), F1Verifier.Config(**config))


def match(response, reference, **config):
    return QAMatchVerifier().score(Sample(response=response, reference=reference), QAMatchVerifier.Config(**config))


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  an   apple, a pear ", "apple pear"),
        ("Theatre", "theatre"),  # "the" only as a whole word
        ("«Paris»。", "paris"),  # Unicode punctuation too
        ("", ""),
    ],
)
def test_normalization(text, normalized):
    assert normalize_answer(text) == normalized


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        ("Barack Obama", "Barack Obama", 1.0),
        ("the president Barack Obama", "Barack Obama", 0.8),  # p=2/3, r=1
        ("Obama", "Barack Obama", 2 / 3),  # p=1, r=1/2
        ("George Bush", "Barack Obama", 0.0),
        ("", "Barack Obama", 0.0),
        ("the", "a", 1.0),  # both empty after normalisation
        ("a a b", "a b b", 2 / 3),  # articles removed: "b" vs "b b" -> p=1, r=1/2
    ],
)
def test_token_f1(prediction, gold, expected):
    assert token_f1(prediction, gold) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("response", "how", "answer"),
    [
        ("<think>maybe Rome</think><answer>Paris</answer>", "auto", "Paris"),
        ("so \\boxed{\\frac{1}{2}} it is", "auto", "\\frac{1}{2}"),
        ("Let me think.\nThe answer is: Paris.", "auto", "Paris"),
        ("Answer: Paris", "auto", "Paris"),
        ("<think>The answer is Rome</think>Paris", "auto", "Paris"),
        ("Paris", "auto", "Paris"),
        ("Paris", "answer_tag", ""),
        ("<answer>x</answer> The answer is y", "answer_is", "y"),
        ("<answer>x</answer>", "full", "<answer>x</answer>"),
    ],
)
def test_extraction(response, how, answer):
    assert extract_answer(response, how) == answer


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("<answer>Barack Obama</answer>", "Barack Obama", 1.0),
        ("<answer>Obama</answer>", ["Barack Obama", "Obama"], 1.0),  # best alias
        ("<answer>Obama</answer>", {"aliases": ["Barack Obama"]}, 2 / 3),
        ("<answer>1945</answer>", 1945, 1.0),
        ("<answer>Lincoln</answer>", ["Barack Obama", "Obama"], 0.0),
    ],
)
def test_f1_takes_the_best_alias(response, reference, expected):
    result = f1(response, reference)
    assert result.status == "ok"
    assert result.score == pytest.approx(expected)


def test_f1_details():
    details = f1("<answer>Obama</answer>", ["Barack Obama", "Obama"]).details
    assert details == {"prediction": "Obama", "best_alias": "Obama", "aliases": 2}


@pytest.mark.parametrize(
    ("response", "reference", "config", "expected"),
    [
        ("The Eiffel Tower.", "eiffel tower", {}, 1.0),
        ("<answer>NYC</answer>", ["New York City", "NYC"], {}, 1.0),
        ("It is Paris, France", "Paris", {}, 0.0),
        ("It is Paris, France", "Paris", {"contains": True}, 1.0),
        ("It is Parisian food", "Paris", {"contains": True}, 0.0),  # whole tokens only
        ("The answer is 7", "7", {}, 1.0),
        ("The answer is 7", "7", {"extract": "full"}, 0.0),
        ("The answer is 17", "7", {"contains": True}, 0.0),
    ],
)
def test_qa_match(response, reference, config, expected):
    assert match(response, reference, **config).score == expected


def test_qa_match_details_name_the_alias():
    details = match("<answer>nyc</answer>", ["New York City", "NYC"]).details
    assert details == {"prediction": "nyc", "normalized": "nyc", "matched_alias": "NYC"}


@pytest.mark.parametrize("reference", [None, [], {}, {"answer": "x"}, [["x"]], [True], ["the", "?"], {"aliases": []}])
@pytest.mark.parametrize("score", [f1, match])
def test_malformed_reference_is_an_error(score, reference):
    with pytest.raises(VerifierError):
        score("x", reference)


@pytest.mark.parametrize(("name", "cls"), [("f1", F1Verifier), ("qa_match", QAMatchVerifier)])
def test_config_fields_are_documented_and_registered(name, cls):
    assert all(field.description for field in cls.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name=name)
    assert ep.load() is cls
