"""`sql` with ``semantics: "spider"``, through the service, against Spider's released test-suite evaluation.

    bench/peers/setup_spider_eval.sh [SOURCE]    # once: the official source, pinned, git-ignored
    python bench/sql_vs_spider.py

The corpus is the SQL differential test's (``tests/verifiers/sql/sql_differential_corpus.py``):
(gold, predicted) pairs on a database in Spider's layout with a second database beside it (the
test suite). Each pair is scored twice:

(a) Spider's official script, taoyds/test-suite-sql-eval at the pinned commit, unchanged: its
    ``exec_eval.eval_exec_match`` called as its ``evaluation.py`` calls it, with that script's
    default flags (``plug_value``, ``keep_distinct`` and ``progress_bar_for_each_datapoint`` off),
    on the prediction after ``p_str.replace("value", "1")`` and on
    ``os.path.join(db_dir, db, db + ".sqlite")``. A gold that fails trips its assertion (the script
    stops): counted as ``error``.
(b) rewardhub: ``rewardhub serve`` in a subprocess, ``POST /v1/score`` with the ``sql`` verifier
    (``semantics: spider``, ``answer_format: sql_block``, ``query_timeout_s: 60`` as the test
    suite's ``TIMEOUT``, ``timeout_s: 300`` a sample), the prediction in a ```sql block. A status
    other than ``ok`` is its verdict (``error``, ``timeout``), with its message in the report.

Prints agreement and every disagreement class (the pair's kind, rewardhub's verdict, the official
one) with its count, and writes them to ``bench/results/sql_vs_spider.{json,log}``. The deliberate
differences ``verifiers/sql/semantics.py`` names are reported as such, by count: rewardhub runs
only read-only queries (a write the test suite would run scores 0) and stops a query after
``query_timeout_s`` (the test suite's ``asyncio.wait_for`` cannot interrupt a synchronous sqlite
call); ``plug_value`` is not offered (off by default in the test suite, as here).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
SPIDER_EVAL = ROOT / "bench" / "peers" / "spider_eval" / "src"
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "verifiers" / "sql"))
import sql_differential_corpus as corpus  # noqa: E402
from _serve import start_service  # noqa: E402

__all__ = ["DELIBERATE", "compare", "official_scorer", "report", "service_scorer", "spider_pairs"]

# query_timeout_s: exec_eval.TIMEOUT; the defaults (5 s a query, the server's 10 s a sample) can stop
# the comparison of a 100,000-row result on a loaded machine, which the test suite would finish
VERIFIER = {
    "name": "sql",
    "config": {"semantics": "spider", "answer_format": "sql_block", "query_timeout_s": 60, "timeout_s": 300},
}
DELIBERATE = {  # pair kinds where rewardhub differs on purpose (verifiers/sql/semantics.py), with the reason
    "write": "rewardhub runs read-only queries only: a write the test suite runs and scores is 0",
    "timeout": "rewardhub stops a query after query_timeout_s; the test suite's asyncio.wait_for cannot",
    "max_gold_rows": "rewardhub refuses a gold of more rows than max_gold_rows (status error naming it), "
    "a memory budget; the test suite reads any result into memory",
}

Verdicts = Callable[[Sequence[corpus.Pair]], list[tuple[str, str]]]  # (verdict, message) per pair


def spider_pairs() -> list[corpus.Pair]:
    """The corpus's pairs that Spider's rules score (a pair marked for BIRD only is left out)."""
    return [pair for pair in corpus.corpus() if pair.only in (None, "spider")]


def official_scorer(root: Path, source: Path = SPIDER_EVAL) -> Verdicts:
    """The released ``eval_exec_match``, called as ``evaluation.py`` calls it: '1', '0' or 'error'."""
    if not (source / "exec_eval.py").exists():
        raise FileNotFoundError(f"{source}/exec_eval.py: bench/peers/setup_spider_eval.sh sets it up")
    sys.path.insert(0, str(source))
    exec_eval = importlib.import_module("exec_eval")
    db = os.path.join(str(root), corpus.DB, corpus.DB + ".sqlite")

    def score(pairs: Sequence[corpus.Pair]) -> list[tuple[str, str]]:
        random.seed(0)  # get_constraint_permutation samples rows for results of more than three columns
        verdicts = []
        for pair in pairs:
            p_str = pair.predicted.replace("value", "1")  # evaluation.py, before the execution match
            try:
                verdict = exec_eval.eval_exec_match(db, p_str, pair.gold, False, False, False)
            except AssertionError as exc:  # 'gold query ... has error on database file ...': the script stops
                verdicts.append(("error", str(exc)[:200]))
                continue
            verdicts.append((str(int(verdict)), ""))
        return verdicts

    return score


def service_scorer(url: str, batch: int = 16) -> Verdicts:
    """``sql`` with semantics spider through ``POST /v1/score``: '1', '0' or 'error'."""

    def score(pairs: Sequence[corpus.Pair]) -> list[tuple[str, str]]:
        verdicts = []
        with httpx.Client(base_url=url, timeout=600) as client:
            for start in range(0, len(pairs), batch):
                samples = [
                    {"response": f"```sql\n{p.predicted}\n```", "reference": {"db_id": corpus.DB, "query": p.gold}}
                    for p in pairs[start : start + batch]
                ]
                response = client.post("/v1/score", json={"verifier": VERIFIER, "samples": samples})
                response.raise_for_status()
                for result in response.json()["results"]:
                    ok = result["status"] == "ok"
                    verdicts.append((str(int(result["score"])) if ok else result["status"], result["error"] or ""))
        return verdicts

    return score


def compare(pairs: Sequence[corpus.Pair], ours: Verdicts, theirs: Verdicts) -> dict[str, Any]:
    """Agreement over ``pairs`` and each disagreement class with its count."""
    started = time.perf_counter()
    official, rewardhub = theirs(pairs), ours(pairs)
    classes: Counter[tuple[str, str, str]] = Counter()
    messages: dict[tuple[str, str, str], str] = {}
    for pair, (t, t_note), (o, o_note) in zip(pairs, official, rewardhub, strict=True):
        if t != o:
            key = (_deliberate(pair.kind, o, o_note) or pair.kind, o, t)
            classes[key] += 1
            messages.setdefault(key, o_note or t_note)
    deliberate = {k: n for k, n in classes.items() if k[0] in DELIBERATE}
    missed = sum(classes.values())
    return {
        "pairs": len(pairs),
        "agree": len(pairs) - missed,
        "agreement": (len(pairs) - missed) / len(pairs),
        "agreement_outside_deliberate": (len(pairs) - missed + sum(deliberate.values())) / len(pairs),
        "official_verdicts": dict(Counter(v for v, _ in official)),
        "disagreements": [
            {
                "kind": k,
                "rewardhub": o,
                "official": t,
                "count": n,
                "deliberate": DELIBERATE.get(k),
                "message": messages[(k, o, t)],
            }
            for (k, o, t), n in sorted(classes.items())
        ],
        "seconds": round(time.perf_counter() - started, 1),
    }


def _deliberate(kind: str, ours: str, message: str) -> str | None:
    """The deliberate difference a disagreement falls under, if any."""
    if ours == "timeout":
        return "timeout"
    if ours == "error" and "max_gold_rows" in message:
        return "max_gold_rows"
    return kind.split(":")[0] if kind.split(":")[0] in DELIBERATE else None


def report(summary: dict[str, Any]) -> str:
    lines = [
        f"sql semantics spider (service) vs test-suite-sql-eval's eval_exec_match: {summary['agree']}/"
        f"{summary['pairs']} agree ({summary['agreement']:.4f}); outside the deliberate differences "
        f"{summary['agreement_outside_deliberate']:.4f}; official verdicts {summary['official_verdicts']}"
    ]
    for d in summary["disagreements"]:
        why = f"  [deliberate: {d['deliberate']}]" if d["deliberate"] else ""
        note = f" ({d['message'][:240]})" if d["message"] else ""
        lines.append(
            f"  DIFFER x{d['count']}: {d['kind']}: rewardhub {d['rewardhub']}, official {d['official']}{note}{why}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SPIDER_EVAL, help="the unpacked test-suite-sql-eval")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = corpus.build(Path(tmp))
        theirs = official_scorer(root, args.source)
        process, url = start_service(env={"REWARDHUB_SQL_DATA_DIR": str(root)})
        try:
            summary = compare(spider_pairs(), service_scorer(url), theirs)
        finally:
            process.terminate()
            process.wait()
    commit = args.source.parent / "COMMIT"
    summary["official_commit"] = commit.read_text().strip() if commit.exists() else None
    text = report(summary)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "sql_vs_spider.json").write_text(json.dumps(summary, indent=1) + "\n")
    (RESULTS / "sql_vs_spider.log").write_text(f"$ python bench/sql_vs_spider.py\n{text}\n")


if __name__ == "__main__":
    main()
