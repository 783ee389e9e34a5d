"""Rule verifiers, one small module each, plus ``sandbox/`` for isolated code execution.

Each module here defines one :class:`rewardhub.verifier.Verifier`; they are registered through the
``rewardhub.verifiers`` entry points in ``pyproject.toml``, exactly like third-party plugins.
"""
