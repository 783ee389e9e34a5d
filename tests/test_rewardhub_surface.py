"""The public names are a promise: changing them is a deliberate act that changes this test."""

from __future__ import annotations

import rewardhub
import rewardhub.execution
import rewardhub.types


def test_rewardhub_exports():
    assert sorted(rewardhub.__all__) == sorted(
        [
            "AsyncRewardClient",
            "ClientError",
            "Gate",
            "Registry",
            "Result",
            "RewardClient",
            "Sample",
            "Verifier",
            "VerifierConfig",
            "VerifierRef",
            "VerifierSpec",
            "WeightedSum",
            "__version__",
        ]
    )
    for name in rewardhub.__all__:
        assert hasattr(rewardhub, name)


def test_vocabulary_exports():
    assert {"Sample", "Result", "VerifierSpec", "Status", "OK", "TIMEOUT", "ERROR"} <= set(rewardhub.types.__all__)


def test_execution_exports():
    assert sorted(rewardhub.execution.__all__) == [
        "Call",
        "Executor",
        "ProgressCallback",
        "create_executor",
        "run_call",
    ]


def test_types_imports_nothing_of_ours():
    source = open(rewardhub.types.__file__).read()
    assert "from rewardhub" not in source and "import rewardhub" not in source
