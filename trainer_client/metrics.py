"""Every metric the trainer logs, what it means, and where it is written.

Names are namespaced (``reward/``, ``actor/``, ``rollout/``, ``response/``, ``groups/``,
``perf/``, ``time/``, ``eval/``) and all of them are in :data:`METRICS` below, the one table
(``rewardhub-train metrics`` prints it). A name with ``{name}`` stands for a family, one per
verifier. Token averages are over the tokens that enter the loss unless the description says
otherwise. Every step appends one JSON object to ``metrics.jsonl``; TensorBoard and W&B get the
same numbers when enabled and installed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["METRICS", "MetricsWriter", "describe_metric", "format_metrics_table"]

METRICS: dict[str, str] = {
    # the reward service's judgement of this step's samples
    "reward/mean": "Mean score of the samples the service judged (status ok), before any shaping.",
    "reward/std": "Standard deviation of those scores.",
    "reward/max": "Highest score in the step.",
    "reward/min": "Lowest score in the step.",
    "reward/ok_frac": "Fraction of samples with status ok.",
    "reward/error_frac": "Fraction with status error (verifier could not judge): masked out of the loss.",
    "reward/timeout_frac": "Fraction with status timeout: masked out of the loss.",
    "reward/masked_frac": "Fraction of samples left out of the loss (not ok, or truncated with reward.mask_truncated).",
    "reward/shaped_mean": "Mean reward after the overlong penalty and KL-in-reward, as the advantages see it.",
    "reward/overlong_penalty": "Mean DAPO soft overlong penalty (0 when disabled).",
    "reward/greedy_mean": "ReMax: mean shaped reward of the prompts' greedy responses, the baseline (only with remax).",
    "reward/verifier/{name}/mean": "Mean ok score of the samples judged by verifier {name} (per-verifier breakdown).",
    "reward/verifier/{name}/count": "Number of samples judged by verifier {name}.",
    "reward/dense_frac": "PRIME: fraction of the judged samples that came with dense rewards (Result.steps).",
    "reward/dense_token_mean": "PRIME: mean dense reward per token, as the service returned it (implicit_prm: beta * log pi_phi/pi_ref).",
    "reward/dense_token_abs_mean": "PRIME: mean |dense reward| per token.",
    "reward/dense_token_min": "PRIME: smallest dense reward of any token in the step.",
    "reward/dense_token_max": "PRIME: largest dense reward of any token in the step.",
    "reward/dense_sum_mean": "PRIME: mean over samples of the sum of their dense rewards (implicit_prm: the sequence's beta * log pi_phi/pi_ref).",
    "reward/dense_sum_std": "PRIME: standard deviation over samples of that sum.",
    "reward/dense_misaligned_frac": "PRIME: fraction of samples whose dense rewards did not match their tokens one to one and were spread over the response.",
    "reward/latency_s": "Wall time from sending the first scoring request to receiving the last answer.",
    # groups of G samples of one prompt
    "groups/zero_variance_frac": "Fraction of groups whose rewards are all equal: their group-relative advantages are 0.",
    "groups/solved_frac": "Fraction of groups where every sample got the maximum score.",
    "groups/kept": "Groups trained on this step (fewer than generated when dynamic sampling drops some).",
    "groups/generated": "Groups generated this step, over all dynamic-sampling rounds.",
    "groups/rounds": "Generation rounds this step (1 without dynamic sampling).",
    # advantages
    "actor/advantage_mean": "Mean advantage over loss tokens.",
    "actor/advantage_std": "Standard deviation of the advantage over loss tokens.",
    # the update
    "actor/loss": "Total loss (summed over micro-batches, averaged over optimizer steps).",
    "actor/pg_loss": "Policy-gradient part of the loss.",
    "actor/entropy_loss": "Entropy-bonus part (-c * aggregated entropy).",
    "actor/kl_loss": "KL-to-reference part when algorithm.kl.where is loss (else 0).",
    "actor/entropy": "Mean per-token entropy of the policy (nats) on the response tokens: watch for collapse.",
    "actor/ppo_kl": "Mean of log pi_old - log pi over tokens: how far the update moved from the PPO anchor (0 on-policy).",
    "actor/clipfrac": "Fraction of tokens where the clipped objective was the active one.",
    "actor/ref_kl": "KL(pi || pi_ref), k3 estimator, per token (0 when no reference model is kept).",
    "actor/grad_norm": "Global gradient norm before clipping, averaged over optimizer steps.",
    "actor/lr": "Learning rate of the step.",
    # train-inference mismatch
    "rollout/mismatch_kl": "KL(pi_rollout || pi_train) per token, k3: how much the engine's log-probs differ from the trainer's.",
    "rollout/is_ratio_mean": "Mean of pi_train / pi_rollout over response tokens.",
    "rollout/is_ratio_max": "Largest per-token ratio.",
    "rollout/is_ratio_min": "Smallest per-token ratio.",
    "rollout/log_ratio_mean": "Mean of log pi_train - log pi_rollout over the sampled response tokens (minus the k1 KL estimate).",
    "rollout/log_ratio_abs_mean": "Mean of |log pi_train - log pi_rollout| over response tokens: the typical per-token gap.",
    "rollout/log_ratio_abs_max": "Largest |log pi_train - log pi_rollout| of any response token in the step.",
    "rollout/tis_weight_mean": "Mean truncated importance weight min(r, C) over response tokens (1 when TIS is off).",
    "rollout/tis_weight_max": "Largest truncated importance weight (at most C; 1 when TIS is off).",
    "rollout/tis_weight_min": "Smallest importance weight (1 when TIS is off).",
    "rollout/tis_truncated_frac": "Fraction of tokens whose importance weight hit the TIS cap (0 when TIS is off).",
    "rollout/token_masked_frac": "Fraction of tokens masked by the IcePop/MIS ratio bounds (0 when off).",
    "rollout/seq_filtered_frac": "Fraction of sequences dropped by the geometric-mean filter (0 when off).",
    # what was generated
    "response/length_mean": "Mean response length in tokens.",
    "response/length_max": "Longest response in tokens.",
    "response/clip_frac": "Fraction of responses cut by rollout.max_new_tokens before an end-of-sequence token.",
    # speed
    "perf/tokens_per_s": "Generated response tokens per second of step time.",
    "perf/samples_per_s": "Samples per second of step time.",
    "time/generate_s": "Seconds spent sampling responses with the rollout engine.",
    "time/reward_s": "Seconds blocked waiting for rewards (scoring that overlapped generation is not counted).",
    "time/train_s": "Seconds computing log-probs and updating the policy.",
    "time/step_s": "Seconds for the whole step.",
    "time/publish_s": "Seconds writing the policy's weights for the service (only with reward.dense naming $policy).",
    # held-out evaluation (on evaluation steps, and in eval.jsonl)
    "eval/reward_mean": "Mean ok score on the held-out prompts.",
    "eval/greedy_reward_mean": "Mean ok score on the held-out prompts with greedy decoding.",
    "eval/response_length_mean": "Mean response length on the held-out prompts.",
    "eval/verifier/{name}/mean": "Held-out mean score per verifier.",
    "eval/metric/{name}/mean": "Held-out mean ok score of eval.metrics {name}: another verdict on the sampled responses.",
    "eval/metric/{name}/greedy_mean": "The same verdict on the greedy responses.",
}


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(name).replace(re.escape("{name}"), r"[^/]+(?:/[^/]+)*?") + "$")


_PATTERNS = [(name, _pattern(name)) for name in METRICS]


def describe_metric(name: str) -> str | None:
    """The table's description of ``name`` (matching families), or None for an unknown name."""
    if name in METRICS:
        return METRICS[name]
    for key, pattern in _PATTERNS:
        if pattern.match(name):
            return METRICS[key]
    return None


def format_metrics_table() -> str:
    """The table as markdown."""
    rows = ["| metric | meaning |", "| --- | --- |"]
    rows += [f"| `{name}` | {meaning} |" for name, meaning in METRICS.items()]
    return "\n".join(rows)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN; a missing number reads as null
    return value


class MetricsWriter:
    """Appends one JSON object per step to ``metrics.jsonl``; mirrors to TensorBoard and W&B."""

    def __init__(
        self,
        run_dir: Path,
        tensorboard: bool = False,
        wandb: bool = False,
        wandb_project: str = "rewardhub",
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = run_dir / "metrics.jsonl"
        self.eval_path = run_dir / "eval.jsonl"
        self._tb = _tensorboard_writer(run_dir / "tb") if tensorboard else None
        self._wandb = _wandb_run(wandb_project, run_dir, config) if wandb else None

    def truncate_after(self, step: int) -> None:
        """Drop rows past ``step`` (a resumed run rewrites the steps after its checkpoint)."""
        for path in (self.path, self.eval_path):
            if path.exists():
                rows = [
                    line for line in path.read_text().splitlines() if line.strip() and json.loads(line)["step"] <= step
                ]
                path.write_text("".join(row + "\n" for row in rows))

    def write(self, row: Mapping[str, Any]) -> None:
        self._append(self.path, row)
        self._mirror(row)

    def write_eval(self, row: Mapping[str, Any]) -> None:
        self._append(self.eval_path, row)

    def _append(self, path: Path, row: Mapping[str, Any]) -> None:
        with path.open("a") as handle:
            handle.write(json.dumps({k: _clean(v) for k, v in row.items()}) + "\n")

    def _mirror(self, row: Mapping[str, Any]) -> None:
        step = int(row["step"])
        numbers = {
            k: float(v) for k, v in row.items() if k != "step" and isinstance(v, int | float) and math.isfinite(v)
        }
        if self._tb is not None:
            for key, value in numbers.items():
                self._tb.add_scalar(key, value, step)
        if self._wandb is not None:
            self._wandb.log(numbers, step=step)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
        if self._wandb is not None:
            self._wandb.finish()


def _tensorboard_writer(path: Path) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        import warnings

        warnings.warn("logging.tensorboard is on but tensorboard is not installed; skipping it", stacklevel=3)
        return None
    return SummaryWriter(log_dir=str(path))


def _wandb_run(project: str, run_dir: Path, config: Mapping[str, Any] | None) -> Any:
    try:
        import wandb
    except ImportError:
        import warnings

        warnings.warn("logging.wandb is on but wandb is not installed; skipping it", stacklevel=3)
        return None
    return wandb.init(project=project, dir=str(run_dir), config=dict(config or {}), name=run_dir.name)
