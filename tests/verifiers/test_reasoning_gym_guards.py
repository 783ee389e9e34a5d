"""The reasoning-gym families whose released scorer evaluates text: same verdicts, nothing run.

For each such family, a corpus of answers as models write them (the gold, the gold in the other
form the scorer reads, partly right, wrong, another entry's answer), over entries the release's
own generator makes at two seeds, scores exactly as the released scorer scores it; the hostile
forms score what the family gives an unreadable answer, with ``details.refused``, and write
nothing; a hostile reference is an error.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.reasoning_gym import ReasoningGymVerifier
from rewardhub.verifiers.reasoning_gym_guards import FORMULAS, SCORERS, Formula, formula_refusal, hex_arithmetic

reasoning_gym = pytest.importorskip("reasoning_gym")

SEEDS = (1, 2)
SIZE = 12


def guarded(answer: str, entry: dict, **config):
    sample = Sample(response=answer, reference=copy.deepcopy(entry))
    config = {"answer_format": "raw", "strip_think": False, "on_scorer_error": "zero", **config}
    return ReasoningGymVerifier().score(sample, ReasoningGymVerifier.Config(**config))


def released(task: str, answer: str, entry: dict) -> float:
    try:
        return float(reasoning_gym.get_score_answer_fn(task)(answer=answer, entry=copy.deepcopy(entry)))
    except Exception:  # noqa: BLE001 - the verifier is asked for on_scorer_error="zero" alike
        return 0.0


def _numbers(text: str) -> list[str]:
    return text.split()


def _swap_last_two(items: list) -> list:
    return items[:-2] + items[-2:][::-1] if len(items) > 1 else items


ANSWERS: dict[str, Callable[[dict, dict], list[str]]] = {  # (entry, another entry) -> answers
    "spiral_matrix": lambda e, o: [
        e["answer"],
        str([int(n) for n in _numbers(e["answer"])]),
        str(_numbers(e["answer"])),
        " ".join(_swap_last_two(_numbers(e["answer"]))),
        str(tuple(int(n) for n in _swap_last_two(_numbers(e["answer"])))),
        o["answer"],
    ],
    "string_insertion": lambda e, o: [
        e["answer"],
        str(list(e["answer"])),
        json.dumps(list(e["answer"])),
        e["answer"][:-1],
        str(list(e["answer"][::-1])),
        o["answer"],
    ],
    "binary_matrix": lambda e, o: [
        e["answer"],
        str(e["metadata"]["solution"]),
        str(e["metadata"]["matrix"]),
        e["answer"].replace("\n", " "),
        json.dumps(e["metadata"]["solution"][::-1]),
        o["answer"],
    ],
    "n_queens": lambda e, o: [
        e["answer"],
        str([row.split() for row in e["answer"].split("\n")]),
        str([row.split() for row in e["answer"].split("\n")][::-1]),
        str(e["metadata"]["puzzle"]),
        e["answer"].replace("Q", "_", 1),
        o["answer"],
    ],
    "number_sorting": lambda e, o: [
        e["answer"],
        json.dumps(e["metadata"]["sorted_numbers"]),
        json.dumps([float(n) for n in e["metadata"]["sorted_numbers"]]),
        json.dumps(e["metadata"]["sorted_numbers"][::-1]),
        json.dumps(e["metadata"]["original_numbers"]),
        o["answer"],
    ],
    "bitwise_arithmetic": lambda e, o: [
        e["answer"],
        str(int(e["answer"], 16)),
        e["answer"].upper().replace("0X", "0x"),
        hex(int(e["answer"], 16) + 1),
        "-" + e["answer"].lstrip("-"),
        o["answer"],
    ],
    "puzzle24": lambda e, o: [
        e["answer"],
        e["answer"].replace(" ", ""),
        f"({e['answer']})",
        e["answer"] + " = 24",
        e["answer"].replace("+", "-", 1),
        o["answer"],
    ],
    "countdown": lambda e, o: [
        e["answer"],
        e["answer"].replace(" ", ""),
        f"{e['answer']} = {e['metadata']['target']}",
        e["answer"].replace("-", "+", 1),
        re.sub(r"\d+", "1", e["answer"], count=1),
        o["answer"],
    ],
    "simple_integration": lambda e, o: [
        e["answer"],
        e["answer"].replace(" + C", ""),
        e["answer"].replace("C", "K"),
        e["answer"].replace("**", "^"),
        e["metadata"]["integrand"],
        o["answer"],
    ],
    "intermediate_integration": lambda e, o: [
        e["answer"],
        e["answer"].replace(" + C", ""),
        e["answer"].replace("C", "K"),
        e["answer"].replace("**", "^"),
        e["metadata"]["integrand"],
        o["answer"],
    ],
    "polynomial_multiplication": lambda e, o: [
        e["answer"],
        e["answer"].replace(" ", ""),
        e["answer"].replace("**", "^"),
        e["metadata"]["polynomial_expr"],
        re.sub(r"\d+", "7", e["answer"], count=1),
        o["answer"],
    ],
}


def test_the_guarded_families_are_exactly_those_whose_scorer_evaluates_text() -> None:
    entry_side = {"number_sorting"}
    assert set(ANSWERS) == set(SCORERS) | set(FORMULAS) | entry_side


@pytest.mark.parametrize("task", sorted(ANSWERS))
def test_well_formed_answers_score_as_the_released_scorer_scores_them(task: str, capsys) -> None:
    scores: Counter[float] = Counter()
    disagreements = []
    for seed in SEEDS:
        entries = list(reasoning_gym.create_dataset(task, size=SIZE, seed=seed))
        for entry, other in zip(entries, entries[1:] + entries[:1], strict=True):
            for answer in ANSWERS[task](entry, other):
                ours, theirs = guarded(answer.strip(), entry), released(task, answer.strip(), entry)
                scores[ours.score] += 1
                if (ours.status, ours.score) != ("ok", theirs):
                    disagreements.append((answer, ours.status, ours.score, theirs))
    assert disagreements == []
    assert len(scores) > 1  # the corpus reaches more than one verdict
    with capsys.disabled():
        n = sum(scores.values())
        print(f"\n{task}: {n}/{n} agree with the release; scores {dict(sorted(scores.items()))}")


def _payloads(folder: Path) -> dict[str, str]:
    """Each payload writes a file named for it, were it evaluated."""

    def write(name: str) -> str:
        return f"__import__('pathlib').Path({str(folder / name)!r}).write_text('ran')"

    return {
        "import": write("import"),
        "list": f"[{write('list')}]",
        "list of rows": f"[[{write('rows')}]]",
        "eval": f"eval({write('eval')!r})",
        "subclasses": f"[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'FileIO'][0]({str(folder / 'sub')!r}, 'w')",
        "sympify": f"sympify({write('sympify')!r})",
        "S": f"S({write('S')!r}) + 24",
        "Function": f"Function('f')({write('Function')})",
        "lambda": f"(lambda: {write('lambda')})()",
        "unicode eval": f"ｅｖａｌ({write('unicode')!r})",
    }


MALFORMED = {"puzzle24": 0.01, "countdown": 0.01}  # every other family gives an unreadable answer 0


@pytest.mark.parametrize("task", sorted((set(SCORERS) | set(FORMULAS)) - {"bitwise_arithmetic"}))
def test_a_hostile_answer_scores_as_an_unreadable_one_and_runs_nothing(task: str, tmp_path: Path) -> None:
    entry = reasoning_gym.create_dataset(task, size=1, seed=1)[0]
    for form, payload in _payloads(tmp_path).items():
        result = guarded(payload, entry)
        assert (result.status, result.score) == ("ok", MALFORMED.get(task, 0.0)), form
        assert "the release would" in result.details["refused"], form
    assert sorted(p.name for p in tmp_path.iterdir()) == []


EVALUATED_FIELDS = {  # what each released scorer evaluates of the entry
    "number_sorting": ["answer"],
    "bitwise_arithmetic": ["metadata.problem"],
    "simple_integration": ["metadata.integrand", "metadata.variable"],
    "intermediate_integration": ["metadata.integrand", "metadata.variable"],
    "polynomial_multiplication": ["answer"],
}


def _hostile_references(task: str, payload: str) -> list[tuple[str, dict, str]]:
    """The entry with one evaluated field replaced by ``payload``, per field: (field, entry, its gold)."""
    entry = reasoning_gym.create_dataset(task, size=1, seed=1)[0]
    hostile = []
    for field in EVALUATED_FIELDS[task]:
        copied = copy.deepcopy(entry)
        target = copied["metadata"] if field.startswith("metadata.") else copied
        target[field.removeprefix("metadata.")] = payload
        hostile.append((field, copied, entry["answer"]))
    return hostile


@pytest.mark.parametrize("task", sorted(EVALUATED_FIELDS))
def test_a_reference_field_the_release_would_evaluate_is_an_error_when_it_is_not_data(
    task: str, tmp_path: Path
) -> None:
    for payload in _payloads(tmp_path).values():
        for field, reference, gold in _hostile_references(task, payload):
            answer = json.dumps(json.loads(gold.replace("'", '"'))) if task == "number_sorting" else gold
            with pytest.raises(VerifierError, match=f"reference.{field}"):
                guarded(answer, reference)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


CALCULUS = FORMULAS["intermediate_integration"]
GAME = FORMULAS["puzzle24"]
POLYNOMIAL = FORMULAS["polynomial_multiplication"]


@pytest.mark.parametrize(
    ("text", "formula", "refused"),
    [
        ("10*(8 - 5) - 6", GAME, None),
        ("94*4 - 61 - 6", GAME, None),
        ("-34*x**8/15 - 5*x/4 + C", CALCULUS, None),
        ("-4*(-2*x - 8)**(3/2)/3 + C", CALCULUS, None),
        ("exp(2*x)*sin(x)/5 + atan(x) + pi + K", CALCULUS, None),
        ("3584*x**5 - 896*y**3 + z", POLYNOMIAL, None),
        ("x^2", POLYNOMIAL, None),  # parse_expr reads ^ as xor, which fails as the release fails
        ("2**3*3", GAME, "operator Pow"),  # the number games use + - * / only
        ("x + 24", GAME, "name 'x'"),
        ("sin(x)", POLYNOMIAL, "call of 'sin'"),
        ("3*Integral(x**3*cos(3*x), x) + C", CALCULUS, None),  # as the release's own golds write it
        ("Integral(x, x)", POLYNOMIAL, "call of 'Integral'"),
        ("__import__('os')", CALCULUS, "character"),
        ("x.__class__", CALCULUS, "Attribute"),
        ("S(1)", CALCULUS, "call of 'S'"),
        ("sympify(1)", CALCULUS, "call of 'sympify'"),
        ("Symbol", POLYNOMIAL, "name 'Symbol'"),
        ("exec", POLYNOMIAL, "name 'exec'"),
        ("_x", POLYNOMIAL, "name '_x'"),
        ("lambda: 1", CALCULUS, "character ':'"),
        ("x if 1 else 2", CALCULUS, "IfExp"),
        ("[1, 2]", GAME, "character '['"),
        ("ｅｖａｌ(1)", CALCULUS, "character"),
        ("2 !", GAME, "character '!'"),
        ("sin(x, evaluate=False)", CALCULUS, "character '='"),
        ("sin(*x)", CALCULUS, "Starred"),
        ("1j", GAME, "constant 1j"),
        ("True", GAME, "constant True"),
    ],
)
def test_only_numbers_operators_and_the_familys_names_reach_sympy(text: str, formula: Formula, refused) -> None:
    why = formula_refusal(text, formula)
    assert why is None if refused is None else refused in why, why


@pytest.mark.parametrize(
    ("problem", "value"),
    [
        ("((0xc3ce << 0x3) + (0x1907 - 0x7de4))", (0xC3CE << 3) + (0x1907 - 0x7DE4)),
        ("(0x100 * 0xffff) >> 0x2", (0x100 * 0xFFFF) >> 2),
        ("0x1234", 0x1234),
    ],
)
def test_bitwise_arithmetic_problems_are_computed_without_eval(problem: str, value: int) -> None:
    assert hex_arithmetic(problem) == value


@pytest.mark.parametrize(
    "problem", ["0x1 << 0x10000000", "__import__('os')", "(0x1).bit_length()", "0x1 / 0x2", "0x1 ** 0x2", 7]
)
def test_a_bitwise_arithmetic_problem_that_is_not_the_generators_arithmetic_is_refused(problem) -> None:
    with pytest.raises(ValueError):
        hex_arithmetic(problem)
