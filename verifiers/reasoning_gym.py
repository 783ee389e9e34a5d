"""``reasoning_gym``: a reasoning-gym entry scored by its own task's ``score_answer``.

reasoning-gym generates about a hundred task families procedurally (arithmetic, puzzles, games,
graphs, ARC, ...), and each family judges its answers with its own ``score_answer(answer, entry)``.
This verifier calls exactly that, from the pinned release (``RELEASE``), the way NeMo-Gym's
reasoning_gym resources server does: the task is the reference's ``task`` or its
``metadata.source_dataset``; the answer is the last ``<answer>`` element (reasoning-gym's own
``extract_answer``), else the first ``\\boxed{...}``, else the whole text (``answer_format``).
``TASKS`` lists every family the release scores (its ``composite`` mixes them and is not a task:
its entries name the family they came from).

The reference is the entry: ``{"question", "answer", "metadata": {"source_dataset", ...}}``, as the
release generates it, with ``task`` optional; or, as the API contract writes it, ``{"task", "entry":
{question, answer, metadata}}``. A family's partial credit (0.01 for a wrong number,
a share of a plan) is its own. Four released scorers pay for answers that are not right, and
``strict`` replaces just those: ``game_of_life_halting`` compares ``bool(answer)`` with
``bool(gold)``, so any non-empty text matches the gold "False"; ``coin_flip`` gives prefix credit
over the shorter string, so "0" earns 1 for any probability below 1; ``simple_integration`` and
``intermediate_integration`` differentiate the answer, so ``Integral(integrand, x)``, the question
restated, earns 1 for every integrand (strict scores an answer holding ``Integral`` 0). A scorer that raises, or a
task the release does not have, is status ``error``; with ``on_scorer_error: "zero"`` a raising
scorer scores 0, as NeMo-Gym's server does.

No family's scorer evaluates the text it is given: eleven released scorers would (``eval`` or
``sympy.parse_expr`` of the answer or of the entry), and ``reasoning_gym_guards`` scores those
answers without evaluating them, or refuses them (the family's score for an unreadable answer,
``details.refused`` saying why); a reference field they would evaluate that is not data is an error.

An entry is scored as the dataset that generated it scores it (``reasoning_gym_entry``): the tuples
JSON turned into lists are tuples again (``arc_agi`` and ``rearc`` compare boards as tuples), and
with ``entry_config: "entry"`` (the default) the scorer is built with the config the entry's
``metadata.difficulty`` records where it differs from the family's default (``decimal_arithmetic``'s
tolerance, ``time_intervals``' windows, ``word_ladder``'s word lengths); ``"default"`` scores with
the default config, as ``get_score_answer_fn`` and NeMo-Gym's server do. ``details.scorer_config``
names the config used: ``"default"``, or the fields that differ.

``reasoning_gym`` is imported in the worker on the first sample (about a second and a hundred MB:
it registers every family at import), never in the API process.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any, Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from . import reasoning_gym_guards as guards
from .reasoning_gym_entry import config_fields, entry_config, field_value, restore_types
from .text import strip_think

__all__ = ["RELEASE", "TASKS", "ReasoningGymVerifier"]

RELEASE = "0.1.25"

TASKS = (
    "ab",
    "acre",
    "advanced_geometry",
    "aiw",
    "arc_1d",
    "arc_agi",
    "base_conversion",
    "basic_arithmetic",
    "bf",
    "binary_alternation",
    "binary_matrix",
    "bitwise_arithmetic",
    "boxnet",
    "caesar_cipher",
    "calendar_arithmetic",
    "chain_sum",
    "circuit_logic",
    "codeio",
    "coin_flip",
    "color_cube_rotation",
    "complex_arithmetic",
    "count_bits",
    "count_primes",
    "countdown",
    "course_schedule",
    "cryptarithm",
    "decimal_arithmetic",
    "decimal_chain_sum",
    "dice",
    "emoji_mystery",
    "family_relationships",
    "figlet_font",
    "fraction_simplification",
    "futoshiki",
    "game_of_life",
    "game_of_life_halting",
    "gcd",
    "graph_color",
    "group_anagrams",
    "gsm_symbolic",
    "intermediate_integration",
    "isomorphic_strings",
    "jugs",
    "kakurasu",
    "knight_swap",
    "knights_knaves",
    "largest_island",
    "lcm",
    "leg_counting",
    "letter_counting",
    "letter_jumble",
    "list_functions",
    "mahjong_puzzle",
    "manipulate_matrix",
    "maze",
    "mini_sudoku",
    "modulo_grid",
    "n_queens",
    "needle_haystack",
    "number_filtering",
    "number_format",
    "number_sequence",
    "number_sorting",
    "palindrome_generation",
    "palindrome_partitioning",
    "path_star",
    "polynomial_equations",
    "polynomial_multiplication",
    "pool_matrix",
    "power_function",
    "prime_factorization",
    "products",
    "propositional_logic",
    "puzzle24",
    "quantum_lock",
    "ransom_note",
    "rearc",
    "rectangle_count",
    "rotate_matrix",
    "rotten_oranges",
    "rubiks_cube",
    "rush_hour",
    "self_reference",
    "sentence_reordering",
    "shortest_path",
    "simple_equations",
    "simple_geometry",
    "simple_integration",
    "sokoban",
    "spell_backward",
    "spiral_matrix",
    "string_insertion",
    "string_manipulation",
    "string_splitting",
    "string_synthesis",
    "sudoku",
    "survo",
    "syllogism",
    "time_intervals",
    "tower_of_hanoi",
    "tsumego",
    "word_ladder",
    "word_sequence_reversal",
    "word_sorting",
    "zebra_puzzles",
)
"""Every task family reasoning-gym RELEASE registers and scores (tests pin this list to the release)."""

_BOXED = re.compile(r"\\boxed\{([^}]+)\}")  # NeMo-Gym's fallback: the first \boxed{...}, no nesting
_TRUTH = {"true": True, "yes": True, "false": False, "no": False}


class ReasoningGymVerifier(Verifier):
    """A reasoning-gym entry scored by its task's own score_answer, from the pinned reasoning-gym release."""

    name = "reasoning_gym"
    version = "2"
    kind = "rule"
    exploit_corpus = "reasoning_gym"

    class Config(VerifierConfig):
        answer_format: Literal["answer_tag_or_boxed", "answer_tag", "raw"] = Field(
            "answer_tag_or_boxed",
            description="answer_tag_or_boxed: NeMo-Gym's reading (the last <answer>, else the first \\boxed{}, else "
            "the text); answer_tag: reasoning-gym's extract_answer alone (None without a tag); raw: the text.",
        )
        strict: bool = Field(
            False,
            description="Replace the released scorers that pay for wrong answers (game_of_life_halting, "
            "coin_flip: exact comparisons; simple_integration, intermediate_integration: an unevaluated "
            "Integral, the question restated, scores 0).",
        )
        on_scorer_error: Literal["error", "zero"] = Field(
            "error", description="A score_answer that raises: status error, or 0 as NeMo-Gym's server gives."
        )
        tasks: list[Literal[TASKS]] | None = Field(  # type: ignore[valid-type]
            None, description="Accept only entries of these families (all of TASKS when unset)."
        )
        strip_think: bool = Field(True, description="Ignore a leading <think>...</think> block.")
        entry_config: Literal["entry", "default"] = Field(
            "entry",
            description="entry: score with the dataset config the entry's metadata.difficulty records (as the "
            "dataset that generated it scores); default: the family's default config (get_score_answer_fn, "
            "NeMo-Gym's server).",
        )

    def score(self, sample: Sample, config: Config) -> Result:
        entry, task = _entry(sample.reference)
        if config.tasks is not None and task not in config.tasks:
            raise VerifierError(f"reference task {task!r} is not among the config's tasks")
        text = strip_think(sample.response) if config.strip_think else sample.response
        answer = _answer(text, config.answer_format)
        entry = guards.checked_entry(task, {**entry, "metadata": restore_types(task, entry["metadata"])})
        scorer, used = _scorer_for(task, entry["metadata"], config.entry_config)
        said = {"task": task, "answer": _short(answer), "scorer_config": used}
        refusal = guards.answer_refusal(task, answer)
        if refusal is not None:
            return Result.ok(refusal.score, **said, refused=refusal.reason)
        if config.strict and task in _STRICT:
            value = _STRICT[task](answer, entry, scorer)
        else:
            try:
                value = scorer(answer=answer, entry=entry)
            except VerifierError:
                raise
            except Exception as exc:  # noqa: BLE001 - a third-party scorer's failure, reported as such
                if config.on_scorer_error == "zero":
                    return Result.ok(0.0, **said, scorer_error=f"{type(exc).__name__}: {exc}")
                raise VerifierError(
                    f"reasoning-gym's score_answer for {task!r} raised {type(exc).__name__}: {exc}"
                ) from None
        if isinstance(value, guards.Refusal):
            return Result.ok(value.score, **said, refused=value.reason)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise VerifierError(f"reasoning-gym's score_answer for {task!r} returned {value!r}, not a number")
        return Result.ok(float(value), **said)


def _entry(reference: Any) -> tuple[dict[str, Any], str]:
    if not isinstance(reference, dict):
        raise VerifierError(
            f"reasoning_gym needs reference as an entry {{question, answer, metadata}}, got {type(reference).__name__}"
        )
    if "entry" in reference:  # the API contract's {"task", "entry": {question, answer, metadata}}
        wrapped = reference["entry"]
        if not isinstance(wrapped, dict) or set(reference) - {"task", "entry"}:
            raise VerifierError('reference: {"task": str, "entry": {question, answer, metadata}}, nothing else')
        reference = {**wrapped, **({"task": reference["task"]} if "task" in reference else {})}
    metadata = reference.get("metadata")
    if not isinstance(metadata, dict):
        raise VerifierError("reference.metadata: a reasoning-gym entry carries its metadata (an object)")
    task = reference.get("task", metadata.get("source_dataset"))
    if not isinstance(task, str) or not task:
        raise VerifierError("reference.task: name the task (or give metadata.source_dataset)")
    if "task" in reference and metadata.get("source_dataset") not in (None, task):
        raise VerifierError(
            f"reference.task {task!r} differs from metadata.source_dataset {metadata['source_dataset']!r}"
        )
    if task not in TASKS:
        raise VerifierError(f"reference.task: reasoning-gym {RELEASE} has no task {task!r}")
    if "answer" in reference and reference["answer"] is not None and not isinstance(reference["answer"], str):
        raise VerifierError("reference.answer: a string (or null for tasks that check the answer themselves)")
    entry = {key: value for key, value in reference.items() if key != "task"}
    entry.setdefault("question", "")
    entry.setdefault("answer", None)
    return entry, task


def _answer(text: str, answer_format: str) -> str | None:
    if answer_format == "raw":
        return text.strip()
    from reasoning_gym.utils import extract_answer

    # The release's regexes rescan to the end from every opening that has no closing after it
    # (twenty thousand "<answer>" cost a minute); cut after the last closing, their matches are
    # the same and each opening finds its closing in one pass.
    close = text.rfind("</answer>")
    tagged = extract_answer(text[: close + len("</answer>")], tag_name="answer") if close >= 0 else None
    if tagged is not None or answer_format == "answer_tag":
        return tagged
    brace = text.rfind("}")
    boxed = _BOXED.search(text[: brace + 1]) if brace >= 0 else None
    if boxed:
        return boxed.group(1).strip()
    return text.strip()


def _scorer_for(task: str, metadata: dict[str, Any], which: str) -> tuple[Any, Any]:
    """The scorer for this entry, and the config it was built with (``"default"`` or the fields that
    differ). A family the guards score is always scored by the guards (their rules take no config)."""
    if which == "default" or task in guards.SCORERS:
        return _scorer(task), "default"
    fields = entry_config(task, metadata)
    if not fields:
        return _scorer(task), "default"
    try:
        return _configured_scorer(task, json.dumps(fields, sort_keys=True)), fields
    except MemoryError:
        raise  # the worker's memory limit, reported as such (with the address space it held), not the config's fault
    except Exception as exc:  # noqa: BLE001 - the release refuses the config the entry records
        raise VerifierError(
            f"reference.metadata.difficulty: reasoning-gym cannot build {task!r} with {fields}: "
            f"{type(exc).__name__}: {exc}"
        ) from None


@lru_cache(maxsize=64)
def _configured_scorer(task: str, fields_json: str):
    """``score_answer`` of a dataset built with these config fields (one entry, seed 0: the scorer
    reads the config, never the dataset's own entries). Keyed by the fields as JSON, which any of
    them can be; each is given back in its default's container type."""
    import reasoning_gym

    defaults = config_fields(task)
    fields = {name: field_value(value, defaults[name]) for name, value in json.loads(fields_json).items()}
    return reasoning_gym.create_dataset(task, size=1, seed=0, **fields).score_answer


@cache
def _scorer(task: str):
    """The task's ``score_answer`` (a dataset built with its default config, as ``get_score_answer_fn`` does),
    or, for a family whose released scorer evaluates text, the guards' own."""
    if task in guards.SCORERS:
        return guards.SCORERS[task]
    import reasoning_gym

    return reasoning_gym.get_score_answer_fn(task)


def _halting(answer: str | None, entry: dict[str, Any], scorer: Any = None) -> float:
    said = _TRUTH.get((answer or "").strip().strip(".").casefold())
    gold = _TRUTH.get(str(entry.get("answer", "")).strip().casefold())
    if gold is None:
        raise VerifierError(
            f"reference.answer: game_of_life_halting's gold {entry.get('answer')!r} is not True or False"
        )
    return 1.0 if said is gold else 0.0


def _coin_flip(answer: str | None, entry: dict[str, Any], scorer: Any = None, tol: float = 1e-4) -> float:
    try:
        gold = float(Fraction(str(entry["answer"]).replace(",", "")))
    except (KeyError, ValueError, ZeroDivisionError):
        raise VerifierError(f"reference.answer: coin_flip's gold {entry.get('answer')!r} is not a number") from None
    try:
        said = float(Fraction((answer or "").replace(",", "").strip()))
    except (ValueError, ZeroDivisionError):
        return 0.0
    return 1.0 if abs(said - gold) <= tol else 0.0


def _integral(task: str):
    """The released integration scorer, except that an answer still holding ``Integral`` scores 0:
    its derivative is the integrand, so the release pays the question restated as its answer."""

    def score(answer: str | None, entry: dict[str, Any], scorer: Any = None) -> float:
        if answer is not None and re.search(r"\bIntegral\b", answer):
            return 0.0
        return (scorer or _scorer(task))(answer=answer, entry=entry)

    return score


_STRICT = {
    "game_of_life_halting": _halting,
    "coin_flip": _coin_flip,
    "simple_integration": _integral("simple_integration"),
    "intermediate_integration": _integral("intermediate_integration"),
}


def _short(answer: str | None) -> str | None:
    return None if answer is None else answer[:200]
