"""The public names of the integrations, pinned: removing one breaks someone's training script.

The server halves of OpenRLHF's and slime's protocols (``openrlhf_answer``, ``split_query``,
``slime_answer``) moved to :mod:`rewardhub.api.compat`; what a trainer imports stays here.
"""

from __future__ import annotations

import rewardhub.integrations as integrations
import rewardhub.messages as messages
import rewardhub.result_logs as result_logs
from rewardhub.integrations import common, openrlhf, prime, slime, trl, verl


def test_integration_modules() -> None:
    assert integrations.__all__ == ["common", "openrlhf", "prime", "slime", "trl", "verl"]


def test_each_trainers_entry_points() -> None:
    assert {"reward_func", "async_reward_func"} <= set(trl.__all__)
    assert {"compute_score", "compute_score_async", "compute_score_batch", "route"} <= set(verl.__all__)
    assert openrlhf.__all__ == ["reward_func"]
    assert {"reward", "slime_payload"} <= set(slime.__all__)
    assert {"reward_func", "RewardUnavailable", "trace_messages"} <= set(prime.__all__)
    assert {"batch_logs", "sample_logs"} <= set(result_logs.__all__)
    assert {"service_spec", "verifier_spec", "shared_client", "shared_async_client", "content_text"} <= set(
        common.__all__
    )
    assert {"content_text", "chat_prompt", "chat_messages", "as_reference", "json_fields"} <= set(messages.__all__)


def test_every_exported_name_exists() -> None:
    for module in (integrations, common, messages, result_logs, openrlhf, prime, slime, trl, verl):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"
