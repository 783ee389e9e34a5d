"""`sql` with semantics spider, through the service, agrees with Spider's released test-suite evaluation.

Spider's official script (taoyds/test-suite-sql-eval) is on no package registry, so CI scores the
corpus against a transcription (``test_sql_differential.py``). Where the released source has been
unpacked beside the project (``bench/peers/setup_spider_eval.sh``), this runs the comparison of
``bench/sql_vs_spider.py``: every Spider pair of the differential corpus scored by the script's own
``eval_exec_match``, called as its ``evaluation.py`` calls it, and by ``rewardhub serve``'s
``POST /v1/score``. It prints the agreement and each disagreement class (deliberate ones named) and
fails below 0.99.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SPIDER_EVAL = ROOT / "bench" / "peers" / "spider_eval" / "src"

pytestmark = pytest.mark.skipif(
    not (SPIDER_EVAL / "exec_eval.py").exists(),
    reason="Spider's released evaluation is not unpacked: bench/peers/setup_spider_eval.sh sets it up",
)

THRESHOLD = 0.99


def test_spider_semantics_agree_with_the_released_test_suite_evaluation(tmp_path: Path, capsys) -> None:
    pytest.importorskip("sqlparse")  # exec_eval imports it (through parse.py), as does tqdm
    pytest.importorskip("tqdm")
    sys.path.insert(0, str(ROOT / "bench"))
    import sql_differential_corpus as corpus
    import sql_vs_spider as bench
    from _serve import start_service

    root = corpus.build(tmp_path)
    theirs = bench.official_scorer(root, SPIDER_EVAL)
    process, url = start_service(env={"REWARDHUB_SQL_DATA_DIR": str(root)})
    try:
        summary = bench.compare(bench.spider_pairs(), bench.service_scorer(url), theirs)
    finally:
        process.terminate()
        process.wait()
    with capsys.disabled():
        print("\n" + bench.report(summary))
    assert min(summary["official_verdicts"].get("0", 0), summary["official_verdicts"].get("1", 0)) > 50
    assert summary["agreement"] >= THRESHOLD, summary["disagreements"]
