"""The sampling distribution that the behaviour log-probs refer to."""

import math

import torch

from rewardhub.trainer.rollout import sampling_logprobs

LOGITS = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))


def test_temperature_one_is_the_softmax():
    torch.testing.assert_close(sampling_logprobs(LOGITS, 1.0).exp(), torch.tensor([[0.5, 0.3, 0.15, 0.05]]))


def test_temperature_divides_the_logits():
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05]) ** 2
    torch.testing.assert_close(sampling_logprobs(LOGITS, 0.5).exp(), (probs / probs.sum()).unsqueeze(0))


def test_top_k_renormalises_over_the_k_best():
    out = sampling_logprobs(LOGITS, 1.0, top_k=2).exp()
    torch.testing.assert_close(out, torch.tensor([[0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0]]))


def test_top_p_keeps_the_smallest_prefix_reaching_p():
    # cumulative 0.5, 0.8, 0.95: p = 0.7 keeps the first two (the second crosses 0.7)
    out = sampling_logprobs(LOGITS, 1.0, top_p=0.7).exp()
    torch.testing.assert_close(out, torch.tensor([[0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0]]))


def test_greedy_puts_all_mass_on_the_argmax():
    out = sampling_logprobs(LOGITS, 0.0)
    assert out[0, 0] == 0.0 and math.isinf(out[0, 1])
