"""The oracle of the SQL differential test: the two benchmarks' official scoring, transcribed.

Neither script is released on a package registry (no ``test-suite-sql-eval``, ``spider-eval``,
``bird-eval``, ``text2sql-eval`` or ``sql-eval`` distribution exists), so this is a transcription,
not the released code: it follows the official files line by line, with their names, and keeps
their quirks. It is kept apart from rewardhub's own code (``verifiers/sql``), which was written
from the same reading and must agree with it on the generated corpus.

- **Spider**: taoyds/test-suite-sql-eval at commit e97acc546ecbee8fa27fa8dbf025ef61493a876c
  (2022-08-02): ``exec_eval.py`` (``permute_tuple``, ``unorder_row``, ``quick_rej``,
  ``multiset_eq``, ``get_constraint_permutation``, ``result_eq``, ``replace_cur_year``,
  ``get_cursor_from_path``, ``exec_on_db_``, ``postprocess``, ``eval_exec_match`` with
  ``plug_value=False``), ``parse.py`` (``remove_distinct``, on sqlparse as the original is) and
  the lines of ``evaluation.py``'s ``evaluate`` that reach the execution match
  (``p_str.replace("value", "1")``, ``db = os.path.join(db_dir, db, db + ".sqlite")``).
  Left out: asyncio's 60 s timeout wrapper (every corpus query finishes in milliseconds) and
  ``plug_value`` (off by default).
- **BIRD**: AlibabaResearch/DAMO-ConvAI ``bird/llm/src/evaluation.py``, ``execute_sql`` and
  ``execute_model`` as in the dev-set release (``set(predicted_res) == set(ground_truth_res)``;
  any exception scores 0). Left out: ``func_timeout``'s 30 s limit and the process pool.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
from collections import defaultdict
from itertools import product

import sqlparse

# --- Spider: exec_eval.py ----------------------------------------------------------------------


def permute_tuple(element, perm):
    assert len(element) == len(perm)
    return tuple([element[i] for i in perm])


def unorder_row(row):
    return tuple(sorted(row, key=lambda x: str(x) + str(type(x))))


def quick_rej(result1, result2, order_matters):
    s1 = [unorder_row(row) for row in result1]
    s2 = [unorder_row(row) for row in result2]
    if order_matters:
        return s1 == s2
    else:
        return set(s1) == set(s2)


def multiset_eq(l1, l2):
    if len(l1) != len(l2):
        return False
    d = defaultdict(int)
    for e in l1:
        d[e] = d[e] + 1
    for e in l2:
        d[e] = d[e] - 1
        if d[e] < 0:
            return False
    return True


def get_constraint_permutation(tab1_sets_by_columns, result2):
    num_cols = len(result2[0])
    perm_constraints = [{i for i in range(num_cols)} for _ in range(num_cols)]
    if num_cols <= 3:
        return product(*perm_constraints)

    for _ in range(20):
        random_tab2_row = random.choice(result2)

        for tab1_col in range(num_cols):
            for tab2_col in set(perm_constraints[tab1_col]):
                if random_tab2_row[tab2_col] not in tab1_sets_by_columns[tab1_col]:
                    perm_constraints[tab1_col].remove(tab2_col)
    return product(*perm_constraints)


def result_eq(result1, result2, order_matters):
    if len(result1) == 0 and len(result2) == 0:
        return True

    if len(result1) != len(result2):
        return False

    num_cols = len(result1[0])

    if len(result2[0]) != num_cols:
        return False

    if not quick_rej(result1, result2, order_matters):
        return False

    tab1_sets_by_columns = [{row[i] for row in result1} for i in range(num_cols)]

    for perm in get_constraint_permutation(tab1_sets_by_columns, result2):
        if len(perm) != len(set(perm)):
            continue
        if num_cols == 1:
            result2_perm = result2
        else:
            result2_perm = [permute_tuple(element, perm) for element in result2]
        if order_matters:
            if result1 == result2_perm:
                return True
        else:
            if set(result1) == set(result2_perm) and multiset_eq(result1, result2_perm):
                return True
    return False


def replace_cur_year(query):
    return re.sub(r"YEAR\s*\(\s*CURDATE\s*\(\s*\)\s*\)\s*", "2020", query, flags=re.IGNORECASE)


def get_cursor_from_path(sqlite_path):
    connection = sqlite3.connect(sqlite_path)
    connection.text_factory = lambda b: b.decode(errors="ignore")
    cursor = connection.cursor()
    return cursor


def exec_on_db_(sqlite_path, query):
    query = replace_cur_year(query)
    cursor = get_cursor_from_path(sqlite_path)
    try:
        cursor.execute(query)
        result = cursor.fetchall()
        cursor.close()
        cursor.connection.close()
        return "result", result
    except Exception as e:
        cursor.close()
        cursor.connection.close()
        return "exception", e


def postprocess(query):
    query = query.replace("> =", ">=").replace("< =", "<=").replace("! =", "!=")
    return query


# --- Spider: parse.py --------------------------------------------------------------------------


def remove_distinct(s):
    toks = [t.value for t in list(sqlparse.parse(s)[0].flatten())]
    return "".join([t for t in toks if t.lower() != "distinct"])


# --- Spider: exec_eval.eval_exec_match (plug_value=False) ---------------------------------------


def eval_exec_match(db, p_str, g_str, keep_distinct=False):
    p_str, g_str = postprocess(p_str), postprocess(g_str)
    if not keep_distinct:
        p_str = remove_distinct(p_str)
        g_str = remove_distinct(g_str)

    order_matters = "order by" in g_str.lower()

    db_dir = os.path.dirname(db)
    db_paths = [os.path.join(db_dir, basename) for basename in os.listdir(db_dir) if ".sqlite" in basename]

    preds = [p_str]
    for pred in preds:
        pred_passes = 1
        for db_path in db_paths:
            g_flag, g_denotation = exec_on_db_(db_path, g_str)
            p_flag, p_denotation = exec_on_db_(db_path, pred)

            assert g_flag != "exception", "gold query %s has error on database file %s" % (g_str, db_path)  # noqa: UP031

            if p_flag == "exception":
                pred_passes = 0
            elif not result_eq(g_denotation, p_denotation, order_matters=order_matters):
                pred_passes = 0
            if pred_passes == 0:
                break

        if pred_passes == 1:
            return 1

    return 0


# --- Spider: evaluation.evaluate, the lines that reach the execution match ----------------------


def spider_exec_score(db_dir, db_name, p_str, g_str, keep_distinct=False):
    p_str = p_str.replace("value", "1")
    db = os.path.join(db_dir, db_name, db_name + ".sqlite")
    return eval_exec_match(db=db, p_str=p_str, g_str=g_str, keep_distinct=keep_distinct)


# --- BIRD: evaluation.py ------------------------------------------------------------------------


def execute_sql(predicted_sql, ground_truth, db_path):
    conn = sqlite3.connect(db_path)
    cursor = conn.cursor()
    cursor.execute(predicted_sql)
    predicted_res = cursor.fetchall()
    cursor.execute(ground_truth)
    ground_truth_res = cursor.fetchall()
    res = 0
    if set(predicted_res) == set(ground_truth_res):
        res = 1
    return res


def execute_model(predicted_sql, ground_truth, db_place):
    try:
        res = execute_sql(predicted_sql, ground_truth, db_place)
    except Exception:
        res = 0
    return res


def bird_exec_score(db_root_path, db_name, predicted_sql, ground_truth):
    return execute_model(predicted_sql, ground_truth, db_root_path + db_name + "/" + db_name + ".sqlite")
