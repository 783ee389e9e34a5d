#!/usr/bin/env bash
# Prove the GPU paths on one GPU in a few minutes: the model verifiers in bf16 with their GPU tests,
# bench/rm_throughput.py, and 100 steps of the toy trainer against the CPU run (scripts/gpu_check.py
# says what each stage checks). It prints one table and writes it to runs/gpu_check/summary.md.
#
#   scripts/gpu_check.sh [--device cuda] [--out DIR] [--budget-s 420]
#   scripts/gpu_check.sh --device cpu --quick          # the shortened run CI makes
#
# A GPU machine with only torch and transformers (and no network) gets the rest from a wheelhouse:
#   scripts/gpu_check.sh --fetch-wheels wheelhouse     # where PyPI is reachable; about 29 MiB
#   WHEELHOUSE=wheelhouse scripts/gpu_check.sh         # on the GPU machine, with the folder brought along
# (wheelhouse/ is git-ignored: bring it along explicitly). Installing takes ~30 s; the check's own
# budget (420 s) keeps the whole under 8 minutes.
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
    du -sh "$dest"
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

exec "$PYTHON" scripts/gpu_check.py "$@"
