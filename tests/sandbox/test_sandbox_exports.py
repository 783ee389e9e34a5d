"""The sandbox package's public surface, pinned."""

import verifiers.sandbox


def test_public_names():
    assert sorted(verifiers.sandbox.__all__) == [
        "COMPILE_LIMITS",
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
        "default_pool",
        "language",
    ]
    for name in verifiers.sandbox.__all__:
        assert hasattr(verifiers.sandbox, name)
