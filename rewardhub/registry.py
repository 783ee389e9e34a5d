"""Which verifiers exist: built-ins and third-party plugins, found the same way.

Every verifier, ours included, is announced by an entry point in the group
``rewardhub.verifiers`` (``name = "package.module:Class"``). A local Python file can add more with
``rewardhub serve --plugin path/to/file.py``: every :class:`~rewardhub.verifier.Verifier` subclass
defined in that file is registered. Two verifiers with one name is an error at start-up, never a
silent override, because a reward that quietly changes meaning is the worst kind of bug.

What the service needs to know about a verifier with one config (its kind, whether it runs in
place, its time limit, what it reads, whether its verdicts may be served again, its verdict key)
is asked here once per spec, by :meth:`Registry.traits`, and carried from then on as one
:class:`VerifierTraits` value: on the spec's leaves (:mod:`rewardhub.compose`) and on each call
(:class:`rewardhub.calls.Call`). Nothing downstream asks the registry about a class again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rewardhub.errors import InvalidConfig, RegistryError, UnknownVerifier
from rewardhub.types import Sample, VerifierKind
from rewardhub.verifier import Verifier, VerifierConfig

__all__ = ["ENTRY_POINT_GROUP", "IN_PROCESS_KINDS", "Registry", "Timeouts", "VerifierTraits", "load_plugin_file"]

ENTRY_POINT_GROUP = "rewardhub.verifiers"

IN_PROCESS_KINDS: frozenset[VerifierKind] = frozenset({"model", "judge"})
"""Kinds scored by a model loaded in the service's own process (the micro-batcher): never inline."""


@dataclass(frozen=True)
class Timeouts:
    """The service's hard wall-clock limit per sample: the config's own ``timeout_s``, else a default
    by kind, never above ``max_s``. The defaults here (no limit) are for code that resolves specs
    without scoring them (the audit's corpus listing); the service builds its own from its settings."""

    sample_s: float = math.inf
    code_s: float = math.inf
    model_s: float = math.inf
    max_s: float = math.inf

    def limit(self, kind: VerifierKind, requested: float | None) -> float:
        default = {"code": self.code_s, "model": self.model_s, "judge": self.model_s}.get(kind, self.sample_s)
        return min(requested or default, self.max_s)


@dataclass(frozen=True)
class VerifierTraits:
    """What the service needs to know about one verifier with one config, resolved once per spec."""

    name: str
    kind: VerifierKind
    inline: bool
    """Scored in place, in the API process: the verifier says it is cheap (``Verifier.inline``) and
    its kind is not one a model scores (those go to the micro-batcher wherever they say they run)."""
    timeout_s: float
    reads: tuple[str, ...]
    """The sample fields a verdict depends on: what the cache keys on."""
    reads_caller: bool
    cacheable: bool
    verdict_key: dict[str, str]


class Registry:
    """Verifier classes by name, with one shared instance each (models load once per process)."""

    def __init__(self, classes: Iterable[type[Verifier]] = (), plugin_files: Sequence[str] = ()) -> None:
        self._classes: dict[str, type[Verifier]] = {}
        self._origins: dict[str, str] = {}
        self._instances: dict[str, Verifier] = {}
        self.plugin_files = tuple(str(p) for p in plugin_files)
        for cls in classes:
            self.add(cls, origin=f"{cls.__module__}.{cls.__qualname__}")

    @classmethod
    def load(cls, plugin_files: Sequence[str | Path] = (), entry_point_group: str = ENTRY_POINT_GROUP) -> Registry:
        """Everything installed (entry points) plus the given plugin files."""
        registry = cls(plugin_files=[str(p) for p in plugin_files])
        for ep in sorted(entry_points(group=entry_point_group), key=lambda e: e.name):
            try:
                verifier_cls = ep.load()
            except Exception as exc:  # a broken plugin must stop start-up loudly
                raise RegistryError(f"cannot load verifier entry point {ep.name!r} ({ep.value}): {exc!r}") from exc
            _check_verifier_class(verifier_cls, where=f"entry point {ep.name!r}")
            if verifier_cls.name != ep.name:
                raise RegistryError(
                    f"entry point {ep.name!r} points at a verifier named {verifier_cls.name!r}; they must agree"
                )
            registry.add(verifier_cls, origin=f"entry point {ep.value}")
        for path in plugin_files:
            for verifier_cls in load_plugin_file(path):
                registry.add(verifier_cls, origin=f"plugin file {path}")
        return registry

    def add(self, cls: type[Verifier], origin: str) -> None:
        _check_verifier_class(cls, where=origin)
        if cls.name in self._classes and self._classes[cls.name] is not cls:
            raise RegistryError(
                f"duplicate verifier name {cls.name!r}: {self._origins[cls.name]} and {origin}",
                detail={"name": cls.name},
            )
        self._classes[cls.name] = cls
        self._origins[cls.name] = origin

    def names(self) -> list[str]:
        return sorted(self._classes)

    def __contains__(self, name: object) -> bool:
        return name in self._classes

    def verifier_class(self, name: str) -> type[Verifier]:
        try:
            return self._classes[name]
        except KeyError:
            raise UnknownVerifier(f"unknown verifier {name!r}", detail={"known": self.names()}) from None

    def get(self, name: str) -> Verifier:
        """The shared instance of a verifier, created on first use in this process."""
        instance = self._instances.get(name)
        if instance is None:
            instance = self._instances[name] = self.verifier_class(name)()
        return instance

    def traits(self, name: str, config: VerifierConfig, timeouts: Timeouts = Timeouts()) -> VerifierTraits:
        """Everything the service asks of ``name`` with ``config``, in one value (see the module docstring)."""
        cls = self.verifier_class(name)
        return VerifierTraits(
            name=name,
            kind=cls.kind,
            inline=cls.inline and cls.kind not in IN_PROCESS_KINDS,
            timeout_s=timeouts.limit(cls.kind, config.timeout_s),
            reads=tuple(cls.reads),
            reads_caller=cls.reads_caller,
            cacheable=cls.is_cacheable(),
            verdict_key=cls.verdict_key(config),
        )

    def validate_config(self, name: str, config: dict[str, Any]) -> VerifierConfig:
        verifier_cls = self.verifier_class(name)
        try:
            return verifier_cls.Config.model_validate(config)
        except ValidationError as exc:
            raise InvalidConfig(
                f"invalid config for verifier {name!r}",
                detail=exc.errors(include_url=False, include_context=False),
            ) from None

    def describe(self) -> list[dict[str, Any]]:
        return [self._classes[name].describe() for name in self.names()]

    def versions(self) -> dict[str, str]:
        """Each verifier's version, by name: what a stored verdict is compared against."""
        return {name: str(self._classes[name].version) for name in self.names()}

    def origin(self, name: str) -> str:
        return self._origins[name]


def load_plugin_file(path: str | Path) -> list[type[Verifier]]:
    """Import a Python file and return the verifier classes it defines (not those it imports)."""
    path = Path(path).resolve()
    if not path.is_file():
        raise RegistryError(f"plugin file not found: {path}")
    module_name = "rewardhub_plugin_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise RegistryError(f"cannot import plugin file {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # pickling results and configs needs the module findable
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise RegistryError(f"plugin file {path} failed to import: {exc!r}") from exc
    found = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, Verifier) and obj.__module__ == module_name and "name" in vars(obj)
    ]
    if not found:
        raise RegistryError(f"plugin file {path} defines no Verifier subclass with a name")
    return found


def _check_verifier_class(cls: Any, where: str) -> None:
    if not (inspect.isclass(cls) and issubclass(cls, Verifier)):
        raise RegistryError(f"{where} is not a rewardhub Verifier subclass: {cls!r}")
    if not isinstance(getattr(cls, "name", None), str) or not cls.name:
        raise RegistryError(f"{where}: verifier class {cls.__qualname__} has no name")
    if not (inspect.isclass(cls.Config) and issubclass(cls.Config, VerifierConfig)):
        raise RegistryError(f"{where}: {cls.name}.Config must subclass rewardhub.verifier.VerifierConfig")
    if not isinstance(cls.version, str | int) or not str(cls.version):
        raise RegistryError(f"{where}: {cls.name}.version must be a non-empty string")
    unknown = sorted(set(cls.reads) - set(Sample.model_fields))
    if unknown:
        raise RegistryError(f"{where}: {cls.name}.reads names {unknown}, which are not sample fields")
