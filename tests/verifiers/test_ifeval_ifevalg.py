"""`ifeval` on the IFEvalG ids of RL data (NeMo-Gym's instruction_following, RLVR-IFeval): each rule on
passing, failing and edge responses, and NeMo-Gym's own example rollouts scored as NeMo-Gym scored them.

No registry package ships these checkers (NeMo-Gym installs ``verifiable_instructions`` from its git
repository), so the expected verdicts below are worked out from that source (commit f46a5ac, the class
named in each rule's docstring), quirks included.
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import pytest

from rewardhub.types import Sample
from rewardhub.verifiers.ifeval import RULES, IFEvalVerifier

NEMO_JUDGING = IFEvalVerifier.Config(mode="all", judge_empty_response=True, strip_think=False)


def verdict(instruction, kwargs, response):
    row = {"instruction_id_list": [instruction], "kwargs": [kwargs]}
    return (
        IFEvalVerifier()
        .score(Sample(response=response, reference=row), NEMO_JUDGING)
        .details["constraints"][0]["passed"]
    )


CASES = [
    ("copy:repeat_phrase", {"phrase": "The early bird catches the worm", "small_n": 2}, "The early cat catches the worm and The late bird catches the worm", True),
    ("copy:repeat_phrase", {"phrase": "The early bird catches the worm", "small_n": 1}, "The early bird catches the worm", False),  # no word changed
    ("copy:repeat_phrase", {"phrase": "The early bird catches the worm", "small_n": 1}, "The big old bird catches the worm", False),  # longer span
    ("copy:copy", {"prompt_to_repeat": "Say hi."}, "  say HI.  ", True),
    ("copy:copy", {"prompt_to_repeat": "Say hi."}, "Say hi. Done.", False),
    ("copy:copying_simple", {"prompt_to_repeat": "Copy me"}, "copy me", True),
    ("copy:copying_multiple", {"prompt_to_repeat": "Copy me", "N": 2}, "Copy me\n******\ncopy me", True),
    ("copy:copying_multiple", {"prompt_to_repeat": "Copy me", "N": 3}, "Copy me\n******\nCopy me", False),
    ("new:copy_span_idx", {"prompt_to_repeat": "Hello brave world", "n_start": 6, "n_end": 11}, "Brave", True),
    ("new:copy_span_idx", {"prompt_to_repeat": "Hello brave world", "n_start": 0, "n_end": 5}, "hello", True),
    ("new:copy_span_idx", {"prompt_to_repeat": "Hello brave world", "n_start": 6, "n_end": 11}, "world", False),
    ("detectable_format:sentence_hyphens", {}, "One sentence.-Two sentence.", True),
    ("detectable_format:sentence_hyphens", {}, "One sentence. - Two sentence.", False),
    ("keywords:no_adjacent_consecutive", {}, "apple cherry banana", True),
    ("keywords:no_adjacent_consecutive", {}, "apple banana", False),
    ("detectable_format:square_brackets", {}, "[every] [word] [here]", True),
    ("detectable_format:square_brackets", {}, "[every] word", False),
    ("keywords:word_once", {"keyword": "war"}, "Toward peace.", True),  # a substring counts
    ("keywords:word_once", {"keyword": "cat"}, "cat and cat", False),
    ("keywords:word_count_different_numbers", {"keyword": "cat", "frequency": 2, "relation": "at least"}, "Cat cat", True),
    ("keywords:exclude_word_harder", {"keyword": "dog"}, "dogs and hotdog", True),  # only " dog " counts
    ("keywords:exclude_word_harder", {"keyword": "dog"}, "my dog barks", False),
    ("paragraphs:paragraphs", {}, "One.\n***\nTwo.", True),
    ("paragraphs:paragraphs", {}, "One.\n\nTwo.", False),
    ("paragraphs:paragraphs2", {}, "One.\n\nTwo.", True),
    ("paragraphs:paragraphs2", {}, "One.\n\n\n\nTwo.", False),  # an empty inner paragraph
    ("first_word:first_word_sent", {"first_word": "so"}, "So it began. So it ended.", True),
    ("first_word:first_word_sent", {"first_word": "so"}, "So it began. Then it ended.", False),
    ("first_word:first_word_sent", {"first_word": "so"}, "So, it began.", False),  # "So," is the first word
    ("first_word:first_word_answer", {"first_word": "Well"}, "well, yes", False),
    ("first_word:first_word_answer", {"first_word": "Well"}, "  WELL yes", True),
    ("last_word:last_word_sent", {"last_word": "now"}, "Do it now! Go now.", True),
    ("last_word:last_word_sent", {"last_word": ["now"]}, "Do it now! Go later.", False),
    ("last_word:last_word_answer", {"last_word": "contest"}, "We won the CONTEST!!", True),
    ("last_word:last_word_answer", {"last_word": "contest"}, "", False),  # the reference raises: not followed
    ("detectable_format:bigram_wrapping", {}, "<<one two>> <<three four>> five", True),
    ("detectable_format:bigram_wrapping", {}, "<<one two>> three four", False),
    ("punctuation:punctuation_dot", {}, "No dots here!", True),
    ("punctuation:punctuation_dot", {}, "A dot.", False),
    ("punctuation:punctuation_exclamation", {}, "Calm.", True),
    ("punctuation:punctuation_exclamation", {}, "Wow!", False),
    ("count:lowercase_counting", {"N": 2}, "only TWO lower words", False),
    ("count:lowercase_counting", {"N": 3}, "THESE ARE ALL CAPS but two", True),
    ("letters:letter_counting", {"N": 5, "relation": "less than"}, "abcd 123", True),
    ("letters:letter_counting", {"N": 5, "relation": "at least"}, "abcd 123", False),
    ("letters:letter_counting2", {"letter": "a", "let_frequency": 2, "let_relation": "at least"}, "A cat", True),
    ("count:counting_composition", {"n_sent": 1, "n_words": 3}, "I like it.\n***\nYou like it.\n***\nWe like it.", False),  # 4 tokens each
    ("count:counting_composition", {"n_sent": 1, "n_words": 4}, "I like it.\n***\nYou like it.\n***\nWe like it.", True),
    ("count:counting_composition", {"n_sent": 1, "n_words": 4}, "***\nI like it.\n***\nYou like it.\n***\nWe like it.", False),
    ("count:count_unique", {}, "Every word here is unique.", True),
    ("count:count_unique", {}, "The cat and the dog and the bird.", False),
    ("count:count_increment_word", {"keyword1": "sun", "keyword2": "moon"}, "Sun, moon, MOON.", True),
    ("count:count_increment_word", {"keyword1": "sun", "keyword2": "moon"}, "sun moon", False),
    ("keywords:palindrome", {}, "We saw a racecar.", True),  # "a" reads the same reversed
    ("keywords:palindrome", {}, "Anna went home.", False),
    ("keywords:keyword_specific_position", {"keyword": "blue", "n": 2, "m": 3}, "Hi there. The sky blue is.", True),
    ("keywords:keyword_specific_position", {"keyword": "blue", "n": 2, "m": 3}, "Hi there. The Blue sky.", False),
    ("keywords:start_end", {}, "Love is all you need, love", True),
    ("keywords:start_end", {}, "Love is all you need.", False),  # the last token is "."
]  # fmt: skip


@pytest.mark.parametrize(("instruction", "kwargs", "response", "expected"), CASES)
def test_each_ifevalg_rule(instruction, kwargs, response, expected):
    assert verdict(instruction, kwargs, response) is expected


def test_every_ifevalg_rule_is_in_the_table_passing_and_failing():
    ifevalg = {i for i, rule in RULES.items() if rule.family == "IFEvalG"}
    outcomes = {i: {c[3] for c in CASES if c[0] == i} for i in ifevalg}
    assert {i for i, seen in outcomes.items() if not seen} == set()
    # the same rule as one tested both ways (copy:copy, IFEval's keywords:frequency and letter_frequency)
    single = {"copy:copying_simple", "letters:letter_counting2", "keywords:word_count_different_numbers"}
    assert {i for i, seen in outcomes.items() if seen != {True, False} and i not in single} == set()


def _rollouts():
    spec = find_spec("resources_servers")
    if spec is None or not spec.submodule_search_locations:
        return []
    path = (
        Path(next(iter(spec.submodule_search_locations))) / "instruction_following" / "data" / "example_rollouts.jsonl"
    )
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def test_nemo_gyms_own_example_rollouts_get_the_rewards_it_recorded():
    rollouts = _rollouts()
    if not rollouts:
        pytest.skip("the nemo-gym wheel (its resources_servers data) is not installed")
    for rollout in rollouts:
        meta = rollout.get("verifier_metadata") or rollout  # older rows keep the fields at the top level
        text = rollout["response"]["output"][-1]["content"][0]["text"]
        row = {"instruction_id_list": meta["instruction_id_list"], "kwargs": meta["kwargs"]}
        result = IFEvalVerifier().score(Sample(response=text, reference=row), NEMO_JUDGING)
        assert [c["passed"] for c in result.details["constraints"]] == rollout["follow_instruction_list"]
        assert result.score == rollout["reward"]
    print(f"NeMo-Gym instruction_following example rollouts: {len(rollouts)} of {len(rollouts)} rewards equal")
