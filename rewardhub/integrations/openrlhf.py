"""OpenRLHF, the trainer side: ``reward_func`` for ``--remote_rm_url path/to/openrlhf_reward_func.py``.

OpenRLHF asks for rewards in two ways:

- ``--remote_rm_url http://host:8000/get_reward``: it POSTs its batch to the service itself; that
  route is the server side of the protocol, :mod:`rewardhub.api.compat.openrlhf`;
- ``--remote_rm_url rewardhub/integrations/openrlhf_reward_func.py``: it imports that file and
  calls ``reward_func(queries, prompts, labels)``, which sends the same body to the same route
  (with the verifier of ``REWARDHUB_VERIFIER``, when set) and hands the answer back as tensors.

Either way one function splits the query and shapes the answer: the route's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewardhub.integrations.common import as_reference, service_spec, shared_client, verifier_spec

__all__ = ["reward_func"]


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's ``reward_func(queries, prompts, labels)``, answered by the service.

    The service is found at ``REWARDHUB_URL`` (``REWARDHUB_API_KEY`` for its key). With
    ``REWARDHUB_VERIFIER`` set (a verifier name, or a JSON VerifierSpec) the samples are scored by
    that spec; without it the server's ``get_reward_verifier`` decides. Both go to ``/get_reward``. Returns tensors, as OpenRLHF's examples do: ``rewards``,
    ``scores`` (clipped to 0-1) and numeric ``extra_logs``. A service that cannot be reached or
    refuses the request raises: OpenRLHF then logs the failure instead of training on a made-up 0.
    OpenRLHF calls it from many threads at once; they share one client (per service and process).
    """
    import torch

    client = shared_client(service_spec())
    spec = verifier_spec()
    labels = [as_reference(label) for label in labels] if labels is not None else [None] * len(queries)
    body: dict[str, Any] = {"query": list(queries), "prompts": list(prompts), "labels": labels}
    if spec is not None:
        body["verifier"] = spec if isinstance(spec, str | dict) else spec.model_dump(mode="json")
    answer = client.request("POST", "/get_reward", body)
    return {
        "rewards": torch.tensor(answer["rewards"], dtype=torch.float32),
        "scores": torch.tensor(answer["scores"], dtype=torch.float32),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in answer["extra_logs"].items()},
    }
