"""DAPO dynamic sampling and soft overlong penalty."""

import torch

from rewardhub.trainer.algorithms import informative_groups, overlong_penalty, zero_variance_groups


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=atol, rtol=1e-5)


def test_groups_with_equal_rewards_are_zero_variance():
    rewards = torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 0.5, 0.7]])
    valid = torch.ones(4, 3, dtype=torch.bool)
    assert zero_variance_groups(rewards, valid).tolist() == [True, True, False, False]
    assert informative_groups(rewards, valid).tolist() == [False, False, True, True]


def test_masked_samples_do_not_count_as_variance():
    # the 0 belongs to a sample that errored: the judged ones are all 1
    rewards = torch.tensor([[1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    valid = torch.tensor([[True, False, True], [True, False, False]])
    assert zero_variance_groups(rewards, valid).tolist() == [True, True]


def test_overlong_penalty_ramps_over_the_buffer():
    # L_max 20, buffer 4: no penalty up to 16, then -(L - 16)/4, -1 at 20 and beyond
    lengths = torch.tensor([10, 16, 17, 18, 20, 25])
    close(overlong_penalty(lengths, max_length=20, buffer=4), [0.0, 0.0, -0.25, -0.5, -1.0, -1.0])
    close(overlong_penalty(lengths[2:3], max_length=20, buffer=4, factor=2.0), [-0.5])
