"""Assert tests are planned in the parent: expected values stay here, the program's parts are leaves."""

from __future__ import annotations

import pytest

from rewardhub.verifiers.code.asserts import LeafFailed, plan_asserts


def test_each_top_level_assert_is_one_test_with_the_statements_before_it_as_setup():
    plans = plan_asserts("import math\nassert f(1) == 2\nx = 3\nassert f(x) == 6\n")
    assert [p.leaves for p in plans] == [("f(1)",), ("f(x)",)]
    assert plans[0].setup == "import math"
    assert plans[1].setup == "import math\nx = 3"


def test_expected_literals_never_become_leaves():
    (plan,) = plan_asserts("assert f([1, 2]) == [3, {'a': (4, 5)}]")
    assert plan.leaves == ("f([1, 2])",)


def test_pure_builtins_and_arithmetic_are_evaluated_here():
    (plan,) = plan_asserts("assert abs(f(1.5) - 3.0) < 1e-9 and sorted(g()) == [1, 2]")
    assert plan.leaves == ("f(1.5)", "g()")
    assert plan.holds([3.0, [2, 1]]) is True
    assert plan.holds([3.1, [2, 1]]) is False


def test_unknown_calls_are_leaves_as_a_whole():
    (plan,) = plan_asserts("assert sorted(f(), key=len) == ['a']")
    assert plan.leaves == ("sorted(f(), key=len)",)


def test_a_failed_leaf_fails_the_assert_only_if_it_is_needed():
    (plan,) = plan_asserts("assert f(0) is None or g(0) == 1")
    assert plan.holds([None, LeafFailed("g raised")]) is True
    with pytest.raises(LeafFailed):
        plan.holds([0, LeafFailed("g raised")])


def test_huge_repetitions_are_refused_in_the_parent():
    (plan,) = plan_asserts("assert 'a' * f() == 'aaa'")
    with pytest.raises(LeafFailed):
        plan.holds([10**12])


def test_humaneval_check_function_is_inlined_with_the_entry_point():
    tests = "METADATA = {}\n\ndef check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 3\n\ncheck(add_one)\n"
    plans = plan_asserts(tests, entry_point="add_one")
    assert [p.leaves for p in plans] == [("candidate(1)",), ("candidate(2)",)]
    assert plans[0].setup == "METADATA = {}\ncandidate = add_one"


def test_tests_without_asserts_are_rejected():
    with pytest.raises(ValueError):
        plan_asserts("print('no tests here')")


def test_asserts_that_never_involve_the_program_are_not_tests():
    """HumanEval's ``assert True, "This prints if this assert fails"`` would be free credit."""
    tests = "def check(candidate):\n    assert True, 'x'\n    assert candidate(1) == 2\n    assert 1 + 1 == 2\n"
    plans = plan_asserts(tests, entry_point="f")
    assert [p.source for p in plans] == ["assert candidate(1) == 2"]
    with pytest.raises(ValueError, match="never involve the program"):
        plan_asserts("assert True\nassert 1 == 1\n")
