"""What the trainer computes, minus the wall clock: for checking that a refactor changed nothing.

Runs short seeded trainings (3 steps of a tiny model, one torch thread) that together switch on
every estimator, policy loss, aggregation, KL placement, mismatch correction, dynamic sampling,
chunked scoring, overlong shaping and failing samples, with in-process scorers (no service, so
nothing depends on timing). Writes each run's metrics (without ``time/*``, ``perf/*`` and
``reward/latency_s``), evaluations and debug dumps to OUT. Run it on two commits and compare:

    python scripts/trainer_fingerprint.py /tmp/fp/before   # on the old commit
    python scripts/trainer_fingerprint.py /tmp/fp/after    # on the new one
    diff -r /tmp/fp/before /tmp/fp/after                   # silent when nothing changed
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "trainer"))

from trainer_helpers import ExactScorer, scorer_factory, write_addition  # noqa: E402

from rewardhub.trainer.config import TrainConfig  # noqa: E402
from rewardhub.trainer.loop import Trainer  # noqa: E402
from rewardhub.types import Result  # noqa: E402

WALL_CLOCK = ("time/", "perf/", "reward/latency_s")


class Mixed:
    """Even-digit prompts get mixed rewards within their group, odd ones all 0."""

    async def score(self, samples: list[Any], verifier: Any = None) -> list[Result]:
        return [Result.ok(float(int(s.prompt[0]) % 2 == 0 and int(s.id.rsplit("-", 1)[1]) % 2 == 0)) for s in samples]


class Dense:
    """Outcome plus one dense reward per response character (an implicit PRM's shape)."""

    async def score(self, samples: list[Any], verifier: Any = None) -> list[Result]:
        return [Result.ok(float(s.response == s.reference), steps=[0.1] * (len(s.response) + 1)) for s in samples]


CASES: dict[str, tuple[dict[str, Any], Any]] = {
    "default": ({}, ExactScorer),
    "failing_samples": ({}, lambda: ExactScorer(fail=lambda s: s.id.endswith("-0"))),
    "dynamic_sampling": ({"algorithm": {"dynamic_sampling": {"enabled": True, "max_rounds": 4}}}, Mixed),
    "overlong": (
        {"rollout": {"max_new_tokens": 2}, "reward": {"overlong": {"buffer": 1}, "mask_truncated": True}},
        ExactScorer,
    ),
    "dr_grpo": ({"algorithm": {"advantage": "dr_grpo", "aggregation": "constant"}}, Mixed),
    "rloo": ({"algorithm": {"advantage": "rloo", "aggregation": "seq_mean_token_mean"}}, Mixed),
    "reinforce_pp": (
        {"algorithm": {"advantage": "reinforce_pp", "kl": {"coef": 0.01, "where": "reward", "estimator": "k1"}}},
        Mixed,
    ),
    "reinforce_pp_baseline": (
        {"algorithm": {"advantage": "reinforce_pp_baseline", "aggregation": "seq_mean_token_sum"}},
        Mixed,
    ),
    "gspo": ({"algorithm": {"policy_loss": "gspo", "aggregation": "seq_mean_token_mean"}}, Mixed),
    "cispo": ({"algorithm": {"policy_loss": "cispo", "kl": {"coef": 0.05, "estimator": "k2"}}}, Mixed),
    "ppo_epochs": (
        {"algorithm": {"epochs": 2, "mini_batches": 2, "dual_clip": 3.0}, "optim": {"micro_batch_size": 4}},
        Mixed,
    ),
    "mismatch": (
        {
            "algorithm": {
                "old_logprobs": "rollout",
                "mismatch": {"tis_cap": 2.0, "token_mask": [0.5, 2.0], "sequence_filter": [0.9, 1.1]},
            }
        },
        Mixed,
    ),
    "prime": ({"algorithm": {"advantage": "prime", "kl": {"coef": 0.02, "where": "reward"}}}, Dense),
    "chunked": ({"rollout": {"chunk_prompts": 2}, "algorithm": {"dynamic_sampling": {"enabled": True}}}, Mixed),
}


def config(runs: Path, data: tuple[str, str], name: str, sections: dict[str, Any]) -> TrainConfig:
    raw: dict[str, Any] = {
        "output_dir": str(runs / name),
        "steps": 3,
        "seed": 0,
        "threads": 1,
        "model": {"toy": {"hidden_size": 32, "intermediate_size": 64, "num_layers": 1, "num_heads": 2}},
        "data": {"train": data[0], "eval": data[1]},
        "rollout": {"prompts_per_step": 4, "group_size": 4, "max_new_tokens": 4},
        "optim": {"lr": 1e-2},
        "eval": {"samples_per_prompt": 2, "every": 2},
        "logging": {"progress": False},
        "debug": {"dump": True},
    }
    for key, value in sections.items():
        raw[key] = {**raw[key], **value} if isinstance(value, dict) and isinstance(raw.get(key), dict) else value
    return TrainConfig.model_validate(raw)


def without_wall_clock(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    kept = [{k: v for k, v in row.items() if not k.startswith(WALL_CLOCK)} for row in rows]
    return "".join(json.dumps(row, sort_keys=True) + "\n" for row in kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the fingerprint files")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp)
        data = (
            write_addition(runs / "train.jsonl", [(a, b) for a in range(4) for b in range(4)]),
            write_addition(runs / "eval.jsonl", [(5, 4), (6, 2)]),
        )
        for name, (sections, scorer) in CASES.items():
            Trainer(config(runs, data, name, sections), scorer=scorer_factory(scorer())).run()
            run = runs / name
            for kind in ("metrics", "eval"):
                (args.out / f"{name}.{kind}.jsonl").write_text(without_wall_clock(run / f"{kind}.jsonl"))
            for dump in sorted((run / "debug").glob("step_*.jsonl")):
                (args.out / f"{name}.{dump.name}").write_text(dump.read_text())
            print(f"{name}: {len(list((run / 'debug').glob('*.jsonl')))} dumps")


if __name__ == "__main__":
    main()
