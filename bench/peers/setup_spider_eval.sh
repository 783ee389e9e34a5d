#!/usr/bin/env bash
# Spider's official test-suite evaluation (taoyds/test-suite-sql-eval), for bench/sql_vs_spider.py
# and tests/verifiers/sql/test_sql_vs_spider_released.py: its source unpacked into
# bench/peers/spider_eval/src (git-ignored; nothing of it is committed, CI never needs it).
#
#   bench/peers/setup_spider_eval.sh [SOURCE]
#
# SOURCE: a git repository of test-suite-sql-eval (a clone or a bare mirror; the pinned commit is
# taken from it), or a .tar.gz of its source. Without one, the pinned commit is cloned from GitHub.
#
# What it needs: the execution match (exec_eval.py, and parse.py's remove_distinct) imports
# sqlparse and tqdm, both in the project's dev environment; evaluation.py's exact-match side also
# imports nltk, which the comparison does not load. Nothing is installed.
set -euo pipefail
cd "$(dirname "$0")"
PINNED=e97acc546ecbee8fa27fa8dbf025ef61493a876c  # the commit verifiers/sql/spider_text.py was read from
DEST=spider_eval
SOURCE=${1:-${SPIDER_EVAL_SRC:-}}

rm -rf "$DEST"
mkdir -p "$DEST/src"
if [ -z "$SOURCE" ]; then
  git clone --quiet https://github.com/taoyds/test-suite-sql-eval "$DEST/clone"
  git -C "$DEST/clone" archive "$PINNED" | tar -x -C "$DEST/src"
  rm -rf "$DEST/clone"
elif [ -f "$SOURCE" ]; then
  tar -xzf "$SOURCE" -C "$DEST/src" --strip-components=1
else
  git --git-dir="$(git -C "$SOURCE" rev-parse --absolute-git-dir)" archive "$PINNED" | tar -x -C "$DEST/src"
fi
[ -f "$DEST/src/exec_eval.py" ] || { echo "no exec_eval.py of test-suite-sql-eval in $SOURCE" >&2; exit 1; }
echo "$PINNED" > "$DEST/COMMIT"
echo "test-suite-sql-eval $PINNED ready: $PWD/$DEST/src"
