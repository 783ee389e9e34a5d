"""Fresh inputs: the tests' own literal calls, varied inside the domain the tests show, seeded."""

from __future__ import annotations

from rewardhub.audit.fresh_inputs import domain_of, fresh_calls, literal_calls

HUMANEVAL_TEST = """
def check(candidate):
    assert candidate([1.0, 2.0, 3.9], 0.3) == True
    assert candidate([1.0, 2.8], 0.05) == False
    assert candidate(list(range(3)), 1) == True   # not a literal: left out
    assert abs(candidate([5.0], 0.5)) == 0        # nested call, still found
"""


def test_literal_calls_are_read_from_the_tests_under_any_of_the_names() -> None:
    assert literal_calls(HUMANEVAL_TEST, ["candidate"]) == [[[1.0, 2.0, 3.9], 0.3], [[1.0, 2.8], 0.05], [[5.0], 0.5]]
    assert literal_calls("assert f(1) == g(2)\nassert f(1) == 1", ["f"]) == [[1]]  # repeated calls once
    assert literal_calls("assert f(x=1) == 2", ["f"]) == []  # keywords are not positional inputs
    assert literal_calls("def broken(:", ["f"]) == []


def test_numbers_keep_their_type_and_lowest_sign() -> None:
    calls = [[1], [4], [9]]
    made = fresh_calls(calls, count=40, seed=0)
    assert made and all(isinstance(args[0], int) and args[0] >= 1 for args in made)
    assert domain_of([0, 3]).lowest == 0 and domain_of([-2, 3]).lowest is None
    floats = fresh_calls([[0.5], [2.25]], count=10, seed=0)
    assert all(isinstance(args[0], float) and args[0] >= 0 for args in floats)


def test_strings_keep_the_characters_or_words_the_tests_use() -> None:
    made = fresh_calls([["(()())"], ["()"]], count=10, seed=0)
    assert made and all(set(args[0]) <= set("()") for args in made)
    words = fresh_calls([["one two"], ["three one"]], count=10, seed=0)
    assert all(set(args[0].split()) <= {"one", "two", "three"} for args in words)


def test_lists_stay_sorted_and_unique_when_every_tested_list_is() -> None:
    made = fresh_calls([[[1, 3, 5, 7]], [[2, 4, 8]]], count=20, seed=0)
    assert made
    for (values,) in made:
        assert values == sorted(values) and len(set(values)) == len(values)
        assert all(isinstance(v, int) and v >= 1 for v in values)
    unsorted = fresh_calls([[[3, 1, 2]], [[9, 9, 1]]], count=20, seed=3)
    assert any(v != sorted(v) for (v,) in unsorted)  # no promise in the tests, none kept


def test_fresh_calls_are_new_seeded_and_bounded() -> None:
    calls = [[[1, 2, 3], 2], [[4, 5], 1]]
    made = fresh_calls(calls, count=8, seed=0)
    assert made == fresh_calls(calls, count=8, seed=0)
    assert made != fresh_calls(calls, count=8, seed=1)
    assert 0 < len(made) <= 8
    assert not any(args in calls for args in made)
    assert len({repr(args) for args in made}) == len(made)
    assert fresh_calls([], count=8) == [] and fresh_calls(calls, count=0) == []
