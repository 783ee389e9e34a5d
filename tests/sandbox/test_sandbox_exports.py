"""The sandbox package's public surface, pinned."""

import rewardhub.sandbox


def test_public_names():
    assert sorted(rewardhub.sandbox.__all__) == [
        "BatchRuns",
        "COMPILE_LIMITS",
        "CheckerFailed",
        "Job",
        "LANGUAGES",
        "Language",
        "Limits",
        "RunResult",
        "SandboxError",
        "SandboxPool",
        "SandboxSettings",
        "SandboxUnavailable",
        "UnsupportedLanguage",
        "VERDICTS",
        "Verdict",
        "compile_filter",
        "decode_value",
        "default_pool",
        "language",
        "run_batch",
    ]
    for name in rewardhub.sandbox.__all__:
        assert hasattr(rewardhub.sandbox, name)
