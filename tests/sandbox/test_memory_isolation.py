"""The program under test never shares memory with what judges it.

Each test scores, through the ``code`` verifier as a user would, a program that answers wrong
unless one way of looking (:mod:`memory_attacks`) finds the expected answer to its input: on its
own stack (``sys._getframe``, ``inspect.stack()``), among the interpreter's objects
(``gc.get_objects()``), in its own memory (``/proc/self/mem``), in its parent's or any other
process's memory, environment or command line, in a descriptor it inherited, or in its
environment. Every answer is ``ans<n>:`` and 16 random hex digits, so it cannot be guessed: a
program scores only with answers it found. Against every kind of test (asserts, whole checks,
function calls, stdin/stdout cases, a checker), in Python and in C, each must score 0.

The controls plant the answers within each way's reach and expect it to find them, so a 0 above
means the answers were not there to find, not that the looking was broken.
"""

from __future__ import annotations

import secrets

import pytest
from memory_attacks import C_METHODS, PYTHON_METHODS, c_stdio, python_function, python_stdio

from rewardhub.sandbox import Limits, RunResult, default_pool, language
from rewardhub.sandbox.warm import Execution, WarmSandbox
from rewardhub.types import Sample
from rewardhub.verifiers.code import CodeVerifier
from rewardhub.verifiers.code.asserts import WholeCheck, plan_asserts

VERIFIER = CodeVerifier()
INPUTS = (1, 2, 3)
CHECKER = """
import sys
_, _input, output, answer = sys.argv
sys.exit(0 if open(output).read().strip() == open(answer).read().strip() else 1)
"""


FAKE_RUN = RunResult("ok", 0, "", "", 1.0, {"check": "passed"})
REFUSAL = "a whole test comes on its run's stdin, never with the program"


def new_answers() -> dict[int, str]:
    return {n: f"ans{n}:{secrets.token_hex(8)}" for n in INPUTS}


def asserts(answers: dict[int, str]) -> dict:
    """HumanEval's shape, one assert a line: split, the expected values never leave the parent."""
    lines = "".join(f"    assert candidate({n}) == {answer!r}\n" for n, answer in answers.items())
    return {"test": f"def check(candidate):\n{lines}", "entry_point": "f"}


def asserts_computing_an_answer(answers: dict[int, str]) -> dict:
    """HumanEval/151's shape: the test computes an expected value, then asserts the program's equals it."""
    (one, first), (two, second), (three, third) = answers.items()
    lines = [
        f"assert candidate({one}) == {first!r}",
        f"expected = {second[:5]!r} + {second[5:]!r}",
        f"assert candidate({two}) == expected",
        f"assert candidate({three}) == {third!r}",
    ]
    return {"test": "def check(candidate):\n" + "".join(f"    {line}\n" for line in lines), "entry_point": "f"}


def whole_check(answers: dict[int, str]) -> dict:
    """EvalPlus's shape: a table of inputs and expected results, asserted in a loop (run whole)."""
    table = f"inputs = {[[n] for n in answers]!r}\nresults = {list(answers.values())!r}\n"
    check = "def check(candidate):\n    for inp, exp in zip(inputs, results):\n        assert candidate(*inp) == exp\n"
    return {"test": table + "\n" + check, "entry_point": "f"}


def whole_check_beside_an_assert(answers: dict[int, str]) -> dict:
    """verl's ``assert_case``: a plain assert, then a loop (a batch that mixes the two)."""
    first, *rest = answers.items()
    loop = f"for n, exp in {rest!r}:\n    assert f(n) == exp\n"
    return {"inputs": [], "outputs": [], "assert_case": [f"assert f({first[0]}) == {first[1]!r}", loop]}


def calls(answers: dict[int, str]) -> dict:
    return {"fn_name": "f", "inputs": [[n] for n in answers], "outputs": list(answers.values())}


def stdio(answers: dict[int, str]) -> dict:
    return {"inputs": [f"{n}\n" for n in answers], "outputs": list(answers.values())}


def checked(answers: dict[int, str]) -> dict:
    return {**stdio(answers), "checker": {"language": "python", "code": CHECKER}}


PYTHON_KINDS = {
    # kind: (reference, the program's shape, verifier config)
    "asserts": (asserts, python_function, {}),
    "asserts, one expected value computed by the test": (asserts_computing_an_answer, python_function, {}),
    "a whole check": (whole_check, python_function, {}),
    "a whole check, a sandboxed run per test": (whole_check, python_function, {"batch": False}),
    "a whole check beside an assert": (whole_check_beside_an_assert, python_function, {}),
    "function calls": (calls, python_function, {}),
    "stdin/stdout cases": (stdio, python_stdio, {}),
    "stdin/stdout cases, a process each": (stdio, python_stdio, {"fresh_process_per_case": True}),
    "a checker": (checked, python_stdio, {}),
}
C_KINDS = {"stdin/stdout cases": stdio, "a checker": checked}


def score(program: str, reference: dict, language: str = "python", **config):
    response = f"```{language}\n{program}```\n"
    return VERIFIER.score(
        Sample(response=response, reference=reference), CodeVerifier.Config(language=language, **config)
    )


def assert_found_nothing(result) -> None:
    assert result.status == "ok", result.details
    assert result.details["passed"] == 0, result.details["tests"]
    assert result.score == 0.0


@pytest.mark.parametrize("method", list(PYTHON_METHODS))
@pytest.mark.parametrize("kind", list(PYTHON_KINDS))
def test_a_python_program_finds_no_expected_answer(kind, method):
    reference, program, config = PYTHON_KINDS[kind]
    assert_found_nothing(score(program(method), reference(new_answers()), **config))


@pytest.mark.parametrize("method", list(C_METHODS))
@pytest.mark.parametrize("kind", list(C_KINDS))
def test_a_c_program_finds_no_expected_answer(kind, method):
    assert_found_nothing(score(c_stdio(method), C_KINDS[kind](new_answers()), language="c"))


@pytest.mark.parametrize("method", list(PYTHON_METHODS))
def test_each_python_way_of_looking_finds_answers_within_its_reach(method):
    answers = new_answers()
    result = score(python_function(method, planted=list(answers.values())), calls(answers))
    assert (result.status, result.score) == ("ok", 1.0), result.details["tests"]


@pytest.mark.parametrize("method", list(C_METHODS))
def test_each_c_way_of_looking_finds_answers_within_its_reach(method):
    answers = new_answers()
    result = score(c_stdio(method, planted=list(answers.values())), stdio(answers), language="c")
    assert (result.status, result.score) == ("ok", 1.0), result.details["tests"]


# --- how a whole check keeps its test out of the program's process ----------------------------------


def test_a_whole_checks_source_travels_on_stdin_never_in_the_payload(monkeypatch):
    """The payload is read before the program's process is forked; stdin only after (check_process)."""
    sent: list[Execution] = []
    monkeypatch.setattr(WarmSandbox, "run", lambda self, execution: sent.append(execution) or FAKE_RUN)
    source = "for n in (1, 2):\n    assert f(n) == 'ans'\n"
    with default_pool().job(language("python"), "def f(n):\n    return 'ans'\n") as job:
        job.setup()
        job.run(b"", Limits(), {"mode": "check", "source": source, "names": ["f"]})
    (execution,) = sent
    assert (execution.stdin, "source" in execution.payload) == (source.encode(), False)


def test_a_whole_check_sent_with_the_program_is_refused_not_run():
    """A caller that put the test in the payload (where the program's process would hold it) gets a failure."""
    payload = {
        "path": "/tmp/main.py",
        "code": "def f(n):\n    return n\n",
        "mode": "check",
        "source": "assert f(1) == 1\n",
        "names": ["f"],
    }
    with default_pool().job(language("python"), "") as job:
        run = job.sandbox.run(Execution("python", Limits(), payload=payload, last=True))
    assert run.record == {"check": "failed", "message": REFUSAL}


# --- which asserts run whole, so that no value of the test's own reaches the program ----------------

HUMANEVAL_151 = """
def check(candidate):
    assert candidate([5, 4]) == 25
    lst = list(range(-99, 100, 2))
    odd_sum = sum([i**2 for i in lst if i%2!=0 and i > 0])
    assert candidate(lst) == odd_sum
"""
A_HELPER_THAT_RETURNS_THE_ANSWER = """
def check(candidate):
    assert candidate(1) == 2
    def expected():
        return 'answer'
    assert candidate(2) == 3
    assert candidate(3) == expected()
"""
AN_ARGUMENT_THE_PROGRAM_MAY_CHANGE = """
def check(candidate):
    x = [3, 1]
    assert candidate(x) == [1, 3]
    assert x == [3, 1]
"""


@pytest.mark.parametrize(
    ("test", "kinds"),
    [
        (HUMANEVAL_151, ["split", "whole"]),  # odd_sum is the test's own: computed, then compared
        (A_HELPER_THAT_RETURNS_THE_ANSWER, ["split", "whole", "whole"]),  # the helper is in the later setups
        (AN_ARGUMENT_THE_PROGRAM_MAY_CHANGE, ["split", "split"]),  # x went to the program: its value to report
        ("import math\nassert f(1) == math.pi\nassert f(2) == 2\n", ["whole", "split"]),
    ],
    ids=["HumanEval/151", "a helper", "an argument", "a module's constant"],
)
def test_an_assert_comparing_with_a_value_of_the_tests_own_runs_whole(test, kinds):
    plans = plan_asserts(test, "f")
    assert ["whole" if isinstance(plan, WholeCheck) else "split" for plan in plans] == kinds
