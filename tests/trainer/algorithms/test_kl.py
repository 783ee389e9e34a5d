"""KL estimators against numbers worked out by hand (log pi = log 0.5, log pi_ref = log 0.25)."""

import math

import pytest
import torch

from rewardhub.trainer.algorithms import kl_k1, kl_k2, kl_k3, kl_penalty


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=atol, rtol=1e-5)


LOGP = torch.tensor([[math.log(0.5)]])
REF = torch.tensor([[math.log(0.25)]])


def test_k1_is_the_log_ratio():
    close(kl_k1(LOGP, REF), [[math.log(2.0)]])


def test_k2_is_half_the_squared_log_ratio():
    close(kl_k2(LOGP, REF), [[0.5 * math.log(2.0) ** 2]])


def test_k3_is_r_minus_one_minus_log_r_with_r_ref_over_policy():
    # r = 0.25 / 0.5 = 0.5: (0.5 - 1) - log 0.5 = -0.5 + 0.6931...
    close(kl_k3(LOGP, REF), [[-0.5 + math.log(2.0)]])


def test_k3_is_zero_at_equality_and_never_negative():
    logp = torch.randn(4, 5)
    assert kl_k3(logp, logp).abs().max() < 1e-7
    assert (kl_k3(logp, torch.randn(4, 5)) >= 0).all()


def test_penalty_dispatches_by_name_and_rejects_unknown_names():
    close(kl_penalty(LOGP, REF, "k2"), kl_k2(LOGP, REF))
    with pytest.raises(ValueError, match="k4"):
        kl_penalty(LOGP, REF, "k4")
