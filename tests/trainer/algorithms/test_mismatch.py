"""Train-inference mismatch corrections: TIS, token masks, sequence filter, mismatch KL."""

import math

import torch

from rewardhub.trainer.algorithms import (
    geometric_mean_ratio,
    mismatch_kl,
    mismatch_sums,
    sequence_filter,
    tis_weights,
    token_mask,
)


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=atol, rtol=1e-5)


LN = math.log
# trainer vs rollout ratios per token: 0.5, 1, 3
TRAIN = torch.tensor([[LN(0.5), LN(1.0), LN(3.0)]])
ROLLOUT = torch.zeros(1, 3)


def test_tis_caps_the_importance_weight():
    close(tis_weights(TRAIN, ROLLOUT, cap=2.0), [[0.5, 1.0, 2.0]])


def test_tis_weights_are_detached():
    train = TRAIN.clone().requires_grad_(True)
    assert not tis_weights(train, ROLLOUT, cap=2.0).requires_grad


def test_token_mask_keeps_ratios_inside_the_band():
    assert token_mask(TRAIN, ROLLOUT, low=0.5, high=2.0).tolist() == [[True, True, False]]


def test_geometric_mean_ignores_padding():
    mask = torch.tensor([[True, True, False]])
    close(geometric_mean_ratio(TRAIN, ROLLOUT, mask), [math.sqrt(0.5 * 1.0)])
    close(geometric_mean_ratio(TRAIN, ROLLOUT, torch.ones(1, 3, dtype=torch.bool)), [(0.5 * 3.0) ** (1 / 3)])


def test_sequence_filter_drops_sequences_that_drifted():
    train = torch.tensor([[LN(1.001), LN(1.001)], [LN(1.2), LN(1.2)]])
    mask = torch.ones(2, 2, dtype=torch.bool)
    assert sequence_filter(train, torch.zeros(2, 2), mask, 0.99, 1.01).tolist() == [True, False]


def test_mismatch_kl_is_zero_when_the_engines_agree_and_k3_otherwise():
    mask = torch.ones(1, 3, dtype=torch.bool)
    assert mismatch_kl(ROLLOUT, ROLLOUT, mask).item() == 0.0
    # k3 per token with r = 0.5, 1, 3: (r - 1) - log r
    expected = ((-0.5 - LN(0.5)) + 0.0 + (2.0 - LN(3.0))) / 3
    close(mismatch_kl(TRAIN, ROLLOUT, mask), expected)


def test_mismatch_sums_by_hand_with_a_cap_and_padding():
    # two rows: ratios 0.5, 1, 3 (all tokens) and 4, 1, padding; the padding token's huge ratio must not count
    train = torch.tensor([[LN(0.5), LN(1.0), LN(3.0)], [LN(4.0), LN(1.0), 50.0]])
    rollout = torch.zeros(2, 3)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    got = mismatch_sums(train, rollout, mask, cap=2.0)
    close(got["log_ratio"], LN(0.5) + LN(3.0) + LN(4.0))
    close(got["abs_log_ratio"], LN(2.0) + LN(3.0) + LN(4.0))
    close(got["abs_log_ratio_max"], LN(4.0))
    close(got["k3"], (-0.5 - LN(0.5)) + (2.0 - LN(3.0)) + (3.0 - LN(4.0)))
    close(got["tis_weight"], 0.5 + 1.0 + 2.0 + 2.0 + 1.0)  # 3 and 4 capped at 2
    close(got["tis_weight_max"], 2.0)
    close(got["tis_weight_min"], 0.5)
    close(got["tis_truncated"], 2.0)


def test_mismatch_sums_without_a_cap_report_the_raw_ratio():
    mask = torch.ones(1, 3, dtype=torch.bool)
    got = mismatch_sums(TRAIN, ROLLOUT, mask, cap=None)
    close(got["tis_weight"], 0.5 + 1.0 + 3.0)
    close(got["tis_weight_max"], 3.0)
    close(got["tis_truncated"], 0.0)


def test_mismatch_sums_of_identical_policies_and_of_no_tokens():
    mask = torch.ones(1, 3, dtype=torch.bool)
    same = mismatch_sums(ROLLOUT, ROLLOUT, mask, cap=2.0)
    assert same["log_ratio"].item() == same["k3"].item() == same["abs_log_ratio_max"].item() == 0.0
    assert same["tis_weight"].item() == 3.0
    empty = mismatch_sums(TRAIN, ROLLOUT, torch.zeros(1, 3, dtype=torch.bool), cap=2.0)
    assert empty["tis_weight"].item() == 0.0 and empty["tis_weight_max"].item() == 1.0
