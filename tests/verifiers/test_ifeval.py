"""`ifeval` with today's own constraint list: each type on a passing and a failing response, scoring modes,
bad references; and the same intent read by IFEval's rules (an instruction row), side by side."""

from importlib.metadata import entry_points

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.ifeval import CONSTRAINT_TYPES, IFEvalVerifier, parse_constraint


def score(response, reference, **config):
    return IFEvalVerifier().score(Sample(response=response, reference=reference), IFEvalVerifier.Config(**config))


# (constraint, response, passes, observed)
CASES = [
    ({"type": "word_count", "min": 3}, "one two three", True, 3),
    ({"type": "word_count", "min": 3}, "one two", False, 2),
    ({"type": "word_count", "max": 2}, "don't stop", False, 3),  # a word is a run of \w: "don", "t", "stop"
    ({"type": "word_count", "exact": 5}, "It's a test-case.", True, 5),
    ({"type": "char_count", "max": 5}, "  hello \n", True, 5),
    ({"type": "char_count", "min": 6}, "hello", False, 5),
    ({"type": "sentence_count", "exact": 3}, "One. Two! Three? ", True, 3),
    ({"type": "sentence_count", "exact": 3}, "Pi is 3.14. Really.", False, 2),  # "3.14" is not a sentence end
    ({"type": "sentence_count", "max": 1}, "No final stop", True, 1),
    ({"type": "paragraph_count", "exact": 2}, "First.\n\n  \nSecond.\n", True, 2),
    ({"type": "paragraph_count", "exact": 2}, "First.\nStill first.", False, 1),
    ({"type": "paragraph_count", "exact": 3, "separator": "***"}, "a\n***\nb\n***\nc", True, 3),
    ({"type": "bullet_count", "exact": 3}, "Intro:\n* a\n- b\n  + c\nnot-a-bullet", True, 3),
    ({"type": "bullet_count", "exact": 3}, "* a\n* b\n**bold** line", False, 2),
    ({"type": "placeholder_count", "min": 2}, "Dear [name], at [address].", True, 2),
    ({"type": "placeholder_count", "min": 2}, "Dear [name].", False, 1),
    ({"type": "highlight_count", "min": 2}, "*one* and **two**", True, 2),
    ({"type": "highlight_count", "min": 2}, "*one* and 2 * 3", False, 1),
    ({"type": "section_count", "exact": 2}, "SECTION 1\nx\nSECTION 2\ny", True, 2),
    ({"type": "section_count", "exact": 2, "marker": "Part"}, "Part 1: x. Part two: y", False, 1),
    ({"type": "capital_word_count", "min": 2}, "This is VERY IMPORTANT", True, 2),
    ({"type": "capital_word_count", "max": 0}, "I think so", False, 1),
    ({"type": "keyword_frequency", "keyword": "data", "min": 2}, "Data beats opinions; data wins. database", True, 2),
    ({"type": "keyword_frequency", "keyword": "data", "min": 2, "case_sensitive": True}, "Data and data", False, 1),
    (
        {"type": "keywords", "include": ["Rust", "safety"]},
        "rust gives memory safety",
        True,
        {"missing": [], "forbidden": []},
    ),
    (
        {"type": "keywords", "include": ["rust"], "exclude": ["unsafe"]},
        "Rusty unsafe code",
        False,
        {"missing": ["rust"], "forbidden": ["unsafe"]},
    ),
    ({"type": "json_format"}, '{"a": [1, 2]}', True, "valid JSON"),
    ({"type": "json_format"}, '```json\n{"a": 1}\n```', True, "valid JSON"),
    ({"type": "lowercase"}, "all lower case, 123.", True, None),
    ({"type": "lowercase"}, "almost all Lower", False, "L"),
    ({"type": "uppercase"}, "SHOUTING 123!", True, None),
    ({"type": "uppercase"}, "SHOUTINg", False, "g"),
    ({"type": "starts_with", "text": "Dear Sir"}, "\n dear sir, hello", True, "dear sir"),
    ({"type": "starts_with", "text": "Dear Sir", "case_sensitive": True}, "dear sir, hello", False, "dear sir"),
    (
        {"type": "ends_with", "text": "Any other questions?"},
        "Bye. Any other questions?  \n",
        True,
        "Any other questions?",
    ),
    ({"type": "ends_with", "text": "the end"}, "end", False, "end"),
    ({"type": "no_commas"}, "No commas here.", True, 0),
    ({"type": "no_commas"}, "One, two, three", False, 2),
    ({"type": "quotation"}, ' "Wrapped in quotes." ', True, '"…"'),
    ({"type": "quotation"}, "\u201cCurly too\u201d", True, "\u201c…\u201d"),
    ({"type": "quotation"}, '"Half', False, '"…f'),
    ({"type": "title"}, "<<Ode to Joy>>\nVerse...", True, "<<Ode to Joy>>"),
    ({"type": "title"}, "<< >> no title", False, None),
    ({"type": "postscript"}, "Body.\n\np.s. see you", True, True),
    ({"type": "postscript", "marker": "P.P.S"}, "Body. P.P.S inline", False, False),
]


@pytest.mark.parametrize(("constraint", "response", "passes", "observed"), CASES)
def test_each_constraint(constraint, response, passes, observed):
    verdict = parse_constraint(constraint).check(response)
    assert (verdict.passed, verdict.observed) == (passes, observed)


def test_every_constraint_type_is_covered_by_the_table():
    assert {case[0]["type"] for case in CASES} == CONSTRAINT_TYPES


def test_json_format_reports_why_not():
    verdict = parse_constraint({"type": "json_format"}).check("Sure! {'a': 1}")
    assert not verdict.passed
    assert verdict.observed.startswith("Expecting value")


REFERENCE = [
    {"type": "word_count", "max": 5},
    {"type": "lowercase"},
    {"type": "ends_with", "text": "bye"},
    {"type": "no_commas"},
]


@pytest.mark.parametrize(
    ("response", "config", "expected"),
    [
        ("hello there bye", {}, 1.0),
        ("hello there bye", {"mode": "all"}, 1.0),
        ("Hello, there bye", {}, 0.5),  # case and commas fail
        ("Hello, there bye", {"mode": "all"}, 0.0),
        ("<think>Thinking, At Length, in many many words</think>hello bye", {}, 1.0),
        ("<think>Thinking, At Length</think>hello bye", {"strip_think": False}, 0.25),
    ],
)
def test_scoring_modes(response, config, expected):
    assert score(response, REFERENCE, **config).score == expected


def test_details_carry_each_verdict():
    result = score("Hello, bye", REFERENCE)
    assert result.details == {
        "satisfied": 2,
        "total": 4,
        "constraints": [
            {"type": "word_count", "passed": True, "observed": 2},
            {"type": "lowercase", "passed": False, "observed": "H"},
            {"type": "ends_with", "passed": True, "observed": "bye"},
            {"type": "no_commas", "passed": False, "observed": 1},
        ],
    }


@pytest.mark.parametrize(
    "reference",
    [
        {"constraints": [{"type": "lowercase"}]},
        '[{"type": "lowercase"}]',
        '{"constraints": [{"type": "lowercase"}]}',
    ],
)
def test_reference_shapes(reference):
    assert score("ok", reference).score == 1.0


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (None, "non-empty list"),
        ([], "non-empty list"),
        ("lowercase please", "not JSON"),
        ([{"type": "haiku"}], r"constraint 0: unknown type 'haiku'"),
        ([{"type": "lowercase"}, {"min": 3}], r"constraint 1: unknown type None"),
        (["lowercase"], "unknown type None"),
        ([{"type": "word_count"}], r"constraint 0 \(word_count\).*give 'min', 'max' or 'exact'"),
        ([{"type": "word_count", "min": 5, "max": 2}], "'min' is greater than 'max'"),
        ([{"type": "word_count", "exact": 3, "min": 1}], "not both"),
        ([{"type": "word_count", "min": -1}], r"min: Input should be greater than or equal to 0"),
        ([{"type": "lowercase", "strict": True}], r"strict: Extra inputs are not permitted"),
        ([{"type": "starts_with"}], r"text: Field required"),
    ],
)
def test_a_malformed_reference_is_an_error_not_a_zero(reference, message):
    with pytest.raises(VerifierError, match=message):
        score("anything", reference)


def test_config_fields_are_documented_and_registered():
    assert all(field.description for field in IFEvalVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="ifeval")
    assert ep.load() is IFEvalVerifier


# -- rows of the IFEval dataset itself ------------------------------------------------------------

IFEVAL_ROW = {
    "key": 1001,
    "prompt": "Write a short note without commas ...",
    "instruction_id_list": [
        "punctuation:no_comma",
        "length_constraints:number_words",
        "detectable_format:number_highlighted_sections",
        "change_case:capital_word_frequency",
    ],
    "kwargs": [
        {"num_words": None, "relation": None},  # the dataset fills unused kwargs with null
        {"relation": "less than", "num_words": 12},
        {"num_highlights": 1},
        {"capital_frequency": 2, "capital_relation": "at least"},
    ],
}


# Where today's own constraint and the IFEval instruction of the same intent read a response differently:
# (own constraint, IFEval instruction id, its kwargs, response, own verdict, IFEval's verdict).
SIDE_BY_SIDE = [
    ({"type": "keywords", "include": ["war"]}, "keywords:existence", {"keywords": ["war"]}, "toward the sea", False, True),
    ({"type": "keyword_frequency", "keyword": "the", "min": 2}, "keywords:frequency", {"keyword": "the", "frequency": 2, "relation": "at least"}, "The theme", False, True),
    ({"type": "sentence_count", "exact": 2}, "length_constraints:number_sentences", {"num_sentences": 3, "relation": "less than"}, "Dr. Smith came. He sat.", False, True),
    ({"type": "capital_word_count", "min": 2}, "change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"}, "DON'T", True, True),
    ({"type": "capital_word_count", "min": 2}, "change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"}, "HELLO-WORLD", True, False),
    ({"type": "uppercase"}, "change_case:english_capital", {}, "DER HUND SPIELT IM GARTEN, WÄHREND DIE KINDER IHRE HAUSAUFGABEN MACHEN.", True, False),
    ({"type": "postscript"}, "detectable_content:postscript", {"postscript_marker": "P.S."}, "See the p.s. inline", False, True),
    ({"type": "bullet_count", "exact": 1}, "detectable_format:number_bullet_lists", {"num_bullets": 1}, "-no space", False, True),
    ({"type": "highlight_count", "min": 1}, "detectable_format:number_highlighted_sections", {"num_highlights": 1}, "* *", True, False),
    ({"type": "quotation"}, "startend:quotation", {}, "\u201ccurly\u201d", True, False),
    ({"type": "paragraph_count", "exact": 2, "separator": "***"}, "length_constraints:number_paragraphs", {"num_paragraphs": 2}, "a\n***\n\n***\nb", True, False),
]  # fmt: skip


@pytest.mark.parametrize(("own", "instruction", "kwargs", "response", "own_verdict", "ifeval_verdict"), SIDE_BY_SIDE)
def test_own_constraints_keep_their_meaning_beside_ifevals(
    own, instruction, kwargs, response, own_verdict, ifeval_verdict
):
    assert score(response, [own]).details["constraints"][0]["passed"] is own_verdict
    row = {"instruction_id_list": [instruction], "kwargs": [kwargs]}
    assert score(response, row).details["constraints"][0]["passed"] is ifeval_verdict


def test_an_ifeval_row_is_a_reference():
    response = "Notes are *short* and VERY CLEAR"
    result = score(response, IFEVAL_ROW)
    assert [c["passed"] for c in result.details["constraints"]] == [True, True, True, True]
    assert result.details["constraints"][1] == {
        "type": "length_constraints:number_words",
        "passed": True,
        "observed": 6,
    }
    assert score(response + ", really, with many more words than were asked", IFEVAL_ROW).score == 0.5


def test_loose_mode_tries_googles_variants_and_names_the_one_that_passed():
    row = {"instruction_id_list": ["startend:end_checker"], "kwargs": [{"end_phrase": "The end."}]}
    response = "Story.\nThe end.\nHope this helps!"
    assert score(response, row).score == 0.0
    loose = score(response, row, loose=True)
    assert loose.score == 1.0
    assert loose.details["constraints"][0]["variant"] == "without last line"


def test_an_empty_response_follows_no_instruction_unless_judged_like_nemo_gym():
    row = {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [None]}
    assert score("  ", row).score == 0.0
    assert score("  ", row, judge_empty_response=True).score == 1.0
    assert score("  ", [{"type": "no_commas"}]).score == 1.0  # own constraints check an empty text as any other


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"instruction_id_list": ["keywords:unknown_rule"], "kwargs": [{}]}, "'keywords:unknown_rule' has no counterpart"),
        ({"instruction_id_list": ["keywords:frequency"], "kwargs": [{"keyword": "a", "frequency": 2, "relation": "about"}]}, "kwarg relation"),
        ({"instruction_id_list": ["punctuation:no_comma"], "kwargs": []}, "same length"),
        ({"instruction_id_list": ["punctuation:no_comma"], "kwargs": ["x"]}, "must be an object"),
    ],
)  # fmt: skip
def test_ifeval_rows_that_cannot_be_judged_are_errors(row, message):
    with pytest.raises(VerifierError, match=message):
        score("anything", row)
