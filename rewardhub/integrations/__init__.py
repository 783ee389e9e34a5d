"""Adapters that make the service a drop-in reward backend for the trainers people already use.

Each module speaks one trainer's reward interface and finds the service at ``REWARDHUB_URL``
(``REWARDHUB_API_KEY`` for its key) unless given a URL:

- :mod:`~rewardhub.integrations.trl`: ``reward_func(verifier=..., url=...)`` for TRL's trainers;
- :mod:`~rewardhub.integrations.verl`: ``compute_score`` (sync, async, batched) routed by ``data_source``;
- :mod:`~rewardhub.integrations.openrlhf`: the ``reward_func`` file for ``--remote_rm_url``;
- :mod:`~rewardhub.integrations.slime`: a custom reward function for ``--custom-rm-path``;
- :mod:`~rewardhub.integrations.prime`: ``reward_func(verifier=..., url=...)``, a reward of a
  PrimeIntellect ``verifiers`` task;
- :mod:`~rewardhub.integrations.common`: what every adapter shares (the environment, one client per
  process, messages as text, dataset values as JSON).

The adapters are callers: they reach the service through :mod:`rewardhub.client` only, and read
shapes with the caller's surface (:mod:`rewardhub.messages`, :mod:`rewardhub.result_logs`); they never
import the API, the execution engines or the sandbox (``tests/test_layering.py``). The server half
of each foreign protocol is in :mod:`rewardhub.api.compat`.
"""

from rewardhub.integrations import common, openrlhf, prime, slime, trl, verl

__all__ = ["common", "openrlhf", "prime", "slime", "trl", "verl"]
