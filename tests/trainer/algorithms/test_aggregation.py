"""Loss aggregation modes, and the property gradient accumulation rests on."""

import pytest
import torch

from rewardhub.trainer.algorithms import aggregate, normaliser_for


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=atol, rtol=1e-5)


# two sequences: lengths 3 and 1; per-token losses 1, 2, 3 and 4
LOSS = torch.tensor([[1.0, 2.0, 3.0], [4.0, 9.0, 9.0]])
MASK = torch.tensor([[True, True, True], [True, False, False]])


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("token_mean", (1 + 2 + 3 + 4) / 4),  # 2.5
        ("seq_mean_token_mean", ((1 + 2 + 3) / 3 + 4 / 1) / 2),  # 3.0
        ("seq_mean_token_sum", ((1 + 2 + 3) + 4) / 2),  # 5.0
        ("constant", (1 + 2 + 3 + 4) / (2 * 8)),  # Dr. GRPO with L = 8: 0.625
    ],
)
def test_each_mode_on_a_hand_computed_batch(mode, expected):
    close(aggregate(LOSS, MASK, normaliser_for(MASK, mode, constant_length=8)), expected)


@pytest.mark.parametrize("mode", ["token_mean", "seq_mean_token_mean", "seq_mean_token_sum", "constant"])
def test_micro_batch_shares_add_up_to_the_batch_loss(mode):
    torch.manual_seed(0)
    loss = torch.randn(6, 5)
    mask = torch.arange(5).expand(6, 5) < torch.tensor([5, 1, 3, 2, 4, 5]).unsqueeze(-1)
    norm = normaliser_for(mask, mode)
    whole = aggregate(loss, mask, norm)
    shares = sum(aggregate(loss[i : i + 2], mask[i : i + 2], norm) for i in range(0, 6, 2))
    close(shares, whole.item())
    # the naive way (each micro-batch averaged on its own, then averaged) is off for token_mean
    if mode == "token_mean":
        naive = (
            sum(
                aggregate(loss[i : i + 2], mask[i : i + 2], normaliser_for(mask[i : i + 2], mode))
                for i in range(0, 6, 2)
            )
            / 3
        )
        assert abs(naive.item() - whole.item()) > 1e-3
