"""``judge``: a generative verifier (LLM-as-a-judge), in two modes.

- ``verify`` (reference-based, TinyV-style): the judge sees the question, the ground truth and
  only the response's final answer (read as ``math`` reads it:
  :func:`rewardhub.verifiers.final_answer.read_final_answer`), and says True or False. Meant as an add-on to a rule
  verifier that is consulted only when the rule says wrong: name the rule in ``rule_verifier``
  and a rule pass scores 1 without a judge call.
- ``grade`` (reference-free): the judge rates the whole response on a scale, normalised to [0, 1].
  A sample with ``messages`` is graded as a conversation: the judge reads every turn, the calls
  and the tool outputs, marked untrusted (see :mod:`rewardhub.models.transcript`). ``verify``
  still sends only the final answer (the last assistant turn's), with the user turns as question.

Verdicts are read strictly (see :mod:`rewardhub.models.verdicts`); an unreadable verdict is an error
status. Empty, punctuation-only and reasoning-opener responses score 0 without reaching the judge,
and untrusted text cannot break out of the prompt's tags (see :mod:`rewardhub.models.hardening`). It does
not check code, run tools, or defend against a judge model that is simply wrong.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample, VerifierKind
from rewardhub.verifier import Verifier, as_result

from .backends import ChatRequest, using_backend
from .base import ModelVerifier, installed_verifier, score_prepared, with_model
from .config import JudgeConfig, backend_spec
from .hardening import extract_final_answer, is_master_key
from .judge_prompts import CONVERSATION_GRADE_TEMPLATE, GRADE_TEMPLATE, VERIFY_TEMPLATE
from .judging import binary_request, grade_request, read_binary, read_grade
from .transcript import question_text, render_conversation

__all__ = ["Judge", "load_verifier"]


class Judge(ModelVerifier):
    """LLM judge: reference-based True/False verification or reference-free grading."""

    name: ClassVar[str] = "judge"
    version: ClassVar[str] = "1"
    kind: ClassVar[VerifierKind] = "judge"

    class Config(JudgeConfig):
        mode: Literal["verify", "grade"] = Field(
            "verify",
            description="`verify`: is the final answer equivalent to the reference; `grade`: rate the response.",
        )
        answer_extraction: Literal["boxed_or_marked", "last_line"] = Field(
            "boxed_or_marked",
            description="`verify`: the final answer sent is the one `math` reads (the last \\boxed{}, '#### N', "
            "<answer> tag or 'the answer is' / 'Answer:', else the last stated number; words allowed), or the last "
            "non-empty line.",
        )
        rule_verifier: str | None = Field(
            None,
            description="`verify`: a registered rule verifier consulted first; the judge is asked only if it says wrong.",
        )
        rule_config: dict[str, Any] = Field(default_factory=dict, description="Config of `rule_verifier`.")
        rule_threshold: float = Field(1.0, description="The rule's score at or above which it counts as a pass.")
        scale: tuple[int, int] = Field((1, 10), description="`grade`: lowest and highest grade.")
        normalize: bool = Field(True, description="`grade`: report (grade - low) / (high - low) instead of the grade.")
        probability_threshold: float | None = Field(
            None, ge=0, le=1, description="`logprobs` verdicts: report 1/0 at this P(True) instead of P(True) itself."
        )

        @model_validator(mode="after")
        def _check(self) -> Judge.Config:
            low, high = self.scale
            if low >= high:
                raise ValueError("scale must be (low, high) with low < high")
            if self.mode == "grade" and self.verdict == "logprobs" and not (0 <= low and high <= 9):
                raise ValueError("grading by log-probabilities needs single-digit grades: a scale within (0, 9)")
            return self

    def __init__(self) -> None:
        self._rules: dict[str, Verifier] = {}

    def score_batch(self, samples: list[Sample], config: Config) -> list[Result | float]:
        with using_backend(backend_spec(config)) as backend:
            prepare = self._prepare_verify if config.mode == "verify" else _prepare_grade

            def run(batch: list[ChatRequest]) -> list[Result]:
                return [_read(reply, config) for reply in backend.chat(batch)]

            return list(
                with_model(
                    score_prepared(samples, config.failure_score, lambda s: prepare(s, config), run), backend, config
                )
            )

    def _prepare_verify(self, sample: Sample, config: Config) -> ChatRequest | Result:
        if sample.reference is None or str(sample.reference).strip() == "":
            raise VerifierError("judge verification needs the ground-truth answer as reference")
        if config.rule_verifier:
            decided = self._consult_rule(sample, config)
            if decided is not None:
                return decided
        if is_master_key(sample.response):
            return Result.ok(0.0, short_circuit="master_key")
        answer = extract_final_answer(sample.response, config.answer_extraction)
        if answer is None:
            return Result.ok(0.0, short_circuit="no_final_answer")
        if is_master_key(answer):
            return Result.ok(0.0, short_circuit="master_key")
        values = {
            "QUESTION": question_text(sample),
            "GROUND_TRUTH_ANSWER": str(sample.reference),
            "MODEL_ANSWER": answer,
        }
        return binary_request(VERIFY_TEMPLATE, values, config)

    def _consult_rule(self, sample: Sample, config: Config) -> Result | None:
        """Score 1 when the rule passes; None (ask the judge) when it fails or cannot judge."""
        name = config.rule_verifier
        assert name is not None
        rule = self._rules.get(name) or self._rules.setdefault(name, load_verifier(name))
        try:
            rule_config = rule.Config.model_validate(config.rule_config)
        except ValueError as exc:
            raise VerifierError(f"invalid rule_config for {name!r}: {exc}") from exc
        try:
            verdict = as_result(rule.score(sample, rule_config))
        except VerifierError:
            return None  # the rule could not judge this sample; the judge can
        if verdict.status == "ok" and verdict.score >= config.rule_threshold:
            return Result.ok(1.0, decided_by="rule", rule_score=verdict.score)
        return None


def _prepare_grade(sample: Sample, config: Judge.Config) -> ChatRequest | Result:
    if is_master_key(sample.response):
        return Result.ok(0.0, short_circuit="master_key")
    low, high = config.scale
    if sample.messages is not None:  # a trajectory: the judge reads all of it, tool outputs marked untrusted
        return grade_request(
            CONVERSATION_GRADE_TEMPLATE, {"CONVERSATION": render_conversation(sample)}, config, low, high
        )
    values = {"QUESTION": sample.prompt_text(), "RESPONSE": sample.response}
    return grade_request(GRADE_TEMPLATE, values, config, low, high)


def _read(reply: Any, config: Judge.Config) -> Result:
    if isinstance(reply, Exception):
        return Result.failed(str(reply), score=config.failure_score)
    try:
        if config.mode == "verify":
            value = read_binary(reply, config)
            if config.verdict == "logprobs" and config.probability_threshold is not None:
                value = float(value >= config.probability_threshold)
            return Result.ok(value, mode="verify", decided_by="judge", judge_output=reply.text[-2000:])
        low, high = config.scale
        grade = read_grade(reply, config, low, high)
        score = (grade - low) / (high - low) if config.normalize else grade
        return Result.ok(score, mode="grade", grade=grade, judge_output=reply.text[-2000:])
    except VerifierError as exc:
        return Result.failed(exc.message, score=config.failure_score, judge_output=reply.text[-2000:])


def load_verifier(name: str) -> Verifier:
    """The rule verifier ``name`` from the installed entry points."""
    verifier = installed_verifier(name)
    if verifier.kind != "rule":
        raise VerifierError(f"rule_verifier {name!r} is a {verifier.kind!r} verifier, not a rule")
    return verifier
