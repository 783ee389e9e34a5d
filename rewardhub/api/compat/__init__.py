"""Foreign protocols, one module (or subpackage) and one router each, included by :mod:`rewardhub.api.app`.

| protocol | module | routes |
| --- | --- | --- |
| OpenRLHF's remote reward | :mod:`.openrlhf` | ``POST /get_reward`` |
| slime's remote RM | :mod:`.slime` | ``POST /v1/compat/slime``, ``POST /v1/compat/slime/batch`` |
| OpenAI-style graders | :mod:`.graders` | ``POST /v1/graders/run`` |
| NeMo-Gym's resources server | :mod:`.nemo_gym` | ``POST /v1/compat/nemo-gym/{verifier}/verify``, ``.../aggregate_metrics`` |
| SandboxFusion | :mod:`.sandbox_fusion` | ``POST /run_code``, ``GET /v1/ping`` |
| ORS (Open Reward Standard) | :mod:`.ors` | ``POST /create_session``, ``/create``, ``/{env}/call``, ``/delete``, ``/ping``, ``GET /{env}/tools``, ... |

Each scores on the service's one score path (:mod:`rewardhub.api.pipeline`), runs programs in
:mod:`rewardhub.sandbox` or serves the service's sessions, as the v1 routes do. The caller halves of these protocols, what a trainer
imports, are in :mod:`rewardhub.integrations` and reach these routes over HTTP only.
"""

from . import graders, nemo_gym, openrlhf, ors, sandbox_fusion, slime

ROUTERS = (openrlhf.router, slime.router, graders.router, nemo_gym.router, sandbox_fusion.router, ors.router)
"""Every compatibility router, in the order :func:`rewardhub.api.app.create_app` includes them."""

__all__ = ["ROUTERS", "graders", "nemo_gym", "openrlhf", "ors", "sandbox_fusion", "slime"]
