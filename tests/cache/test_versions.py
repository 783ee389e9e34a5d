"""Every built-in says which version gave its verdicts, and the ones whose verdict depends on a group, or
on state outside the sample (``session_tests``: a session that changes), are never cached."""

from __future__ import annotations

from rewardhub.registry import Registry


def test_every_built_in_declares_its_own_version() -> None:
    registry = Registry.load()
    undeclared = [name for name in registry.names() if "version" not in vars(registry.verifier_class(name))]
    assert undeclared == []  # inheriting the base's "1" would hide a forgotten bump


def test_group_verifiers_are_not_cacheable_and_the_rest_are() -> None:
    registry = Registry.load()
    for name in registry.names():
        cls = registry.verifier_class(name)
        assert cls.is_cacheable() == (cls.kind != "group" and name != "session_tests"), name
        assert cls.describe()["version"] == str(cls.version)
