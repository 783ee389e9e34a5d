"""`reasoning_gym`: an entry scored by its task's own score_answer, from the pinned reasoning-gym release.

Every family the release registers gets one generated entry: its own answer must score 1 and a
wrong one below 1. Five families generate no answer (their scorer checks any valid solution);
for them a solution is taken from the entry's metadata or worked out here, and the release's
scorer judges it. Four released scorers pay for wrong answers; ``strict`` is tested against each.
"""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest

from rewardhub.audit import load_corpus
from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.reasoning_gym import RELEASE, TASKS, ReasoningGymVerifier

reasoning_gym = pytest.importorskip("reasoning_gym")

SEED = 7
SMALL = {  # configs that keep a generated entry quick to solve here
    "rush_hour": {"min_moves": 1, "max_moves": 1},
    "boxnet": {"min_row_num": 1, "max_row_num": 2, "min_column_num": 2, "max_column_num": 2},
}


def score(response: str, reference: dict, **config):
    sample = Sample(response=response, reference=reference)
    return ReasoningGymVerifier().score(sample, ReasoningGymVerifier.Config(**config))


def test_the_release_is_the_pinned_one_and_tasks_lists_every_family(capsys) -> None:
    from reasoning_gym.factory import DATASETS

    assert version("reasoning-gym") == RELEASE
    assert set(TASKS) == set(DATASETS) - {"composite"}
    assert list(TASKS) == sorted(TASKS)
    with capsys.disabled():
        print(f"\nreasoning_gym: {len(TASKS)} task families of reasoning-gym {RELEASE}")


def _entry(task: str) -> dict:
    return reasoning_gym.create_dataset(task, size=1, seed=SEED, **SMALL.get(task, {}))[0]


def _solution(task: str, entry: dict) -> str:
    """The entry's own answer, or, where the release generates none, a valid one."""
    metadata = entry["metadata"]
    if entry["answer"] is not None:
        return entry["answer"]
    if task == "graph_color":
        return json.dumps(metadata["possible_answer"])
    if task == "propositional_logic":
        return metadata["example_answer"]
    if task == "rubiks_cube":
        return metadata["example_correct_answer"]
    if task == "rush_hour":
        return _one_move(metadata["board_config"])
    if task == "boxnet":
        return json.dumps(_box_plan(metadata["initial_state"]))
    raise AssertionError(f"{task} generates no answer and this test has no solver for it")


def _one_move(board_config: str) -> str:
    """The single move that solves a one-move Rush Hour board, found with the release's own Board."""
    from reasoning_gym.games.rush_hour import Board

    for car in sorted({c for c in board_config if c.isalpha() and c not in "ox"}):
        for step in (1, 2, 3, 4, -1, -2, -3, -4):
            move = f"{car}{step:+d}"
            board = Board(board_config)
            try:
                board.perform_moves(move)
            except Exception:  # noqa: BLE001 - an illegal move: try the next
                continue
            if board.solved:
                return move
    raise AssertionError("no single move solves the board")


def _box_plan(state: dict[str, list[str]]) -> list[dict[str, str]]:
    """Walk each box to its target, one step per action, then match it (boxnet's plan format)."""
    cells = {tuple(float(v) for v in key.split("_")): list(items) for key, items in state.items()}
    plan = []
    for cell, items in list(cells.items()):
        for box in [item for item in items if item.startswith("box_")]:
            target = next(c for c, content in cells.items() if f"target_{box[4:]}" in content)
            here = cell
            while here != target:
                axis = 0 if here[0] != target[0] else 1
                step = 1.0 if target[axis] > here[axis] else -1.0
                there = (here[0] + step, here[1]) if axis == 0 else (here[0], here[1] + step)
                plan.append({f"Agent[{here[0]}, {here[1]}]": f"move({box}, square[{there[0]}, {there[1]}])"})
                here = there
            plan.append({f"Agent[{here[0]}, {here[1]}]": f"move({box}, target_{box[4:]})"})
    return plan


def _wrong(task: str, entry: dict, right: str) -> str:
    return "I do not know." if right.strip() != "I do not know." else "42"


@pytest.mark.parametrize("task", TASKS)
def test_each_family_scores_its_own_answer_1_and_a_wrong_one_below_1(task: str) -> None:
    entry = _entry(task)
    assert entry["metadata"]["source_dataset"] == task
    right = _solution(task, entry)
    assert score(f"<think>working...</think><answer>{right}</answer>", entry).score == 1.0
    strict = task == "game_of_life_halting"  # the released scorer pays any non-empty answer there
    wrong = score(f"<answer>{_wrong(task, entry, right)}</answer>", entry, strict=strict, on_scorer_error="zero")
    assert wrong.status == "ok" and wrong.score < 1.0, wrong


def test_composite_entries_are_scored_by_the_family_they_came_from() -> None:
    from reasoning_gym.composite import DatasetSpec

    specs = [
        DatasetSpec(name="chain_sum", weight=1, config={}),
        DatasetSpec(name="spell_backward", weight=1, config={}),
    ]
    data = reasoning_gym.create_dataset("composite", size=4, seed=3, datasets=specs)
    entries = [data[i] for i in range(4)]
    assert {e["metadata"]["source_dataset"] for e in entries} == {"chain_sum", "spell_backward"}
    assert all(score(f"<answer>{e['answer']}</answer>", e).score == 1.0 for e in entries)


def test_nemo_gyms_reading_of_the_answer() -> None:
    entry = reasoning_gym.create_dataset("basic_arithmetic", size=1, seed=3)[0]
    gold = entry["answer"]
    assert score(f"<answer>0</answer> then <answer>{gold}</answer>", entry).score == 1.0  # the last tag
    assert score(f"So \\boxed{{{gold}}}.", entry).score == 1.0  # no tag: the first \boxed{}
    assert score(f"\\boxed{{{gold}}}", entry, answer_format="answer_tag").score == 0.0  # tags only
    assert score(f"  {gold} \n", entry).score == 1.0  # neither: the text
    assert score(f"<think><answer>{gold}</answer></think>no idea", entry).score == 0.0  # not in the reasoning
    result = score(f"<answer>{gold}</answer>", {**entry, "task": "basic_arithmetic"})
    assert (result.score, result.details["task"], result.details["answer"]) == (1.0, "basic_arithmetic", gold)


def test_strict_replaces_the_two_released_scorers_that_pay_wrong_answers() -> None:
    halting = _entry("game_of_life_halting")
    opposite = "True" if halting["answer"] == "False" else "False"
    assert score(f"<answer>{opposite}</answer>", halting).score == 1.0  # the release: bool("True") == bool("False")
    assert score(f"<answer>{opposite}</answer>", halting, strict=True).score == 0.0
    assert score(f"<answer>{halting['answer']}</answer>", halting, strict=True).score == 1.0
    coin = next(e for e in (reasoning_gym.create_dataset("coin_flip", size=8, seed=1)) if e["answer"].startswith("0."))
    assert score("<answer>0</answer>", coin).score == 1.0  # prefix credit over the shorter string
    assert score("<answer>0</answer>", coin, strict=True).score == 0.0
    assert score(f"<answer>{coin['answer']}</answer>", coin, strict=True).score == 1.0


@pytest.mark.parametrize("task", ["simple_integration", "intermediate_integration"])
def test_strict_refuses_the_integral_restated_as_its_own_antiderivative(task: str) -> None:
    entry = _entry(task)
    restated = f"<answer>Integral({entry['metadata']['integrand']}, x) + C</answer>"
    assert score(restated, entry).score == 1.0  # the release differentiates it back to the integrand
    assert score(restated, entry, strict=True).score == 0.0
    assert score(f"<answer>{entry['answer']}</answer>", entry, strict=True).score == 1.0


def test_a_scorer_that_raises_is_an_error_unless_zero_is_asked_for() -> None:
    entry = _entry("prime_factorization")
    with pytest.raises(VerifierError, match="score_answer for 'prime_factorization' raised ValueError"):
        score("<answer>no idea</answer>", entry)
    zero = score("<answer>no idea</answer>", entry, on_scorer_error="zero")
    assert (zero.status, zero.score) == ("ok", 0.0) and "ValueError" in zero.details["scorer_error"]


@pytest.mark.parametrize(
    ("reference", "field"),
    [
        ("42", "reference as an entry"),
        ({"question": "q", "answer": "1"}, "reference.metadata"),
        ({"question": "q", "answer": "1", "metadata": {}}, "reference.task"),
        ({"answer": "1", "metadata": {"source_dataset": "no_such_task"}}, "has no task 'no_such_task'"),
        ({"task": "chain_sum", "answer": "1", "metadata": {"source_dataset": "gcd"}}, "differs from"),
        ({"answer": 1, "metadata": {"source_dataset": "chain_sum"}}, "reference.answer"),
    ],
)
def test_a_reference_that_is_not_an_entry_is_an_error_naming_the_field(reference, field: str) -> None:
    with pytest.raises(VerifierError, match=field):
        score("<answer>1</answer>", reference)


def test_the_config_can_restrict_the_families_and_refuses_unknown_ones() -> None:
    entry = _entry("gcd")
    with pytest.raises(VerifierError, match="not among the config's tasks"):
        score(f"<answer>{entry['answer']}</answer>", entry, tasks=["lcm"])
    with pytest.raises(ValueError):
        ReasoningGymVerifier.Config(tasks=["no_such_task"])


def test_no_exploit_of_the_corpus_is_paid_under_strict_and_the_known_leaks_are_named() -> None:
    exploits = load_corpus("reasoning_gym")
    strict = {e.id: score(e.response, e.reference, strict=True) for e in exploits}
    assert {i: r.score for i, r in strict.items() if r.status != "ok" or r.score > 0} == {}
    released = {e.id: score(e.response, e.reference).score for e in exploits}
    assert {i for i, s in released.items() if s > 0} == {
        "reasoning_gym/halting-any-text",
        "reasoning_gym/coin-flip-zero-prefix",
        "reasoning_gym/integral-restated",
    }


def test_over_http_an_entry_is_scored_in_a_worker_and_a_bad_one_names_its_field(http) -> None:
    entry = _entry("gcd")
    samples = [
        {"response": f"<answer>{entry['answer']}</answer>", "reference": entry},
        {"response": "<answer>1</answer>", "reference": {"answer": "1", "metadata": {"source_dataset": "nope"}}},
    ]
    reply = http.post("/v1/score", json={"verifier": "reasoning_gym", "samples": samples})
    assert reply.status_code == 200, reply.text
    first, second = reply.json()["results"]
    assert (first["status"], first["score"]) == ("ok", 1.0)
    assert second["status"] == "error" and "reference.task" in second["error"]
    audit = http.post("/v1/audit", json={"verifier": {"name": "reasoning_gym", "config": {"strict": True}}})
    assert [e["id"] for e in audit.json()["exploits"]["cases"] if e["rewarded"]] == []


def test_reading_the_answer_gives_what_the_releases_extract_answer_gives() -> None:
    import random

    from reasoning_gym.utils import extract_answer

    from rewardhub.verifiers.reasoning_gym import _answer

    rng = random.Random(9)
    pieces = ["<answer>", "</answer>", " ", "7", "x", "\n", "<answer", "</answer"]
    for _ in range(500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert _answer(text, "answer_tag") == extract_answer(text, tag_name="answer"), text
