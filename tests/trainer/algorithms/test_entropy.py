"""Entropy from logits and the entropy bonus."""

import math

import torch

from rewardhub.trainer.algorithms import entropy_bonus, entropy_from_logits


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=atol, rtol=1e-5)


def test_uniform_over_four_tokens_has_entropy_log_4():
    close(entropy_from_logits(torch.zeros(1, 1, 4)), [[math.log(4)]])


def test_two_token_distribution():
    # p = (0.75, 0.25): H = -(0.75 ln 0.75 + 0.25 ln 0.25)
    logits = torch.tensor([[[math.log(3.0), 0.0]]])
    close(entropy_from_logits(logits), [[-(0.75 * math.log(0.75) + 0.25 * math.log(0.25))]])


def test_bonus_is_minus_coefficient_times_entropy_and_raises_entropy_when_minimised():
    logits = torch.tensor([[[2.0, 0.0, 0.0]]], requires_grad=True)
    loss = entropy_bonus(entropy_from_logits(logits), coef=0.1)
    close(loss, -0.1 * entropy_from_logits(logits.detach()))
    loss.sum().backward()
    assert logits.grad[0, 0, 0] > 0  # gradient descent lowers the dominant logit: flatter distribution
