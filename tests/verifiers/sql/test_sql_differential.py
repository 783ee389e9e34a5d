"""`sql`'s bird and spider semantics agree with the benchmarks' official scoring on a generated corpus.

The oracle (``official_sql_eval.py``) is a transcription of Spider's test-suite evaluation and of
BIRD's ``evaluation.py``, line by line, since neither is released on a package registry; the
corpus (``sql_differential_corpus.py``) covers rewrites, ordering, duplicates, DISTINCT, NULLs,
column order, floats, several statements, ``> =`` spacing, empty and 100,000-row results and a
test suite of two databases. Agreement is printed per semantics with each disagreement class and
its count (rewardhub's own reading too, for comparison, unasserted); below 0.99 fails.

BIRD's rule is also held to released code, NeMo-Gym 0.7.0's ``bird_sql`` server (its evaluation, and
its reading of a response: queries written in 17 ways, fenced or not, in a think block, twice, with a
header, a comment, two statements), wherever nemo-gym is installed, and always in CI.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Optional

import official_sql_eval as official
import pytest
import sql_differential_corpus as corpus

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.sql import DATA_DIR_ENV, SqlVerifier

pytest.importorskip("sqlparse")  # the original remove_distinct runs on it; pinned in the dev extra

THRESHOLD = 0.99
VERIFIER = SqlVerifier()


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return corpus.build(tmp_path_factory.mktemp("sql_differential"))


def ours(root: Path, pair: corpus.Pair, **config) -> str:
    """rewardhub's verdict: '1', '0', or 'error'."""
    sample = Sample(response=f"```sql\n{pair.predicted}\n```", reference={"db_id": corpus.DB, "query": pair.gold})
    try:
        result = VERIFIER.score(sample, SqlVerifier.Config(answer_format="sql_block", **config))
    except VerifierError:  # the service reports it as status error
        return "error"
    return "error" if result.status != "ok" else str(int(result.score))


def nemo_gym_bird(root: Path, pair: corpus.Pair) -> str:
    """NeMo-Gym 0.7.0's ``bird_sql`` server, its released evaluation (``eval_utils``: BIRD's rule as the
    server runs it): both queries run on the database file, the result sets compared, an error 0."""
    from resources_servers.bird_sql import eval_utils

    db = root / corpus.DB / f"{corpus.DB}.sqlite"
    gold, predicted = eval_utils.execute_sqlite(db, pair.gold), eval_utils.execute_sqlite(db, pair.predicted)
    return str(int(gold is not None and predicted is not None and eval_utils.result_sets_match(gold, predicted)))


def theirs(root: Path, pair: corpus.Pair, benchmark: str) -> str:
    if benchmark == "nemo_gym_bird":
        return nemo_gym_bird(root, pair)
    if benchmark == "spider":
        return str(official.spider_exec_score(str(root), corpus.DB, pair.predicted, pair.gold))
    return str(official.bird_exec_score(f"{root}/", corpus.DB, pair.predicted, pair.gold))


def test_bird_and_spider_semantics_agree_with_the_official_scripts(root: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(root))
    pairs = corpus.corpus()
    kinds = sorted({pair.kind.split(":")[0] for pair in pairs})
    runs = {  # (semantics, its config, the benchmark it is held to)
        "bird": ({"semantics": "bird"}, "bird"),
        "spider": ({"semantics": "spider"}, "spider"),
        "rewardhub (rule bird)": ({}, "bird"),
        "rewardhub (rule spider)": ({"rule": "spider"}, "spider"),
    }
    if find_spec("resources_servers") is not None or os.environ.get("CI"):  # nemo-gym: .ci/run installs it
        runs["bird (NeMo-Gym's)"] = ({"semantics": "bird"}, "nemo_gym_bird")
    lines, agreement = [], {}
    for name, (config, benchmark) in runs.items():
        scored = [pair for pair in pairs if pair.only in (None, benchmark.removeprefix("nemo_gym_"))]
        disagreements: Counter[tuple[str, str, str]] = Counter()
        for pair in scored:
            official_verdict, our_verdict = theirs(root, pair, benchmark), ours(root, pair, **config)
            if official_verdict != our_verdict:
                disagreements[(pair.kind, our_verdict, official_verdict)] += 1
        agreement[name] = 1 - sum(disagreements.values()) / len(scored)
        lines.append(f"{name:24} vs {benchmark:6}: {agreement[name]:.3f} of {len(scored)} pairs agree")
        lines += [f"    {kind}: rewardhub {o}, official {t}: {n}" for (kind, o, t), n in sorted(disagreements.items())]
    with capsys.disabled():
        print(f"\nsql differential over {len(pairs)} pairs ({', '.join(kinds)}):\n" + "\n".join(lines))
    assert agreement["bird"] >= THRESHOLD and agreement["spider"] >= THRESHOLD, agreement
    if "bird (NeMo-Gym's)" in agreement:  # the released code of BIRD's rule, where nemo-gym is installed
        assert agreement["bird (NeMo-Gym's)"] >= THRESHOLD, agreement


def released_function(package: str, module: str, name: str) -> Any:
    """One function of a released module, its source unchanged, loaded alone: ``bird_sql/app.py``
    imports NeMo-Gym's server runtime (omegaconf, Ray), which the function never uses."""
    spec = find_spec(package)
    assert spec is not None and spec.submodule_search_locations
    tree = ast.parse((Path(next(iter(spec.submodule_search_locations))) / module).read_text())
    [node] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    namespace: dict[str, Any] = {"re": re, "Optional": Optional}
    exec(compile(ast.Module(body=[node], type_ignores=[]), f"{package}/{module}", "exec"), namespace)
    return namespace[name]


def written(query: str, wrong: str) -> list[tuple[str, str]]:
    """The ways a model writes its query: ``(shape, response)``."""
    return [
        ("fenced", f"```sql\n{query}\n```"),
        ("fence_upper", f"```SQL\n{query}\n```"),
        ("prose_around", f"Here is the query:\n```sql\n{query}\n```\nIt returns what was asked."),
        ("think_then_fence", f"<think>```sql\n{wrong}\n```</think>\n```sql\n{query}\n```"),
        ("fence_in_think_only", f"<think>```sql\n{query}\n```</think>\nDone."),
        ("right_fence_last", f"```sql\n{wrong}\n```\nNo, this:\n```sql\n{query}\n```"),
        ("right_fence_first", f"```sql\n{query}\n```\nOr:\n```sql\n{wrong}\n```"),
        ("bold_header", f"```sql\n**Final query**\n{query}\n```"),
        ("comment", f"```sql\n-- the answer\n{query}\n```"),
        ("semicolon", f"```sql\n{query};\n```"),
        ("one_line_fence", f"```sql {query}```"),
        ("two_statements", f"```sql\n{query}; SELECT 1\n```"),
        ("sqlite_fence", f"```sqlite\n{query}\n```"),
        ("bare_fence", f"```\n{query}\n```"),
        ("no_fence", query),
        ("unclosed", f"```sql\n{query}"),
        ("empty_fence", "```sql\n```"),
    ]


def test_bird_reads_the_response_as_nemo_gyms_bird_sql_reads_it(root: Path, monkeypatch, capsys) -> None:
    """The response, written the ways models write queries, through NeMo-Gym 0.7.0's ``bird_sql``
    reading (its ``extract_sql_from_response``: the last fenced ``sql`` block of the whole text, a
    bold header dropped; none: 0) and evaluation, and through ``sql`` with ``answer_format:
    sql_block``, ``strip_think: false``, ``semantics: bird``."""
    if find_spec("resources_servers") is None and not os.environ.get("CI"):
        pytest.skip("nemo-gym is not installed (.ci/run installs it)")
    extract_sql_from_response = released_function("resources_servers.bird_sql", "app.py", "extract_sql_from_response")
    monkeypatch.setenv(DATA_DIR_ENV, str(root))
    pairs = [pair for pair in corpus.corpus() if pair.only is None and not pair.kind.startswith("large")][::6]
    config = SqlVerifier.Config(answer_format="sql_block", strip_think=False, semantics="bird")
    agreed, total, verdicts = 0, 0, Counter()
    disagreements: Counter[str] = Counter()
    for index, pair in enumerate(pairs):
        wrong = pairs[(index + 1) % len(pairs)].predicted
        for shape, text in written(pair.predicted, wrong):
            query = extract_sql_from_response(text)
            theirs_ = "0" if query is None else nemo_gym_bird(root, corpus.Pair(pair.kind, pair.gold, query))
            try:
                result = VERIFIER.score(
                    Sample(response=text, reference={"db_id": corpus.DB, "query": pair.gold}), config
                )
                ours_ = str(int(result.score)) if result.status == "ok" else "error"
            except VerifierError:
                ours_ = "error"
            total += 1
            verdicts[theirs_] += 1
            if ours_ == theirs_:
                agreed += 1
            else:
                disagreements[f"{shape}: rewardhub {ours_}, NeMo-Gym {theirs_}"] += 1
    with capsys.disabled():
        print(f"\nsql (bird, sql_block) vs NeMo-Gym bird_sql 0.7.0, responses written {len(written('q', 'w'))} ways: "
              f"{agreed}/{total} agree ({agreed / total:.3f}); NeMo-Gym's verdicts {dict(verdicts)}")  # fmt: skip
        for what, count in disagreements.most_common():
            print(f"  DIFFER x{count}: {what}")
    assert agreed / total >= THRESHOLD, disagreements
    assert min(verdicts["0"], verdicts["1"]) > total // 10


def test_the_corpus_covers_the_behaviour_space() -> None:
    kinds = Counter(pair.kind.split(":")[0] for pair in corpus.corpus())
    expected = {"rewrite", "order_by", "duplicates", "distinct", "nulls", "column_swap", "floats"}
    expected |= {"statements", "spacing", "value_word", "empty", "test_suite", "large", "generated"}
    assert set(kinds) == expected
    assert all(n >= 2 for n in kinds.values()), kinds
