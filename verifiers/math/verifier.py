"""``math``: the response's final answer is mathematically equivalent to the gold answer.

Judges: the final answer a response commits to, read by the one reader every verifier shares
(:func:`rewardhub.verifiers.final_answer.read_final_answer`: last box, ``####``, ``<answer>`` tags,
"the answer is", or, if the policy allows, an unanchored final statement) against the gold as users pass it
(``\\frac{1}{2}``, ``$...$``, ``\\boxed{...}``, ``0.5``, a worked solution ending in a box; a gold
boxed in several parts is answered part by part, in order, and a sentence in a gold's box states its
answer after its lead-in: ``gold``), after
one normalization of notation (``normalize``), a structural parse with math-verify's LaTeX
parser at the leaves (``parse``) and an equivalence check that never rounds a wrong answer into a
right one (``compare``). Every result says in ``details`` what was extracted, what the gold was
read as, and why it matched or not (``reason``).

Does not judge: the reasoning, the format (use ``format``), whether an equivalent answer is in the
form the problem asked for (``\\frac{1}{2}`` matches ``0.5``), or proofs. A model judge can be
named in ``escalate_to`` to look again at answers this rule calls wrong.

Failure classes are explicit: no answer found is ``ok`` with score 0 and ``reason: no_answer``;
an unreadable gold is status ``error`` (``reason: gold_unparseable``); an answer too expensive to
evaluate (``9^{9^{9^{9}}}``, ``(10^{10})!``) is status ``error`` with ``reason: too_complex``, decided
by a cheap pre-screen before sympy runs, while a closed form whose powers sympy leaves unexpanded
(``(2-\\sqrt{3})^{2016}``) is judged, in bounded time (``closed_form``); a comparison sympy cannot carry out is status ``error``
(``reason: incomparable``). math-verify's signal-based timeouts are never armed (we call its
LaTeX normalization and parser directly, not ``parse``/``verify`` with their ``timeout`` wrappers:
``signal.alarm`` breaks off the main thread); the execution pool's hard per-sample limit covers us.

All of this is rewardhub's reading. A request that asks for the reference's reading where rewardhub
deliberately differs from it (``reading: "math_verify"``) gets Math-Verify's own verdict, behind the
same pre-screen (``reference``); ``details.reading`` names the reading used.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field, model_validator

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from ..final_answer import ANCHORS, FinalAnswer, extract_gold, prepare, read_final_answer
from .compare import Incomparable, Policy, equivalent
from .gold import answer_in_sentence, answer_parts
from .normalize import normalize, repair_escapes
from .parse import CACHE_SIZE, Unparseable, parse_normalized
from .reference import Settings, math_verify_verdict, reference_version
from .screen import Limits, TooComplex, screen
from .values import Items, Value

__all__ = ["MathConfig", "MathVerifier"]

Anchor = Literal["boxed", "hashes", "answer_tag", "answer_phrase"]


class MathVerifier(Verifier):
    """Final-answer extraction and mathematical equivalence with math-verify and sympy."""

    name = "math"
    version = "4"
    kind = "rule"

    class Config(VerifierConfig):
        """The policy of the ``math`` verifier. The defaults are tuned for RL rewards: every known
        false-positive class scores 0, common equivalent spellings score 1."""

        anchors: list[Anchor] = Field(
            default_factory=lambda: list(ANCHORS),
            description="Which anchors mark a final answer: 'boxed' (last \\boxed{}), 'hashes' (#### N), "
            "'answer_tag' (<answer>...</answer>), 'answer_phrase' ('the answer is', 'Final answer:'). The one that "
            "appears last in the response wins.",
        )
        unanchored: bool = Field(
            True,
            description="Whether a response with none of the anchors can still score, through a bare answer or the "
            "last sentence that states a number or formula. False makes an unboxed response score 0 when anchors=['boxed'].",
        )
        bare_numbers: bool = Field(
            True, description="Whether math written outside LaTeX delimiters ('so it costs 7.78') can be the answer."
        )
        percent: Literal["either", "fraction", "number"] = Field(
            "either",
            description="How 28% compares with a number when only one side has a percent sign: 'either' accepts 28 "
            "and 0.28, 'fraction' only 0.28, 'number' only 28.",
        )
        decimal_places: int = Field(
            6,
            ge=0,
            le=50,
            description="A decimal answer to an exact gold (1/3) must be written to at least this many places and "
            "round to it (0.333333 matches, 0.33 does not).",
        )
        gold_precision: bool = Field(
            True,
            description="A decimal gold states its own precision: 85.71 accepts 600/7 and 85.714, not 85.7.",
        )
        rounded_digits: int = Field(
            4,
            ge=0,
            le=30,
            description="A decimal answer to a gold with no exact decimal (600/7, \\sqrt{2}) is accepted when it is "
            "the gold correctly rounded to the places shown (within half a unit of the last digit) and shows at least "
            "this many significant digits: 85.71 for 600/7, 1.414 for \\sqrt{2}; 0.33 for 1/3 is not. A gold with an "
            "exact decimal (1/8) is never met by a rounding (0.13). 0 turns this off.",
        )
        relative_tolerance: float = Field(
            0.0, ge=0.0, le=0.1, description="Also accept numbers within this relative distance (0 = exact rules only)."
        )
        order: Literal["auto", "ordered", "unordered"] = Field(
            "auto",
            description="'auto': tuples, vectors and intervals are ordered, sets and bare lists are not, a tuple never "
            "equals a set; 'ordered': bare lists are ordered too; 'unordered': tuples compare as sets.",
        )
        rename_variables: Literal["never", "bound", "always"] = Field(
            "bound",
            description="Variable renaming: 'bound' allows conventionally bound names (k, n, m, j, l, t in k\\pi) and "
            "function arguments (f(z)=z is f(x)=x); 'always' any consistent renaming; 'never' none.",
        )
        relations_as_sets: bool = Field(
            True,
            description="Whether a relation answer (-2 <= x <= 7) may match a set gold ([-2, 7]). A set answer may "
            "always match a relation gold.",
        )
        strict: bool = Field(
            False,
            description="One switch for the strict reading, overriding the fields it names: percent='fraction', "
            "gold_precision=False (a decimal gold must be met exactly), order='ordered', rename_variables='never', "
            "relations_as_sets=False, relative_tolerance=0, rounded_digits=0.",
        )
        strip_think: bool = Field(
            True,
            description="Read the answer after the last </think> (a box inside the reasoning is no answer). False "
            "reads the whole text, reasoning included, as NeMo-Gym's math_with_judge server does.",
        )
        restated: bool = Field(
            False,
            description="Whether an answer may be an expression copied from the prompt (the question restated: "
            "'67 + 12' for 'What is 67 + 12?'). False scores it 0 (reason 'restates_prompt'); the gold's own "
            "spelling and a plain number are always allowed.",
        )
        max_answer_chars: int = Field(
            1000, ge=10, le=100_000, description="Longest extracted answer that is parsed; longer is 'too complex'."
        )
        escalate_to: str | dict[str, Any] | None = Field(
            None,
            description="A verifier (a name, or {'name': ..., 'config': {...}}) consulted when this rule judges a "
            "sample wrong (status ok, score < 1), e.g. a model judge; the service records both results in details.",
        )
        reading: Literal["rewardhub", "math_verify"] = Field(
            "rewardhub",
            description="Whose reading decides. rewardhub: the reading above (the safest for RL rewards). math_verify: "
            "the reference's reading, for a request that wants it where rewardhub deliberately differs (a false chain "
            "of constants read as its right side, a gold taken exactly as written, its parser's own readings): "
            "Math-Verify's own parse and verify on the gold and the response as written, with bare_numbers, decimal_places (float_rounding), rename_variables "
            "('always' is strict=False) and relations_as_sets (allow_set_relation_comp, false unless set) mapped onto "
            "its settings; the other policy fields do not apply and are refused. details.reading names the reading.",
        )

        @model_validator(mode="before")
        @classmethod
        def _defaults_of_the_reading(cls, data: Any) -> Any:
            """Math-Verify compares no relation with a set unless asked: under its reading an unset
            relations_as_sets is false, written into the config so its hash (the verdict key) says so."""
            if isinstance(data, dict) and data.get("reading") == "math_verify" and "relations_as_sets" not in data:
                return {**data, "relations_as_sets": False}
            return data

        @model_validator(mode="after")
        def _fields_of_the_reading(self) -> MathVerifier.Config:
            ignored = sorted(set(self.model_fields_set) & REWARDHUB_ONLY)
            if self.reading == "math_verify" and ignored:
                raise ValueError(f"{', '.join(ignored)} apply to reading rewardhub, not math_verify")
            return self

    @classmethod
    def warm_up(cls) -> None:
        """One answer of each common shape: sympy's lazily imported modules and the LaTeX
        parser's tables are built here, in the fork server, instead of in every worker."""
        verifier, config = cls(), cls.Config()
        for response, reference in WARM_UP:
            verifier.score(Sample(response=response, reference=reference), config)

    def score(self, sample: Sample, config: MathVerifier.Config) -> Result:
        if config.reading == "math_verify":  # the gold exactly as written: no escape repaired
            return _score_as_math_verify(sample.response, _gold_text(sample.reference, repair=False), config)
        gold_text = _gold_text(sample.reference)
        candidates = read_final_answer(
            sample.response,
            tuple(config.anchors),
            config.unanchored,
            config.bare_numbers,
            strip_think=config.strip_think,
        )
        details: dict[str, Any] = {
            "reading": "rewardhub",
            "gold": gold_text,
            "extracted": _shown(candidates[0].text) if candidates else None,
            "anchor": candidates[0].anchor if candidates else None,
        }
        response = repair_escapes(sample.response)
        if response.strip() == gold_text.strip() or prepare(response, config.strip_think).strip() == gold_text.strip():
            return Result.ok(1.0, **details, reason="identical")
        limits = Limits(max_chars=config.max_answer_chars)
        gold = _read_gold(gold_text, limits)
        if isinstance(gold, str):
            reason = "too_complex" if gold.startswith("too complex") else "gold_unparseable"
            return Result.failed(gold, score=config.failure_score, **details, reason=reason)
        gold_value, details["gold"] = gold
        if not candidates:
            return Result.ok(0.0, **details, reason="no_answer")
        answer = _read_answer(candidates, limits, details)
        if isinstance(gold_value, Items) and gold_value.kind == "parts" and details.get("anchor") == "boxed":
            answer = _read_parts(response, len(gold_value.items), limits, details, config.strip_think) or answer
        if not config.restated and not isinstance(answer, str) and _restates_prompt(sample, details, gold_text):
            return Result.ok(0.0, **details, reason="restates_prompt")
        if details.get("answer") == details["gold"] and not isinstance(answer, str):
            return Result.ok(1.0, **details, reason="equivalent", rule="identical")
        if isinstance(answer, str):
            return Result.failed(answer, score=config.failure_score, **details, reason="too_complex")
        if answer is None:
            return Result.ok(0.0, **details, reason="unparseable_answer")
        try:
            how = _equivalent(gold_value, answer, _policy(config))
        except Incomparable as exc:
            return Result.failed(
                f"could not compare: {exc}", score=config.failure_score, **details, reason="incomparable"
            )
        if how is None:
            return Result.ok(0.0, **details, reason="not_equivalent")
        return Result.ok(1.0, **details, reason="equivalent", rule=how)


REWARDHUB_ONLY = frozenset(
    {"anchors", "unanchored", "percent", "gold_precision", "rounded_digits", "relative_tolerance", "order", "strict"}
    | {"restated", "max_answer_chars"}
)
"""The policy fields of rewardhub's reading that Math-Verify has no setting for."""


def _score_as_math_verify(response: str, gold_text: str, config: MathVerifier.Config) -> Result:
    """Math-Verify's verdict (``reference``), after our pre-screen of the gold and of the answer our
    reader finds: an answer too expensive to evaluate is an error here too, never a hang."""
    if config.strip_think and "</think>" in response:
        response = response.rsplit("</think>", 1)[1]
    details: dict[str, Any] = {"reading": "math_verify", "reference": reference_version()}
    limits = Limits(max_chars=100_000)  # Math-Verify reads answers of any length: only what would hang is refused
    candidates = read_final_answer(response, ANCHORS, True, config.bare_numbers, strip_think=False)
    for text, side in ((extract_gold(gold_text).text, "gold"), (candidates[0].text if candidates else "", "answer")):
        try:
            screen(normalize(text), limits)
        except TooComplex as exc:
            return Result.failed(
                f"too complex {side}: {exc.reason}", score=config.failure_score, **details, reason="too_complex"
            )
    settings = Settings(
        expressions=config.bare_numbers,
        float_rounding=config.decimal_places,
        strict=config.rename_variables != "always",
        allow_set_relation_comp=config.relations_as_sets,
    )
    verdict = math_verify_verdict(gold_text, response, settings)
    if verdict is None:
        return Result.failed(
            "gold answer is unparseable: math-verify reads nothing in it",
            score=config.failure_score,
            **details,
            reason="gold_unparseable",
        )
    details.update(gold=verdict.gold, answer=verdict.answer)
    if verdict.answer is None:
        return Result.ok(0.0, **details, reason="no_answer")
    return Result.ok(float(verdict.match), **details, reason="equivalent" if verdict.match else "not_equivalent")


# (response, reference) pairs that reach the lazy corners: polynomials, roots, pi, matrices,
# trigonometry, logarithms, relations, infinity, percent, degrees, tuples, intervals, sets.
WARM_UP = (
    ("\\boxed{x^2+2x+1}", "(x+1)^2"),
    ("The answer is $\\boxed{\\dfrac{\\sqrt{3}}{2}}$.", "\\frac{\\sqrt3}{2}"),
    ("\\boxed{2\\pi}", "2\\pi"),
    ("\\boxed{\\begin{pmatrix}1\\\\2\\end{pmatrix}}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}"),
    ("\\boxed{\\sin x}", "\\sin(x)"),
    ("\\boxed{\\log_2 8}", "3"),
    ("\\boxed{a \\le b}", "a\\leq b"),
    ("\\boxed{x=3}", "3"),
    ("\\boxed{\\infty}", "\\infty"),
    ("\\boxed{10\\%}", "0.1"),
    ("\\boxed{30^\\circ}", "30"),
    ("so $\\boxed{(1,2)}$", "(1, 2)"),
    ("\\boxed{[0,1)}", "[0,1)"),
    ("\\boxed{\\{1,2\\}}", "\\{1,2\\}"),
    ("\\boxed{1.5 \\times 10^3}", "1500"),
)


def _read_answer(candidates: list[FinalAnswer], limits: Limits, details: dict[str, Any]) -> Value | str | None:
    """The first candidate that parses (recording what was read in ``details``), a "too
    complex" message, or None when no candidate parses."""
    for candidate in candidates:
        details.update(extracted=_shown(candidate.text), anchor=candidate.anchor)
        if len(candidate.text) > 4 * limits.max_chars:
            return f"too complex: answer has {len(candidate.text)} characters (limit {limits.max_chars})"
        normalized = normalize(candidate.text)
        details["answer"] = normalized
        try:
            screen(normalized, limits)
        except TooComplex as exc:
            return f"too complex: {exc.reason}"
        try:
            return parse_normalized(normalized)
        except Unparseable:
            continue
    return None


# A binary operation after an operand, in text with its spaces taken out: what makes an answer an
# expression still to be worked out ("67+12", "3\\times4"), where a number or a unary minus is not.
_OPERATION = re.compile(r"[0-9A-Za-z)\]}](?:\+|\*|×|÷|-|\^|\\times|\\cdot|\\div)")


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SUM = re.compile(r"[0-9)\]}](?:\+|\*|×|-|\\times|\\cdot)")


def _restates_prompt(sample: Sample, details: dict[str, Any], gold_text: str) -> bool:
    """Whether the answer read is an operation copied out of the prompt, or the prompt's numbers
    rearranged by a sum, difference or product: the question restated.

    Math equivalence would pay it (``67 + 12`` is 79), and a policy finds that fast: a real run
    learned to answer "To calculate 67 + 12, you can" to every sum, a held-out reward of 1.0 with
    no sum computed. An answer written as the gold writes it is never refused, nor a lone number.
    """
    extracted = details.get("extracted")
    if not isinstance(extracted, str):
        return False
    answer = _compact(extracted)
    if not _OPERATION.search(answer) or answer == _compact(gold_text):
        return False
    asked = [m for m in sample.conversation() if m.role in ("system", "developer", "user")]
    prompt = "\n".join(m.content for m in asked)
    if answer in _compact(prompt):
        return True
    # the same numbers, reordered or bracketed ("12 + 67", "(67+12)"): a sum, difference or product
    # of the prompt's own numbers is the question rearranged, not worked out (a quotient or a
    # power is how a fraction or a scientific notation is written, so those are left alone)
    numbers = _NUMBER.findall(answer)
    return len(numbers) >= 2 and bool(_SUM.search(answer)) and set(numbers) <= set(_NUMBER.findall(prompt))


def _compact(text: str) -> str:
    return re.sub(r"[\s$]+", "", text).rstrip(".,;:")


def _shown(text: str) -> str:
    return text if len(text) <= 500 else text[:500] + "..."


MathConfig = MathVerifier.Config


def _gold_text(reference: Any, repair: bool = True) -> str:
    if reference is None or isinstance(reference, bool):
        raise VerifierError("math needs the gold answer as the sample's reference")
    if isinstance(reference, int | float):
        return repr(reference) if isinstance(reference, float) else str(reference)
    if isinstance(reference, list | tuple):
        return ", ".join(_gold_text(item, repair) for item in reference)
    if isinstance(reference, dict):
        for key in ("answer", "gold", "solution"):
            if key in reference:
                return _gold_text(reference[key], repair)
        raise VerifierError(f"math reference object needs an 'answer' field, got {json.dumps(reference)[:200]}")
    text = repair_escapes(str(reference)) if repair else str(reference)  # a gold that went through an escape
    if not text.strip():
        raise VerifierError("math reference (gold answer) is empty")
    return text


@lru_cache(maxsize=CACHE_SIZE)
def _read_gold(gold_text: str, limits: Limits) -> tuple[Value, str] | str:
    """The parsed gold and its normalized text, or a message saying why it cannot be judged
    (cached: a GRPO group sends one gold G times). A gold boxed in parts is the parts, in order
    (``gold``); a sentence in the box is the answer it states."""
    texts = answer_parts(gold_text, allow_unclosed=True) or [extract_gold(gold_text).text]
    values: list[Value] = []
    shown: list[str] = []
    for text in texts:
        normalized = answer_in_sentence(normalize(text))
        try:
            screen(normalized, limits)
        except TooComplex as exc:
            return f"too complex gold answer: {exc.reason}"
        try:
            values.append(parse_normalized(normalized))
        except Unparseable as exc:
            return f"gold answer is unparseable: {exc}"
        shown.append(normalized)
    if len(values) == 1:
        return values[0], shown[0]
    return Items(tuple(values), "parts"), PART_SEPARATOR.join(shown)


PART_SEPARATOR = "; "
"""How the parts of a multi-part answer are shown in ``details`` (``3; 5``)."""


def _read_parts(
    response: str, count: int, limits: Limits, details: dict[str, Any], strip_think: bool
) -> Value | str | None:
    """The response's last ``count`` boxed parts, in order, when the gold has ``count`` parts and the
    response boxes at least that many answers (``(a) \\boxed{3} ... (b) \\boxed{5}``); None when it
    boxes fewer (its last box is then the answer, which a multi-part gold never equals unless it
    lists every part) or a part does not parse; a "too complex" message."""
    parts = answer_parts(response, count, strip_think=strip_think)
    if len(parts) != count:
        return None
    values: list[Value] = []
    shown: list[str] = []
    for part in parts:
        normalized = normalize(part)
        try:
            screen(normalized, limits)
        except TooComplex as exc:
            return f"too complex: {exc.reason}"
        try:
            values.append(parse_normalized(normalized))
        except Unparseable:
            return None
        shown.append(normalized)
    details.update(extracted=_shown(PART_SEPARATOR.join(parts)), answer=PART_SEPARATOR.join(shown))
    return Items(tuple(values), "parts")


@lru_cache(maxsize=CACHE_SIZE)
def _equivalent(gold: Value, answer: Value, policy: Policy) -> str | None:
    return equivalent(gold, answer, policy)


def _policy(config: MathVerifier.Config) -> Policy:
    if config.strict:
        return Policy(
            percent="fraction",
            decimal_places=config.decimal_places,
            gold_precision=False,
            relative_tolerance=0.0,
            order="ordered",
            rename_variables="never",
            relations_as_sets=False,
            rounded_digits=0,
        )
    return Policy(
        percent=config.percent,
        decimal_places=config.decimal_places,
        gold_precision=config.gold_precision,
        relative_tolerance=config.relative_tolerance,
        order=config.order,
        rename_variables=config.rename_variables,
        relations_as_sets=config.relations_as_sets,
        rounded_digits=config.rounded_digits,
    )
