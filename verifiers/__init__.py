"""Rule verifiers, one small module each (the folder ``verifiers/``, imported as ``rewardhub.verifiers``).

The ``code`` verifier runs programs through :mod:`rewardhub.sandbox`, which lives in the core package;
model-based verifiers are :mod:`rewardhub.models`. See ``verifiers/README.md`` for the map.

Each module here defines one :class:`rewardhub.verifier.Verifier`; they are registered through the
``rewardhub.verifiers`` entry points in ``pyproject.toml``, exactly like third-party plugins.
"""
