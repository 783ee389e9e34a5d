"""The v1 routes of API.md, one module per resource; ``rewardhub.api.app`` includes each router.

| module | answers |
| --- | --- |
| :mod:`~rewardhub.api.routes.health` | ``GET /healthz``, ``/readyz``, ``/metrics`` (open to anyone) |
| :mod:`~rewardhub.api.routes.verifiers` | ``GET /v1/verifiers`` |
| :mod:`~rewardhub.api.routes.score` | ``POST /v1/score`` |
| :mod:`~rewardhub.api.routes.jobs` | ``POST /v1/jobs``, ``GET /v1/jobs/{id}`` |
| :mod:`~rewardhub.api.routes.sandbox` | ``POST /v1/sandbox/run`` |
| :mod:`~rewardhub.api.routes.sessions` | ``/v1/sessions`` and a session's ``run``, ``test`` |
| :mod:`~rewardhub.api.routes.audit` | ``POST /v1/audit``, ``POST /v1/reverify`` |
| :mod:`~rewardhub.api.routes.docs` | ``/openapi.json``, ``/docs``, ``/redoc`` |
| :mod:`~rewardhub.api.routes.ui` | ``/ui`` and the JSON the operator page polls |

Foreign protocols (OpenRLHF, slime, graders, NeMo-Gym, SandboxFusion, ORS) are in
:mod:`rewardhub.api.compat`. No router imports another: what several share is in
:mod:`rewardhub.api.deps` (the typed dependencies, the caller), :mod:`rewardhub.api.body` (reading a
body) and :mod:`rewardhub.api.offload` (the session threads).
"""
