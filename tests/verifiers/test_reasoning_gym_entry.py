"""A reasoning-gym entry that travelled as JSON is scored as the entry its family generated.

For every family of the pinned release: entries are generated, sent through a JSON round trip,
and their gold answer (and a wrong one) must score exactly what the family's ``score_answer`` gives
on the original objects. The table of tuples (``reasoning_gym_entry.TUPLES``) must be the
release's: generating every family finds exactly those places. An entry generated with a
non-default config is scored with that config, read from its ``metadata.difficulty``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rewardhub.types import Sample
from rewardhub.verifiers.reasoning_gym import TASKS, ReasoningGymVerifier
from rewardhub.verifiers.reasoning_gym_entry import INT_KEYS, TUPLES, entry_config, restore_types

reasoning_gym = pytest.importorskip("reasoning_gym")

SEED = 31
SIZE = 3


def score(answer: str | None, reference: dict[str, Any], **config: Any) -> Any:
    sample = Sample(response="" if answer is None else f"<answer>{answer}</answer>", reference=reference)
    return ReasoningGymVerifier().score(sample, ReasoningGymVerifier.Config(answer_format="answer_tag", **config))


def released(data: Any, answer: str | None, entry: dict[str, Any]) -> float | str:
    from reasoning_gym.utils import extract_answer

    said = None if answer is None else extract_answer(f"<answer>{answer}</answer>", tag_name="answer")
    try:
        return float(data.score_answer(said, entry))
    except Exception as exc:  # noqa: BLE001
        return f"raises {type(exc).__name__}"


def wire(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize("family", TASKS)
def test_every_familys_json_round_trip_scores_as_the_original_entry(family: str) -> None:
    data = reasoning_gym.create_dataset(family, size=SIZE, seed=SEED)
    entries = [data[i] for i in range(SIZE)]
    for index, entry in enumerate(entries):
        other = entries[(index + 1) % SIZE]["answer"]
        for answer in (entry["answer"], other):
            expected = released(data, answer, entry)
            try:
                got: float | str = score(answer, wire(entry), on_scorer_error="error").score
            except Exception as exc:  # noqa: BLE001 - the verifier's error for a raising scorer
                got = f"error {exc}"
            if isinstance(expected, str):
                assert isinstance(got, str), (family, answer, expected, got)
            else:
                assert got == pytest.approx(expected, abs=1e-12), (family, answer)


def _places(value: Any, path: tuple[str, ...], tuples: set, int_keys: set) -> None:
    if isinstance(value, tuple):
        tuples.add(path)
    if isinstance(value, list | tuple):
        for item in value:
            _places(item, (*path, "*"), tuples, int_keys)
    elif isinstance(value, dict):
        if any(not isinstance(key, str) for key in value):
            int_keys.add(path)
        for key, item in value.items():
            _places(item, (*path, str(key)) if isinstance(key, str) else (*path, "<key>"), tuples, int_keys)


def test_the_table_of_tuples_is_the_releases() -> None:
    found: dict[str, set] = {}
    found_keys: dict[str, set] = {}
    for family in TASKS:
        data = reasoning_gym.create_dataset(family, size=SIZE, seed=SEED + 1)
        tuples: set = set()
        int_keys: set = set()
        for i in range(SIZE):
            # codeio's input_data is the drawn program's input, whatever it takes; its scorer never reads it
            skip = {"difficulty", "input_data"} if family == "codeio" else {"difficulty"}
            metadata = {k: v for k, v in data[i]["metadata"].items() if k not in skip}
            _places(metadata, (), tuples, int_keys)
        if tuples:
            found[family] = tuples
        if int_keys:
            found_keys[family] = int_keys
    assert found == {family: set(paths) for family, paths in TUPLES.items()}
    assert found_keys == {family: set(paths) for family, paths in INT_KEYS.items()}


def test_restoring_gives_back_the_generated_metadata() -> None:
    for family in (*TUPLES, *INT_KEYS):
        entry = reasoning_gym.create_dataset(family, size=1, seed=SEED)[0]
        metadata = {k: v for k, v in entry["metadata"].items() if k != "difficulty"}
        assert restore_types(family, wire(metadata)) == metadata
        assert shape(restore_types(family, wire(metadata))) == shape(metadata), family  # tuples, not lists


def shape(value: Any) -> Any:
    """The containers of ``value``: which are tuples, which lists, which dicts (and their keys' types)."""
    if isinstance(value, list | tuple):
        return (type(value).__name__, [shape(item) for item in value])
    if isinstance(value, dict):
        return {(type(key).__name__, str(key)): shape(item) for key, item in value.items()}
    return None


def test_an_arc_board_from_json_scores_1_for_the_right_answer_not_005() -> None:
    for family in ("arc_agi", "rearc"):
        entry = reasoning_gym.create_dataset(family, size=1, seed=SEED)[0]
        assert score(entry["answer"], wire(entry)).score == 1.0
        # the release itself, on the JSON entry: the board as lists never equals the parsed tuples
        assert reasoning_gym.get_score_answer_fn(family)(entry["answer"], wire(entry)) == pytest.approx(0.05)


def near(family: str, gold: str) -> str:
    """An answer inside the default config's tolerance that a tighter config may refuse."""
    if family == "decimal_arithmetic":
        from decimal import Decimal

        return str(Decimal(gold) + Decimal("0.0001"))
    return gold


def _configured(family: str, **config: Any) -> Any:
    return reasoning_gym.create_dataset(family, size=4, seed=SEED, **config)


@pytest.mark.parametrize(
    ("family", "config"),
    [
        ("decimal_arithmetic", {"min_num_decimal_places": 6, "max_num_decimal_places": 8}),
        ("time_intervals", {"max_time_difference_seconds": 600, "max_date_difference_days": 3}),
        ("word_ladder", {"min_word_length": 3, "max_word_length": 3}),
    ],
)
def test_an_entry_made_with_a_non_default_config_is_scored_with_that_config(family: str, config: dict) -> None:
    data = _configured(family, **config)
    default = reasoning_gym.get_score_answer_fn(family)
    differs = 0
    for i in range(4):
        entry = data[i]
        assert entry_config(family, wire(entry["metadata"])).items() >= config.items()
        gold = entry["answer"]
        for answer in (gold, gold[:-1], gold + "1", near(family, gold)):
            result = score(answer, wire(entry))
            assert result.score == pytest.approx(released(data, answer, entry), abs=1e-12), (answer, result.details)
            assert result.details["scorer_config"] == entry_config(family, wire(entry["metadata"]))
            try:
                differs += default(answer, entry) != released(data, answer, entry)
            except Exception:  # noqa: BLE001 - the default scorer cannot read this entry at all
                differs += 1
    assert differs > 0  # the default config would have scored some of them differently


def test_entry_config_default_scores_with_the_default_config_as_nemo_gyms_server_does() -> None:
    data = _configured("decimal_arithmetic", min_num_decimal_places=6, max_num_decimal_places=8)
    entry = data[0]
    near = str(float(entry["answer"]) + 0.0001)  # inside the default tolerance (3 places), outside 8
    assert released(data, near, entry) == 0.0
    assert score(near, wire(entry)).score == 0.0
    result = score(near, wire(entry), entry_config="default")
    assert result.score == reasoning_gym.get_score_answer_fn("decimal_arithmetic")(near, entry) == 1.0
    assert result.details["scorer_config"] == "default"


def test_an_entry_at_the_default_config_needs_no_rebuilt_scorer() -> None:
    entry = reasoning_gym.create_dataset("decimal_arithmetic", size=1, seed=SEED)[0]
    assert entry_config("decimal_arithmetic", wire(entry["metadata"])) == {}
    assert score(entry["answer"], wire(entry)).details["scorer_config"] == "default"


def test_a_config_the_release_refuses_is_the_samples_error() -> None:
    from rewardhub.errors import VerifierError

    entry = wire(reasoning_gym.create_dataset("decimal_arithmetic", size=1, seed=SEED)[0])
    entry["metadata"]["difficulty"]["decimal_places"] = [9, 12]  # precision 12 must exceed 13
    with pytest.raises(VerifierError, match="cannot build 'decimal_arithmetic'"):
        score(entry["answer"], entry)


def test_running_out_of_memory_while_building_is_not_called_a_refused_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's memory limit reaches the service as a MemoryError, which it reports as
    "out of memory while scoring" with the address space the worker held; a config error would hide it."""
    from rewardhub.verifiers import reasoning_gym as module

    def out_of_memory(task: str, fields_json: str) -> Any:
        raise MemoryError

    monkeypatch.setattr(module, "_configured_scorer", out_of_memory)
    entry = wire(reasoning_gym.create_dataset("decimal_arithmetic", size=1, seed=SEED)[0])
    entry["metadata"]["difficulty"]["decimal_places"] = [3, 4]
    with pytest.raises(MemoryError):
        score(entry["answer"], entry)
