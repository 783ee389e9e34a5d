"""The file OpenRLHF loads with ``--remote_rm_url /path/to/openrlhf_reward_func.py``.

OpenRLHF imports a reward file by path and calls its ``reward_func(queries, prompts, labels)``;
this one asks the rewardhub service at ``REWARDHUB_URL`` (see
:func:`rewardhub.integrations.openrlhf.reward_func`). Print its path with
``python -m rewardhub.integrations.openrlhf_reward_func``.
"""

from rewardhub.integrations.openrlhf import reward_func

__all__ = ["reward_func"]

if __name__ == "__main__":
    print(__file__)
