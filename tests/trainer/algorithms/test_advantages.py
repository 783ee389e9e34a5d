"""Advantage estimators against numbers worked out by hand."""

import math

import torch

from rewardhub.trainer.algorithms import (
    broadcast_to_tokens,
    dr_grpo_advantages,
    grpo_advantages,
    prime_advantages,
    reinforce_pp_advantages,
    reinforce_pp_baseline_advantages,
    remax_advantages,
    rloo_advantages,
    terminal_token_rewards,
)


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=atol, rtol=1e-5)


ALL = torch.ones(1, 4, dtype=torch.bool)


def test_grpo_centres_on_the_group_mean_and_divides_by_the_unbiased_std():
    # rewards 1, 0, 0, 0: mean 0.25; unbiased var = (0.5625 + 3 * 0.0625) / 3 = 0.25, std 0.5
    adv = grpo_advantages(torch.tensor([[1.0, 0.0, 0.0, 0.0]]), ALL, eps=0.0)
    close(adv, [[1.5, -0.5, -0.5, -0.5]])


def test_grpo_gives_zero_to_a_group_with_equal_rewards():
    adv = grpo_advantages(torch.tensor([[1.0, 1.0, 1.0, 1.0]]), ALL)
    assert adv.abs().max() == 0.0


def test_grpo_leaves_samples_the_service_could_not_judge_out_of_the_statistics():
    # the third sample errored (its failure score 0 is not a judgement): stats over 1, 0, 1
    valid = torch.tensor([[True, True, False, True]])
    adv = grpo_advantages(torch.tensor([[1.0, 0.0, 0.0, 1.0]]), valid, eps=0.0)
    mean, std = 2 / 3, math.sqrt(((1 / 3) ** 2 * 2 + (2 / 3) ** 2) / 2)
    close(adv, [[(1 - mean) / std, -mean / std, 0.0, (1 - mean) / std]])


def test_dr_grpo_only_centres():
    adv = dr_grpo_advantages(
        torch.tensor([[1.0, 0.0, 0.0, 0.0], [2.0, 4.0, 0.0, 2.0]]), torch.ones(2, 4, dtype=torch.bool)
    )
    close(adv, [[0.75, -0.25, -0.25, -0.25], [0.0, 2.0, -2.0, 0.0]])


def test_rloo_uses_the_mean_of_the_other_samples():
    # r = 1, 2, 3, 6: baselines (2+3+6)/3, (1+3+6)/3, (1+2+6)/3, (1+2+3)/3
    adv = rloo_advantages(torch.tensor([[1.0, 2.0, 3.0, 6.0]]), ALL)
    close(adv, [[1 - 11 / 3, 2 - 10 / 3, 0.0, 4.0]])


def test_rloo_with_a_masked_sample_and_a_lonely_valid_sample():
    valid = torch.tensor([[True, False, True, True], [True, False, False, False]])
    adv = rloo_advantages(torch.tensor([[1.0, 9.0, 2.0, 3.0], [5.0, 0.0, 0.0, 0.0]]), valid)
    close(adv, [[1 - 2.5, 0.0, 2 - 2.0, 3 - 1.5], [0.0, 0.0, 0.0, 0.0]])


def test_remax_subtracts_the_greedy_responses_reward():
    # prompt 0: greedy scored 1, samples 1, 0, 0.5 -> 0, -1, -0.5; prompt 1: greedy 0 -> the rewards themselves
    rewards = torch.tensor([[1.0, 0.0, 0.5], [1.0, 0.0, 0.25]])
    adv = remax_advantages(
        rewards, torch.ones(2, 3, dtype=torch.bool), torch.tensor([1.0, 0.0]), torch.tensor([True, True])
    )
    close(adv, [[0.0, -1.0, -0.5], [1.0, 0.0, 0.25]])


def test_remax_without_a_judged_greedy_response_gives_zero():
    # prompt 1's greedy response errored: no baseline; prompt 0's second sample errored: no judgement
    valid = torch.tensor([[True, False], [True, True]])
    adv = remax_advantages(
        torch.tensor([[0.0, 0.0], [1.0, 1.0]]), valid, torch.tensor([0.5, 0.0]), torch.tensor([True, False])
    )
    close(adv, [[-0.5, 0.0], [0.0, 0.0]])


def test_terminal_token_rewards_sit_on_the_last_response_token():
    mask = torch.tensor([[1, 1, 1], [1, 0, 0], [0, 0, 0]], dtype=torch.bool)
    out = terminal_token_rewards(torch.tensor([2.0, 3.0, 4.0]), mask)
    assert out.tolist() == [[0.0, 0.0, 2.0], [3.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def test_reinforce_pp_whitens_the_returns_over_all_valid_tokens():
    # returns: row 0 (reward 1, two tokens) -> 1, 1; row 1 (reward 0, one token) -> 0
    # mean 2/3, unbiased std over the 3 tokens = sqrt((1/9 + 1/9 + 4/9) / 2) = sqrt(1/3)
    mask = torch.tensor([[1, 1], [1, 0]], dtype=torch.bool)
    rewards = terminal_token_rewards(torch.tensor([1.0, 0.0]), mask)
    adv = reinforce_pp_advantages(rewards, mask)
    s = math.sqrt(1 / 3)
    close(adv, [[(1 / 3) / s, (1 / 3) / s], [(-2 / 3) / s, 0.0]])


def test_reinforce_pp_discounts_and_adds_per_token_penalties():
    # token rewards -0.1 (KL), then 1 - 0.2 at the end; gamma 0.5: returns 0.4 - 0.1 = 0.3 and 0.8
    mask = torch.tensor([[1, 1], [1, 1]], dtype=torch.bool)
    token_rewards = torch.tensor([[-0.1, 0.8], [0.0, 0.0]])
    adv = reinforce_pp_advantages(token_rewards, mask, gamma=0.5)
    returns = torch.tensor([0.3, 0.8, 0.0, 0.0])
    expected = (returns - returns.mean()) / returns.std()
    close(adv.flatten(), expected.tolist())


def test_reinforce_pp_baseline_subtracts_the_group_mean_before_whitening():
    # one group of 2 with rewards 3 and 1: centred to +1, -1; one token each -> whitened +-1/std
    mask = torch.ones(2, 1, dtype=torch.bool)
    adv = reinforce_pp_baseline_advantages(
        torch.tensor([[3.0, 1.0]]), torch.ones(1, 2, dtype=torch.bool), torch.zeros(2, 1), mask
    )
    close(adv.flatten(), [1 / math.sqrt(2), -1 / math.sqrt(2)])


def test_prime_combines_dense_and_outcome_leave_one_out_then_whitens():
    # group of 2, two tokens each. dense: row 0 = [1, 0] (mean 0.5), row 1 = [0, 0] (mean 0)
    # dense baselines: row 0 -> 0.0 (the other's mean), row 1 -> 0.5
    # dense returns: row 0: [1 + 0, 0] -> [1, 0];  row 1: [-0.5 - 0.5, -0.5] -> [-1, -0.5]
    # outcome 1, 0: RLOO +1, -1 on every token -> row 0 [2, 1], row 1 [-2, -1.5]
    mask = torch.ones(2, 2, dtype=torch.bool)
    dense = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    adv = prime_advantages(torch.tensor([[1.0, 0.0]]), torch.ones(1, 2, dtype=torch.bool), dense, mask)
    raw = torch.tensor([2.0, 1.0, -2.0, -1.5])
    expected = (raw - raw.mean()) / raw.std()
    close(adv.flatten(), expected.tolist())


def test_broadcast_puts_each_sequence_advantage_on_its_tokens_only():
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]], dtype=torch.bool)
    assert broadcast_to_tokens(torch.tensor([[2.0, -1.0]]), mask).tolist() == [[2.0, 2.0, 0.0], [-1.0, 0.0, 0.0]]
