"""A pool's worker processes are handed the service's settings as they start.

A verifier has no settings argument: what it reads of them (the model verifiers the model kit's
folder) comes from :func:`rewardhub.settings.current` in the worker, and the sandbox the code
verifier runs programs in reads its section of that same tree
(:func:`rewardhub.sandbox.settings.in_effect`). The service used to pass the sandbox backend by writing ``REWARDHUB_SANDBOX_BACKEND`` into
its own environment before the fork server started; now the workers get the whole tree, so a
setting given by a flag or a config file, which the environment never holds, reaches them too.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rewardhub.calls import Call
from rewardhub.execution.pool import WorkerPool
from rewardhub.registry import Registry
from rewardhub.settings import Settings
from rewardhub.types import Sample

PROBE = textwrap.dedent(
    '''
    from rewardhub.sandbox.settings import in_effect
    from rewardhub.settings import current
    from rewardhub.types import Result
    from rewardhub.verifier import Verifier

    class SettingsProbe(Verifier):
        """Reports the settings its worker process reads."""
        name = "settings_probe"

        def score(self, sample, config):
            settings = current()
            return Result.ok(
                1.0, backend=settings.sandbox.backend, models=str(settings.models.dir), sandbox=in_effect().backend
            )
    '''
)


def _probe(tmp_path: Path, settings: Settings | None) -> dict[str, str]:
    plugin = tmp_path / "settings_probe.py"
    plugin.write_text(PROBE)
    registry = Registry.load([plugin])
    pool = WorkerPool("settings-test", 1, plugin_files=[str(plugin)], memory_mb=1024, settings=settings)
    pool.start()
    try:
        call = Call(
            "settings_probe", registry.validate_config("settings_probe", {}), (Sample(response="x"),), "rule", 60.0
        )
        [result] = pool.submit([call])[0].result(timeout=120)
    finally:
        pool.shutdown()
    assert result.status == "ok", result.error
    return {key: result.details[key] for key in ("backend", "models", "sandbox")}


def test_a_worker_reads_the_settings_its_pool_was_handed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REWARDHUB_SANDBOX_BACKEND", raising=False)
    monkeypatch.delenv("REWARDHUB_MODELS_DIR", raising=False)
    handed = Settings.load(sandbox={"backend": "unsafe"}, models={"dir": str(tmp_path / "models")})
    details = _probe(tmp_path, handed)
    assert details == {"backend": "unsafe", "models": str(tmp_path / "models"), "sandbox": "unsafe"}
