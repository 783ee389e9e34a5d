"""Adapters that make the service a drop-in reward backend for the trainers people already use.

Each module speaks one trainer's reward interface and finds the service at ``REWARDHUB_URL``
(``REWARDHUB_API_KEY`` for its key) unless given a URL:

- :mod:`~rewardhub.integrations.trl`: ``reward_func(verifier=..., url=...)`` for TRL's trainers;
- :mod:`~rewardhub.integrations.verl`: ``compute_score`` (sync, async, batched) routed by ``data_source``;
- :mod:`~rewardhub.integrations.openrlhf`: ``/get_reward``'s answer and the ``reward_func`` file;
- :mod:`~rewardhub.integrations.slime`: a custom reward function for ``--custom-rm-path``;
- :mod:`~rewardhub.integrations.prime`: ``reward_func(verifier=..., url=...)``, a reward of a
  PrimeIntellect ``verifiers`` task;
- :mod:`~rewardhub.integrations.graders`: OpenAI-style graders mapped onto verifiers;
- :mod:`~rewardhub.integrations.logs`: what a result adds to a trainer's logs, for all of them;
- :mod:`~rewardhub.integrations.common`: what every adapter shares (the environment, one client per
  process, messages as text, dataset values as JSON).

The adapters are callers: they reach the service through :mod:`rewardhub.client` only
(``tests/test_layering.py``). The graders are the exception in this package: they run inside the
service, behind ``POST /v1/graders/run``.
"""

from rewardhub.integrations import common, logs, openrlhf, prime, slime, trl, verl

__all__ = ["common", "logs", "openrlhf", "prime", "slime", "trl", "verl"]
