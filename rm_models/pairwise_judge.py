"""``pairwise_judge``: rewards for tasks without a rule, from a judge comparing a group's responses.

GenRM-style comparison within a prompt's group: the samples that share a ``group`` (and so a
prompt) are compared in pairs by a judge model on any backend (transformers, vLLM, an
OpenAI-compatible endpoint), and the comparisons become one reward each. The pairs are NeMo-Gym's
``genrm_compare`` pairs (tested against nemo-gym 0.7.0's ``generate_comparison_pairs``); its GenRM
output (JSON ``score_1``, ``score_2``, ``ranking``, read leniently, defaults on a parse failure)
and its score averaging are not reproduced: the verdict here is A, B or tie, read strictly.

- Pairs (``strategy``): ``circular`` compares each response with the next, (0,1), (1,2), …,
  (n-1,0): n pairs; ``all_pairs`` compares every pair: n(n-1)/2.
- Orders (``both_orders``, on by default): each pair is asked twice, each response shown first
  once, so a judge that favours a position favours both equally and its bias cancels.
- One verdict is A, B or (``ties``) tie, read strictly: the last line exactly (``last_line``),
  the whole output (``choices``), or the first token's probabilities (``logprobs``: A's share
  is P(A) + ½ P(tie)). In each comparison the response shown as A gets share 1, ½ or 0.
- Rewards (``aggregation``): ``win_rate`` is a response's mean share over its comparisons (a tie
  counts half); ``bradley_terry`` fits strengths π by Hunter's MM iteration (2004) with every
  response also tied ``bt_prior`` times with an anchor of strength 1 (so a response that never
  loses still has a finite strength), and rewards each response's expected win rate against the
  rest of its group, mean_j π_i / (π_i + π_j), which carries A > B > C into A > C when A and C
  were never compared (circular).

A verdict that cannot be read (or a judge call that fails) is never a win: both responses of that
comparison get the ``error`` status naming it, and the others are scored from the comparisons
that were read. The judge's defences are the ``judge`` verifier's (:mod:`rewardhub.models.hardening`):
an empty, punctuation-only or reasoning-opener response loses to any other without a judge call
(two of them tie), and untrusted text cannot close the prompt's tags. A group of one, or a group
whose samples carry different prompts, is an error. It runs where group verifiers run (the CPU
pool): for a judge on a GPU, serve it with vLLM and name that server (``backend: openai``);
``transformers`` and ``vllm`` load the judge in each worker that scores a group (one engine per
worker, each taking its ``gpu_memory_utilization``). It does not defend against a judge that is
simply wrong, nor against responses that argue in plain words for themselves.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample, VerifierKind
from rewardhub.verifier import Verifier, VerifierConfig

from .backends import ChatReply, ChatRequest, using_backend
from .base import with_model, with_weights
from .config import JudgeConfig, backend_spec
from .hardening import fill_template, is_master_key
from .judge_prompts import PAIRWISE_FORMAT, PAIRWISE_TAGS, PAIRWISE_TEMPLATE
from .judging import ask
from .verdicts import choice_probabilities, choice_verdict, last_line_choice

__all__ = ["PairwiseJudge", "bradley_terry", "comparison_pairs", "expected_win_rates", "win_rates"]

Pair = tuple[int, int]
Shares = dict[Pair, list[float]]
"""For each compared pair (i, j), i < j in the order asked, i's share in each comparison (1, ½, 0, or between)."""

_SHARE = {"A": 1.0, "B": 0.0, "tie": 0.5}


# --- the math -------------------------------------------------------------------------------------


def comparison_pairs(n: int, strategy: str) -> list[Pair]:
    """The pairs to compare among ``n`` responses (see the module docstring)."""
    if n < 2:
        return []
    if strategy == "all_pairs" or n == 2:
        return [(i, j) for i in range(n) for j in range(i + 1, n)]
    return [(i, (i + 1) % n) for i in range(n)]


def win_rates(n: int, shares: Shares) -> list[float | None]:
    """Each response's mean share over its comparisons; None for one never compared."""
    total, count = [0.0] * n, [0] * n
    for (i, j), values in shares.items():
        for share in values:
            total[i] += share
            total[j] += 1.0 - share
            count[i] += 1
            count[j] += 1
    return [total[k] / count[k] if count[k] else None for k in range(n)]


def bradley_terry(n: int, shares: Shares, prior: float = 0.5, iterations: int = 2000) -> list[float]:
    """Bradley–Terry strengths π by Hunter's MM update, fractional wins allowed:

        π_i ← (W_i + c) / (Σ_j n_ij / (π_i + π_j) + 2c / (π_i + 1))

    W_i: i's summed shares, n_ij: comparisons of i and j, c = ``prior``: c wins and c losses
    against an anchor of strength 1 (with c = 0 the scale is free and fixed by a geometric mean of 1).
    """
    wins = [prior] * n
    games: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for (i, j), values in shares.items():
        for share in values:
            wins[i] += share
            wins[j] += 1.0 - share
            games[i][j] += 1.0
            games[j][i] += 1.0
    strength = [1.0] * n
    for _ in range(iterations):
        new = []
        for i in range(n):
            rate = sum(g / (strength[i] + strength[j]) for j, g in games[i].items() if strength[i] + strength[j] > 0)
            rate += 2 * prior / (strength[i] + 1.0)
            new.append(wins[i] / rate if rate > 0 else strength[i])
        if prior == 0:
            positive = [s for s in new if s > 0]
            scale = math.exp(sum(map(math.log, positive)) / len(positive)) if positive else 1.0
            new = [s / scale for s in new]
        done = all(abs(a - b) <= 1e-12 * max(1.0, b) for a, b in zip(new, strength, strict=True))
        strength = new
        if done:
            break
    return strength


def expected_win_rates(strength: Sequence[float]) -> list[float]:
    """mean_j π_i / (π_i + π_j) over the other responses: each one's expected win rate in its group."""
    n = len(strength)
    rates = []
    for i, own in enumerate(strength):
        pairs = [own / (own + other) if own + other > 0 else 0.5 for j, other in enumerate(strength) if j != i]
        rates.append(sum(pairs) / (n - 1))
    return rates


# --- the verifier ---------------------------------------------------------------------------------


class PairwiseJudge(Verifier):
    """Group verifier: a judge compares the group's responses pairwise; rewards from win rates or Bradley–Terry."""

    name: ClassVar[str] = "pairwise_judge"
    version: ClassVar[str] = "1"
    kind: ClassVar[VerifierKind] = "group"

    class Config(JudgeConfig):
        timeout_s: float | None = Field(
            600.0,
            gt=0,
            description="Wall-clock limit for a whole group's comparisons (capped by the server's maximum).",
        )
        strategy: Literal["circular", "all_pairs"] = Field(
            "circular", description="`circular`: each response against the next (n pairs); `all_pairs`: n(n-1)/2."
        )
        both_orders: bool = Field(True, description="Ask each pair in both orders, so position bias cancels.")
        ties: bool = Field(True, description="Allow the verdict `tie` (half a win each).")
        aggregation: Literal["win_rate", "bradley_terry"] = Field(
            "win_rate", description="Reward: mean share of wins, or the expected win rate under a Bradley–Terry fit."
        )
        bt_prior: float = Field(
            0.5, ge=0, description="`bradley_terry`: wins and losses each response has against an anchor of strength 1."
        )
        principle: str | None = Field(None, description="What matters most in the comparison, told to the judge.")

    @classmethod
    def verdict_key(cls, config: VerifierConfig) -> dict[str, str]:
        return with_weights(super().verdict_key(config), config)

    def score_group(self, samples: list[Sample], config: Config) -> list[Result]:
        n = len(samples)
        if n < 2:
            raise VerifierError(
                f"pairwise_judge compares the responses of one group and this group has {n}: give samples one `group`"
            )
        question = samples[0].prompt_text()
        if any(s.prompt_text() != question for s in samples):
            raise VerifierError(
                "the samples of one group must share one prompt (pairwise_judge compares answers to it)"
            )
        empty = [is_master_key(s.response) for s in samples]
        shares: Shares = defaultdict(list)
        asks: list[tuple[Pair, Pair]] = []  # (the pair, the order shown: (A, B))
        for i, j in comparison_pairs(n, config.strategy):
            orders = [(i, j), (j, i)] if config.both_orders else [(i, j)]
            if empty[i] or empty[j]:  # no judge call: an empty answer loses, two of them tie
                shares[(i, j)] += [0.5 if empty[i] and empty[j] else float(empty[j])] * len(orders)
            else:
                asks += [((i, j), order) for order in orders]
        requests = [_request(question, samples[a].response, samples[b].response, config) for _, (a, b) in asks]
        with using_backend(backend_spec(config)) as backend:
            replies = backend.chat(requests) if requests else []
            failed: dict[int, str] = {}
            for (pair, (a, b)), reply in zip(asks, replies, strict=True):
                try:
                    shown_first = _read(reply, config)
                except VerifierError as exc:
                    message = f"the judge's verdict on responses {a} (shown as A) and {b} is unreadable: {exc.message}"
                    failed.setdefault(a, message)
                    failed.setdefault(b, message)
                    continue
                shares[pair].append(shown_first if a == pair[0] else 1.0 - shown_first)
            return with_model(_results(samples, dict(shares), failed, empty, config), backend, config)


def _request(question: str, first: str, second: str, config: PairwiseJudge.Config) -> ChatRequest:
    style = "last_line" if config.verdict == "last_line" else "direct"
    values = {
        "QUESTION": question,
        "RESPONSE_A": first,
        "RESPONSE_B": second,
        "PRINCIPLE": f" Above all: {config.principle}" if config.principle else "",
        "FORMAT": PAIRWISE_FORMAT[(style, config.ties)],
    }
    return ask(fill_template(PAIRWISE_TEMPLATE, values, PAIRWISE_TAGS), config, _choices(config))


def _choices(config: PairwiseJudge.Config) -> tuple[str, ...]:
    return ("A", "B", "tie") if config.ties else ("A", "B")


def _read(reply: ChatReply | Exception, config: PairwiseJudge.Config) -> float:
    """The share of the response shown as A; a VerifierError when the verdict cannot be read."""
    if isinstance(reply, Exception):
        raise reply if isinstance(reply, VerifierError) else VerifierError(str(reply))
    choices = _choices(config)
    if config.verdict == "logprobs":
        if not reply.logprobs:
            raise VerifierError("the judge returned no log-probabilities; its endpoint must support logprobs")
        probs = choice_probabilities(reply.logprobs[0], choices)
        return probs["A"] + 0.5 * probs.get("tie", 0.0)
    read = choice_verdict if config.verdict == "choices" else last_line_choice
    return _SHARE[read(reply.text, choices)]


def _results(
    samples: list[Sample], shares: Shares, failed: dict[int, str], empty: list[bool], config: PairwiseJudge.Config
) -> list[Result]:
    n = len(samples)
    rates = win_rates(n, shares)
    common: dict[str, Any] = {"strategy": config.strategy, "aggregation": config.aggregation, "group_size": n}
    if config.aggregation == "bradley_terry":
        strength = bradley_terry(n, shares, config.bt_prior)
        rewards: list[float | None] = list(expected_win_rates(strength))
        logs = [math.log(s) if s > 0 else None for s in strength]
    else:
        rewards, logs = list(rates), [None] * n
    counts = [sum(len(v) for (i, j), v in shares.items() if k in (i, j)) for k in range(n)]
    results = []
    for k in range(n):
        details = {**common, "win_rate": rates[k], "comparisons": counts[k]}
        if logs[k] is not None:
            details["bt_log_strength"] = logs[k]
        if empty[k]:
            details["short_circuit"] = "master_key"
        if k in failed:
            results.append(Result.failed(failed[k], score=config.failure_score, **details))
        elif rewards[k] is None:
            results.append(Result.failed("no comparison of this response could be read", score=config.failure_score))
        else:
            results.append(Result.ok(rewards[k], **details))
    return results
