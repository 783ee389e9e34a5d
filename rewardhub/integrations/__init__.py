"""Adapters that make the service a drop-in reward backend for the trainers people already use.

Each module speaks one trainer's reward interface and finds the service at ``REWARDHUB_URL``
(``REWARDHUB_API_KEY`` for its key) unless given a URL:

- :mod:`~rewardhub.integrations.trl`: ``reward_func(verifier=..., url=...)`` for TRL's trainers;
- :mod:`~rewardhub.integrations.verl`: ``compute_score`` (sync, async, batched) routed by ``data_source``;
- :mod:`~rewardhub.integrations.openrlhf`: ``/get_reward``'s answer and the ``reward_func`` file;
- :mod:`~rewardhub.integrations.slime`: a custom reward function for ``--custom-rm-path``;
- :mod:`~rewardhub.integrations.graders`: OpenAI-style graders mapped onto verifiers;
- :mod:`~rewardhub.integrations.logs`: what a result adds to a trainer's logs, for all of them.
"""

from rewardhub.integrations import logs, openrlhf, slime, trl, verl

__all__ = ["logs", "openrlhf", "slime", "trl", "verl"]
