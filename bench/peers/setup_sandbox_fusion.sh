#!/usr/bin/env bash
# SandboxFusion's released server, for bench/code_verifier_speed.py's anchor side: its source
# unpacked into bench/peers/sandbox_fusion/ (git-ignored; nothing of it is committed, CI never
# needs it) and what its server needs installed into venvs of its own, beside ours.
#
#   bench/peers/setup_sandbox_fusion.sh [SOURCE]
#
# SOURCE: a git repository of SandboxFusion (a clone or a bare mirror; the pinned commit is taken
# from it), or a .tar.gz of its source. Without one, the pinned commit is cloned from GitHub.
# Then: bench/peers/sandbox_fusion/run_server.sh [PORT] starts it (127.0.0.1, default 8080).
#
# How it runs: with its shipped local config (sandbox/configs/local.yaml: `isolation: none`), as
# its README's local setup does. Its Python runner runs `python` from a conda environment named
# sandbox-runtime (sandbox/runners/major.py: `source <conda root>/bin/activate sandbox-runtime`),
# where conda root is the first folder above the server's interpreter that holds `condabin`. Conda
# is not installed here, so this lays out the two environments its Dockerfile makes (`sandbox` for
# the server, `sandbox-runtime` for programs) as venvs under one folder with conda's marker and an
# `activate` that puts the named environment first on PATH: its code runs unchanged.
set -euo pipefail
cd "$(dirname "$0")"
PINNED=469de0845cb7  # the commit tests/api/compat/data/sandbox_fusion_runner_cases.json was taken at
DEST=sandbox_fusion
PYTHON=${PYTHON:-python3}
SOURCE=${1:-${SANDBOX_FUSION_SRC:-}}

rm -rf "$DEST/src"
mkdir -p "$DEST/src"
if [ -z "$SOURCE" ]; then
  git clone --quiet https://github.com/bytedance/SandboxFusion "$DEST/clone"
  git -C "$DEST/clone" archive "$PINNED" | tar -x -C "$DEST/src"
  rm -rf "$DEST/clone"
elif [ -f "$SOURCE" ]; then
  tar -xzf "$SOURCE" -C "$DEST/src" --strip-components=1
else
  git --git-dir="$(git -C "$SOURCE" rev-parse --absolute-git-dir)" archive "$PINNED" | tar -x -C "$DEST/src"
fi
[ -f "$DEST/src/sandbox/server/server.py" ] || { echo "no SandboxFusion server in $SOURCE" >&2; exit 1; }
# the server mounts its documentation site, built by its image (docusaurus): an empty one here
mkdir -p "$DEST/src/docs/build"

ROOT=$PWD/$DEST/conda
mkdir -p "$ROOT/condabin" "$ROOT/bin" "$ROOT/envs"
cat > "$ROOT/bin/activate" <<'ACTIVATE'
# conda's `source activate NAME`, for the venvs laid out beside this file
export PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/envs/$1/bin:$PATH"
ACTIVATE
[ -x "$ROOT/envs/sandbox/bin/python" ] || "$PYTHON" -m venv "$ROOT/envs/sandbox"
[ -x "$ROOT/envs/sandbox-runtime/bin/python" ] || "$PYTHON" -m venv "$ROOT/envs/sandbox-runtime"
# the server's dependencies at the versions of its poetry.lock (transformers because its dataset
# registry imports every dataset module at start, repobench's among them; no model is loaded)
"$ROOT/envs/sandbox/bin/pip" install --quiet \
  pydantic==2.6.4 pydantic-core==2.16.3 fastapi==0.103.2 starlette==0.27.0 "uvicorn[standard]==0.25.0" \
  structlog==23.3.0 psutil==5.9.8 aiofiles==23.2.1 aiohttp==3.10.6 tenacity==8.5.0 \
  "databases[aiomysql,aiosqlite]==0.9.0" sqlalchemy==2.0.35 pyyaml==6.0.2 \
  transformers==4.45.0 tokenizers==0.20.0 huggingface-hub==0.25.1 safetensors==0.4.5 numpy==2.1.1
# what its runtime image gives Python programs that HumanEval's checks use
"$ROOT/envs/sandbox-runtime/bin/pip" install --quiet numpy

cat > "$DEST/run_server.sh" <<RUN
#!/usr/bin/env bash
# SandboxFusion's server, its shipped local config, on 127.0.0.1:\${1:-8080}
cd "$PWD/$DEST/src"
exec "$ROOT/envs/sandbox/bin/python" -m uvicorn sandbox.server.server:app --host 127.0.0.1 --port "\${1:-8080}" --log-level warning
RUN
chmod +x "$DEST/run_server.sh"
echo "SandboxFusion $PINNED ready: $PWD/$DEST/run_server.sh [PORT]"
