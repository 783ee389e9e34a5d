"""The public names of the integrations, pinned: removing one breaks someone's training script."""

from __future__ import annotations

import rewardhub.integrations as integrations
from rewardhub.integrations import common, graders, logs, openrlhf, prime, slime, trl, verl


def test_integration_modules() -> None:
    assert integrations.__all__ == ["common", "logs", "openrlhf", "prime", "slime", "trl", "verl"]


def test_each_trainers_entry_points() -> None:
    assert {"reward_func", "async_reward_func"} <= set(trl.__all__)
    assert {"compute_score", "compute_score_async", "compute_score_batch", "route"} <= set(verl.__all__)
    assert {"reward_func", "openrlhf_answer", "split_query"} <= set(openrlhf.__all__)
    assert {"reward", "slime_answer"} <= set(slime.__all__)
    assert {"reward_func", "RewardUnavailable", "trace_messages"} <= set(prime.__all__)
    assert {"batch_logs", "sample_logs"} <= set(logs.__all__)
    assert {"service_spec", "verifier_spec", "shared_client", "shared_async_client", "content_text"} <= set(
        common.__all__
    )
    assert {"GraderRunner", "RunGraderRequest", "parse_formula"} <= set(graders.__all__)


def test_every_exported_name_exists() -> None:
    for module in (integrations, common, graders, logs, openrlhf, prime, slime, trl, verl):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"
