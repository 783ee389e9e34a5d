"""How the configuration picks and combines the pure functions."""

import math

import torch

from rewardhub.trainer.algorithms import normaliser_for
from rewardhub.trainer.config import AlgorithmConfig, MismatchConfig
from rewardhub.trainer.objective import MicroBatch, compute_advantages, dense_token_rewards, micro_batch_loss


def test_grpo_advantages_are_broadcast_to_the_loss_tokens():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    valid = torch.ones(1, 4, dtype=torch.bool)
    mask = torch.tensor([[1, 1], [1, 0], [1, 1], [1, 1]], dtype=torch.bool)
    adv = compute_advantages(AlgorithmConfig(std_eps=0.0), rewards, valid, mask)
    assert adv.tolist() == [[1.5, 1.5], [-0.5, 0.0], [-0.5, -0.5], [-0.5, -0.5]]


def test_kl_in_the_reward_lowers_the_sequence_reward_of_outcome_estimators():
    # Dr. GRPO (no std): sample 0 pays a KL penalty of 0.5 in total
    rewards = torch.tensor([[1.0, 1.0]])
    mask = torch.ones(2, 2, dtype=torch.bool)
    penalty = torch.tensor([[-0.25, -0.25], [0.0, 0.0]])
    adv = compute_advantages(
        AlgorithmConfig(advantage="dr_grpo"), rewards, torch.ones(1, 2, dtype=torch.bool), mask, penalty
    )
    assert adv[:, 0].tolist() == [-0.25, 0.25]


def test_reinforce_pp_puts_the_reward_on_the_last_token_then_whitens_the_returns():
    # returns [1, 1] and [0]; over those three tokens mean 2/3, unbiased std sqrt(1/3)
    rewards = torch.tensor([[1.0, 0.0]])
    mask = torch.tensor([[1, 1], [1, 0]], dtype=torch.bool)
    adv = compute_advantages(
        AlgorithmConfig(advantage="reinforce_pp"), rewards, torch.ones(1, 2, dtype=torch.bool), mask
    )
    third = math.sqrt(1 / 3)
    torch.testing.assert_close(adv, torch.tensor([[third, third], [-2 * third, 0.0]]))


def test_dense_rewards_align_per_token_or_spread_over_the_response():
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0]], dtype=torch.bool)
    out, misaligned = dense_token_rewards(([0.1, 0.2, 0.3], [1.0, 2.0], None), mask)
    assert torch.allclose(out[0], torch.tensor([0.1, 0.2, 0.3, 0.0]))
    assert out[1].tolist() == [0.0, 1.0, 0.0, 2.0]  # two steps over four tokens: at 2/4 and 4/4
    assert out[2].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert misaligned == 1


def micro(logp_train, logp_rollout, adv=1.0):
    mask = torch.ones_like(logp_train, dtype=torch.bool)
    return MicroBatch(mask, torch.full_like(logp_train, adv), logp_rollout, None, None), mask


def test_tis_weights_the_policy_gradient_by_the_capped_ratio():
    # trainer/rollout ratios 0.5 and 4; cap 2 -> weights 0.5 and 2; on-policy PPO loss is -A r = -1 per token
    train = torch.log(torch.tensor([[0.5, 0.4]])).requires_grad_(True)
    rollout = torch.log(torch.tensor([[1.0, 0.1]]))
    batch, mask = micro(train, rollout)
    cfg = AlgorithmConfig(entropy_coef=0.0, mismatch=MismatchConfig(tis_cap=2.0))
    loss, stats = micro_batch_loss(cfg, train, torch.zeros_like(train), batch, normaliser_for(mask, "token_mean"))
    assert math.isclose(loss.item(), (-0.5 - 2.0) / 2, rel_tol=1e-6)
    assert stats.sums["tis_truncated"] == 1.0
    assert math.isclose(stats.maxima["is_ratio"], 4.0, rel_tol=1e-5)


def test_icepop_masks_tokens_but_keeps_them_in_the_denominator():
    train = torch.log(torch.tensor([[0.5, 0.4]])).requires_grad_(True)
    rollout = torch.log(torch.tensor([[0.5, 0.1]]))  # ratios 1 and 4
    batch, mask = micro(train, rollout)
    cfg = AlgorithmConfig(entropy_coef=0.0, mismatch=MismatchConfig(token_mask=(0.5, 2.0)))
    loss, stats = micro_batch_loss(cfg, train, torch.zeros_like(train), batch, normaliser_for(mask, "token_mean"))
    assert math.isclose(loss.item(), -1.0 / 2, rel_tol=1e-6)
    assert stats.sums["masked_tokens"] == 1.0


def test_sequence_filter_drops_a_drifted_sequence():
    train = torch.log(torch.tensor([[0.5, 0.5], [0.5, 0.5]])).requires_grad_(True)
    rollout = torch.log(torch.tensor([[0.5, 0.5], [0.25, 0.25]]))  # second: geometric-mean ratio 2
    batch, mask = micro(train, rollout)
    cfg = AlgorithmConfig(entropy_coef=0.0, mismatch=MismatchConfig(sequence_filter=(0.9, 1.1)))
    loss, stats = micro_batch_loss(cfg, train, torch.zeros_like(train), batch, normaliser_for(mask, "token_mean"))
    assert math.isclose(loss.item(), -2.0 / 4, rel_tol=1e-6)
    assert stats.sums["filtered_sequences"] == 1.0


def test_the_ratio_can_be_anchored_on_the_engine_instead():
    # old_logprobs: rollout -> PPO ratio pi/pi_rollout = 2, clipped at 1 + 0.28 for A > 0
    train = torch.log(torch.tensor([[0.5]])).requires_grad_(True)
    rollout = torch.log(torch.tensor([[0.25]]))
    batch, mask = micro(train, rollout)
    cfg = AlgorithmConfig(entropy_coef=0.0, old_logprobs="rollout")
    loss, stats = micro_batch_loss(cfg, train, torch.zeros_like(train), batch, normaliser_for(mask, "token_mean"))
    assert math.isclose(loss.item(), -1.28, rel_tol=1e-6)
    assert stats.sums["clipfrac"] == 1.0


def test_entropy_bonus_and_kl_in_the_loss_add_up():
    train = torch.log(torch.tensor([[0.5]])).requires_grad_(True)
    ref = torch.log(torch.tensor([[0.25]]))
    mask = torch.ones(1, 1, dtype=torch.bool)
    batch = MicroBatch(mask, torch.zeros(1, 1), train.detach(), None, ref)
    cfg = AlgorithmConfig(entropy_coef=0.1, kl={"coef": 0.5, "estimator": "k1"})
    loss, stats = micro_batch_loss(cfg, train, torch.full((1, 1), 2.0), batch, normaliser_for(mask, "token_mean"))
    # pg 0 (A = 0), entropy -0.1 * 2, KL 0.5 * log(0.5 / 0.25)
    assert math.isclose(loss.item(), -0.2 + 0.5 * math.log(2), rel_tol=1e-6)
    assert math.isclose(stats.sums["kl_loss"], 0.5 * math.log(2), rel_tol=1e-6)
