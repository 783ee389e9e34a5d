"""Policy losses against numbers worked out by hand."""

import math

import torch

from rewardhub.trainer.algorithms import cispo_loss, gspo_loss, ppo_clip_loss


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=atol, rtol=1e-5)


LN = math.log


def test_ppo_on_policy_is_minus_the_advantage_with_gradient_minus_advantage():
    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    adv = torch.tensor([[2.0, -1.0]])
    loss, clipped = ppo_clip_loss(logp, logp.detach(), adv)
    close(loss, [[-2.0, 1.0]])
    loss.sum().backward()
    close(logp.grad, [[-2.0, 1.0]])  # d(-A r)/dlogp = -A r, with r = 1
    assert clipped.sum() == 0


def test_ppo_clip_higher_uses_separate_bounds():
    # ratios 1.5 and 0.5; eps_low 0.2, eps_high 0.28
    logp = torch.tensor([[LN(1.5), LN(0.5)]])
    old = torch.zeros(1, 2)
    # positive advantage: min(1.5 * 1, 1.28 * 1) -> loss -1.28 (clipped);
    # negative advantage at ratio 0.5: max(-(-1) * 0.5, -(-1) * 0.8) = 0.8 (clipped)
    loss, clipped = ppo_clip_loss(logp, old, torch.tensor([[1.0, -1.0]]), clip_low=0.2, clip_high=0.28)
    close(loss, [[-1.28, 0.8]])
    close(clipped, [[1.0, 1.0]])


def test_ppo_does_not_clip_inside_the_trust_region_or_on_the_safe_side():
    # ratio 1.5 with a negative advantage: unclipped loss 1.5 > clipped 1.28, keep 1.5 (not clipped)
    loss, clipped = ppo_clip_loss(torch.tensor([[LN(1.5)]]), torch.zeros(1, 1), torch.tensor([[-1.0]]))
    close(loss, [[1.5]])
    close(clipped, [[0.0]])


def test_ppo_dual_clip_bounds_negative_advantages():
    # ratio 5, A = -1: PPO loss max(5, 1.2) = 5; dual clip c = 3 caps it at 3
    loss, _ = ppo_clip_loss(torch.tensor([[LN(5.0)]]), torch.zeros(1, 1), torch.tensor([[-1.0]]), dual_clip=3.0)
    close(loss, [[3.0]])


def test_gspo_takes_the_geometric_mean_ratio_of_the_sequence():
    # token ratios 2 and 0.5 -> geometric mean 1: no clipping, loss -A on both tokens
    logp = torch.tensor([[LN(2.0), LN(0.5), 0.0]], requires_grad=True)
    mask = torch.tensor([[True, True, False]])
    loss, clipped = gspo_loss(logp, torch.zeros(1, 3), torch.tensor([[1.0, 1.0, 1.0]]), mask)
    close(loss[:, :2], [[-1.0, -1.0]])
    assert clipped[:, :2].sum() == 0
    # gradient of each token: -A * s_i = -1 (s_i = 1), the sequence ratio, not the token ratio
    (loss * mask).sum().backward()
    close(logp.grad[:, :2], [[-1.0, -1.0]])


def test_gspo_clips_a_sequence_that_moved_too_far():
    # token ratios 1.01, 1.01 -> s = 1.01 > 1 + 4e-4: clipped to 1.0004 for A > 0
    logp = torch.full((1, 2), LN(1.01))
    loss, clipped = gspo_loss(logp, torch.zeros(1, 2), torch.ones(1, 2), torch.ones(1, 2, dtype=torch.bool))
    close(loss, [[-1.0004, -1.0004]])
    close(clipped, [[1.0, 1.0]])


def test_cispo_clips_the_weight_but_keeps_every_gradient():
    # ratio 2 with eps_high 0.28: weight 1.28 (detached); loss = -1.28 * A * logp
    logp = torch.tensor([[LN(2.0)]], requires_grad=True)
    loss, clipped = cispo_loss(logp, torch.zeros(1, 1), torch.tensor([[1.0]]), clip_high=0.28)
    close(loss, [[-1.28 * LN(2.0)]])
    loss.sum().backward()
    close(logp.grad, [[-1.28]])  # PPO would give 0 gradient here
    close(clipped, [[1.0]])


def test_cispo_has_no_lower_bound_by_default():
    logp = torch.tensor([[LN(0.1)]], requires_grad=True)
    loss, clipped = cispo_loss(logp, torch.zeros(1, 1), torch.tensor([[-1.0]]))
    loss.sum().backward()
    close(logp.grad, [[0.1]])
    close(clipped, [[0.0]])
