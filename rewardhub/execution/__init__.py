"""Where scoring runs. ``execution: local`` (embedded process pools) or ``execution: celery``.

The choice lives here and nowhere else: the API, the pipeline and the verifiers only see
:class:`Executor`.
"""

from __future__ import annotations

from rewardhub.calls import Call, run_call
from rewardhub.execution.base import Executor, ProgressCallback
from rewardhub.registry import Registry
from rewardhub.settings import Settings

__all__ = ["Call", "Executor", "ProgressCallback", "create_executor", "run_call"]


def create_executor(settings: Settings, registry: Registry) -> Executor:
    if settings.execution == "celery":
        from rewardhub.execution.celery_executor import CeleryExecutor

        return CeleryExecutor(settings, registry)
    from rewardhub.execution.local import LocalExecutor

    return LocalExecutor(settings, registry)
