"""Workers start warm: verifiers warm up once, in the fork server, before any worker is forked.

The math verifier's first samples in a process pay for lazy imports (sympy's tensor and matrix
modules) and for the LaTeX parser's tables; done in every worker, and again in every worker that
replaces a killed one, that was a quarter of a fresh service's scoring time on real CoT batches
(``bench/math_throughput.py``). The similarity metrics' libraries are imported on first use, to
keep the service's own start lean, and here, so that a worker's first similarity sample does not
spend its time limit importing them. :func:`rewardhub.execution.pool.fork_server_modules` lists the
verifier modules and then :mod:`rewardhub.execution.warm_up`, whose import warms them.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import ClassVar

import pytest

from rewardhub.execution.pool import WARM_UP_MODULE, fork_server_modules
from rewardhub.registry import Registry
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier

LAZY_MODULES = (
    "sympy.tensor.tensor",  # imported by sympy the first time an Add is built (math)
    "rouge_score.rouge_scorer",  # imported on first use, not with the registry (text_similarity)
)


PROBE = textwrap.dedent(
    f'''
    import sys
    from rewardhub.types import Result
    from rewardhub.verifier import Verifier

    class WarmProbe(Verifier):
        """Reports which verifiers' lazy state this worker already had."""
        name = "warm_probe"

        def score(self, sample, config):
            return Result.ok(1.0, cold=[m for m in {LAZY_MODULES!r} if m not in sys.modules])
    '''
)


def test_the_fork_server_imports_the_verifiers_then_warms_them() -> None:
    modules = fork_server_modules(Registry.load())
    assert "rewardhub.verifiers.math.verifier" in modules
    assert modules[-1] == WARM_UP_MODULE  # last: it warms what was imported before it


def test_plugin_files_and_other_kinds_stay_out_of_the_fork_server(tmp_path: Path) -> None:
    plugin = tmp_path / "probe.py"
    plugin.write_text(PROBE)
    registry = Registry.load([plugin])
    assert not any(m.startswith("rewardhub_plugin_") for m in fork_server_modules(registry))
    rule_only = fork_server_modules(registry, kinds=("rule",))
    assert "rewardhub.verifiers.math.verifier" in rule_only
    assert not any("models" in m for m in rule_only[:-1])


FRESH_SERVICE_POOL = textwrap.dedent(
    """
    import sys
    from rewardhub.calls import Call
    from rewardhub.execution.pool import WorkerPool, fork_server_modules
    from rewardhub.registry import Registry
    from rewardhub.types import Sample

    plugin = sys.argv[1]
    registry = Registry.load([plugin])
    pool = WorkerPool("warm-test", 1, plugin_files=[plugin], preload=fork_server_modules(registry))
    pool.start()
    call = Call("warm_probe", registry.validate_config("warm_probe", {}), (Sample(response="x"),), "rule", 30.0)
    [result] = pool.submit([call])[0].result(timeout=60)
    pool.shutdown()
    print("cold:" + ",".join(result.details["cold"]))
    """
)


@pytest.mark.timeout(120)
def test_a_fresh_worker_has_the_verifiers_lazy_state_before_its_first_sample(tmp_path: Path) -> None:
    # In a fresh interpreter: the fork server is one per process, and in this one an earlier test
    # may have started it with other modules.
    plugin = tmp_path / "probe.py"
    plugin.write_text(PROBE)
    run = subprocess.run(
        [sys.executable, "-c", FRESH_SERVICE_POOL, str(plugin)], capture_output=True, text=True, timeout=100
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-1] == "cold:"  # nothing left to import on a first sample


class _Broken(Verifier):
    name = "warm_up_test_broken"

    @classmethod
    def warm_up(cls) -> None:
        raise RuntimeError("cannot warm")


class _Fine(Verifier):
    name = "warm_up_test_fine"
    warmed: ClassVar[list[str]] = []

    @classmethod
    def warm_up(cls) -> None:
        cls.warmed.append("yes")


class _Endless(Verifier):
    name = "warm_up_test_endless"

    @classmethod
    def warm_up(cls) -> None:
        while True:
            time.sleep(0.01)


def test_a_warm_up_that_never_ends_is_cut_off(caplog, monkeypatch) -> None:
    from rewardhub.execution import warm_up

    monkeypatch.setattr(warm_up, "WARM_UP_LIMIT_S", 0.2)
    monkeypatch.setattr(warm_up, "_verifier_classes", lambda: [_Endless, _Fine])
    with caplog.at_level(logging.WARNING, logger="rewardhub.execution.warm_up"):
        warmed = warm_up.warm_loaded_verifiers()
    assert warmed == ["warm_up_test_fine"]
    assert "warm_up_test_endless" in caplog.text


def test_a_failing_warm_up_is_logged_and_the_others_still_warm(caplog, monkeypatch) -> None:
    from rewardhub.execution import warm_up

    monkeypatch.setattr(warm_up, "_verifier_classes", lambda: [_Broken, _Fine])
    with caplog.at_level(logging.WARNING, logger="rewardhub.execution.warm_up"):
        warmed = warm_up.warm_loaded_verifiers()
    assert warmed == ["warm_up_test_fine"]
    assert _Fine.warmed[-1:] == ["yes"]
    assert "warm_up_test_broken" in caplog.text


def test_the_math_verifiers_warm_up_cases_are_all_judged_right() -> None:
    from rewardhub.verifiers.math.verifier import WARM_UP, MathVerifier

    verifier, config = MathVerifier(), MathVerifier.Config()
    scores = [verifier.score(Sample(response=r, reference=g), config) for r, g in WARM_UP]
    assert all(isinstance(s, Result) and s.score == 1.0 for s in scores), scores
