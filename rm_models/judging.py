"""Asking a judge model a question and reading its answer, the same way for judge and rubric.

A yes/no question becomes a :class:`ChatRequest` shaped by the verdict mode (free text with a
last line, constrained to the two words, or one token with its log-probabilities) and its reply
becomes a number in [0, 1]; a graded question likewise becomes a grade in the configured scale.
A base model has no chat template to ask through: with ``chat_template: false`` the same prompt is
sent as plain text ending in ``Answer:`` (:data:`~rewardhub.models.judge_prompts.PLAIN_CUE`).
"""

from __future__ import annotations

from .backends.base import ChatReply, ChatRequest, TokenAlternatives
from .config import JudgeConfig
from .errors import VerdictError
from .hardening import fill_template
from .judge_prompts import BINARY_FORMAT, GRADE_FORMAT, PLAIN_CUE, TAGS
from .verdicts import (
    choice_verdict,
    expected_grade,
    last_line_grade,
    last_line_verdict,
    verdict_probability,
)

__all__ = ["ask", "binary_request", "grade_request", "read_binary", "read_grade", "render"]

VERDICT_WORDS = ("True", "False")


def render(template: str, values: dict[str, str], config: JudgeConfig, formats: dict[str, str]) -> str:
    style = "last_line" if config.verdict == "last_line" else "direct"
    return fill_template(template, {**values, "FORMAT": formats[style]}, TAGS)


def ask(prompt: str, config: JudgeConfig, choices: tuple[str, ...]) -> ChatRequest:
    """The request that asks ``prompt``: chat messages through the model's template, or with
    ``chat_template: false`` one plain prompt ending in :data:`PLAIN_CUE` (its docstring says
    where the space after the colon goes); decoding as the verdict mode reads it."""
    if config.chat_template:
        messages = ((("system", config.system_prompt),) if config.system_prompt else ()) + (("user", prompt),)
        plain = None
    else:
        messages, plain = (), "\n\n".join(filter(None, (config.system_prompt, prompt, PLAIN_CUE)))
        if all(choice.isdigit() for choice in choices):
            plain += " "  # digit-splitting tokenizers write "Answer: 7" as ":", " ", "7": the grade comes next
        else:
            choices = tuple(f" {choice}" for choice in choices)  # ":", " True": the word carries its space
    if config.verdict == "logprobs":
        return ChatRequest(messages, max_tokens=1, temperature=0.0, top_logprobs=config.top_logprobs, prompt=plain)
    if config.verdict == "choices":
        return ChatRequest(messages, max_tokens=8, temperature=0.0, choices=choices, prompt=plain)
    return ChatRequest(messages, max_tokens=config.max_tokens, temperature=config.temperature, prompt=plain)


def binary_request(template: str, values: dict[str, str], config: JudgeConfig) -> ChatRequest:
    return ask(render(template, values, config, BINARY_FORMAT), config, VERDICT_WORDS)


def grade_request(template: str, values: dict[str, str], config: JudgeConfig, low: int, high: int) -> ChatRequest:
    values = {**values, "LOW": str(low), "HIGH": str(high)}
    choices = tuple(str(k) for k in range(low, high + 1))
    return ask(render(template, values, config, GRADE_FORMAT), config, choices)


def _first_token(reply: ChatReply) -> TokenAlternatives:
    if not reply.logprobs:
        raise VerdictError("the judge returned no log-probabilities; its endpoint must support logprobs")
    return reply.logprobs[0]


def read_binary(reply: ChatReply, config: JudgeConfig) -> float:
    """1.0 / 0.0 for a true / false verdict; in ``logprobs`` mode, P(True)."""
    if config.verdict == "logprobs":
        return verdict_probability(_first_token(reply), *VERDICT_WORDS)
    if config.verdict == "choices":
        return 1.0 if choice_verdict(reply.text, VERDICT_WORDS) == "True" else 0.0
    return 1.0 if last_line_verdict(reply.text, *VERDICT_WORDS) else 0.0


def read_grade(reply: ChatReply, config: JudgeConfig, low: int, high: int) -> float:
    """The grade in [low, high]; in ``logprobs`` mode its expectation over the first token."""
    if config.verdict == "logprobs":
        return expected_grade(_first_token(reply), low, high)
    if config.verdict == "choices":
        return float(choice_verdict(reply.text, [str(k) for k in range(low, high + 1)]))
    return last_line_grade(reply.text, low, high)
