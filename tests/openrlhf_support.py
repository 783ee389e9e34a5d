"""OpenRLHF's two readers of a reward answer, reproduced from its documented behaviour (0.11).

OpenRLHF makes a tensor of every value it gets back: ``torch.as_tensor`` on each shard's lists and
``torch.cat`` across shards on its batched path; ``torch.tensor([value])`` per key on its current
single-sample path. The route's tests (tests/api/compat/) and the reward_func's
(tests/integrations/) read answers with the same two functions.
"""

from __future__ import annotations

from typing import Any

import httpx
import torch

COMPOSITE = {"sum": [{"verifier": "exact", "weight": 0.8}, {"verifier": "format", "weight": 0.2}]}
"""The verifier behind the ``composite_url`` service's /get_reward: exact (0.8) plus format (0.2)."""


def get_reward(url: str, queries: list[str], prompts: list[str], labels: list[Any]) -> dict[str, Any]:
    response = httpx.post(
        f"{url}/get_reward", json={"query": queries, "prompts": prompts, "labels": labels}, timeout=60
    )
    assert response.status_code == 200, response.text
    return response.json()


def read_batched(shards: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
    """OpenRLHF's batched reader: as_tensor per shard, cat across shards, for every key."""
    merged = {
        "rewards": torch.cat([torch.as_tensor(s["rewards"]) for s in shards]),
        "scores": torch.cat([torch.as_tensor(s["scores"]) for s in shards]),
    }
    for key in shards[0]["extra_logs"]:
        merged[key] = torch.cat([torch.as_tensor(s["extra_logs"][key]) for s in shards])
    return merged


def read_single(answer: dict[str, Any]) -> dict[str, torch.Tensor]:
    """OpenRLHF's single-sample reader: torch.tensor([value]) for the reward, score and each log."""
    info = {"reward": torch.tensor([answer["rewards"]]), "score": torch.tensor([answer["scores"]])}
    for key, value in answer["extra_logs"].items():
        if isinstance(value, torch.Tensor):
            value = value.flatten()[0].item()
        info[key] = torch.tensor([value])
    return info
