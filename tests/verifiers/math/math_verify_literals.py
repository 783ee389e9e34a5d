"""Math-Verify's own equivalence test literals, read from its released source, and our score on them.

    python tests/verifiers/math/math_verify_literals.py extract SDIST.tar.gz > tests/data/math_verify_0.9.0_literals.jsonl
    python tests/verifiers/math/math_verify_literals.py measure [--dev ../shared/data/math_equivalence_dev.jsonl] [--errors]
        [--baseline] [--reading math_verify]

``extract`` reads the sdist (``pip download --no-deps --no-binary :all: math-verify==0.9.0``) with
``ast``: every ``(gold, pred, expected, ...)`` row of a ``pytest.mark.parametrize`` whose test calls
``compare_strings`` (its tests/test_all.py helper) or ``verify(parse(gold), parse(pred))``, and the
literal ``compare_strings`` calls of ``test_precision``, with the settings that test passes
(``match_types``, ``precision``, ``strict``, ``allow_set_relation_comp``). One f-string row
(``f"{math.sqrt(17):.15f}"``) is evaluated with ``math`` only. Left out, as they test no
equivalence verdict: test_string_extraction.py (multiple-choice letters), test_configs.py,
test_gamma_func.py, test_timeout.py, test_raise_on_error.py, and the direct ``sympy_expr_eq`` calls
of ``test_precision``. Rows commented out in the source (test_yujianll.py's ``1/2^{99}`` against
``1/2^{98}``, which Math-Verify's chopped numeric comparison calls equal) are not literals: ast
never sees them, and ``math`` keeps them apart.

``measure`` scores the literals (and the dev set, when given) with the ``math`` verifier under
the settings each row's test used and prints precision and recall against the labels, and the
disagreements by test (``--errors``: each one); ``--baseline`` scores the literals with
math-verify itself too. CONVENTIONS lists the labels we deliberately do not follow, and why.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import sys
import tarfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
LITERALS = HERE.parents[2] / "data" / "math_verify_0.9.0_literals.jsonl"
VERSION = "0.9.0"

# Defaults of compare_strings (tests/test_all.py) and of verify(parse(...)) as test_yujianll.py calls it.
_COMPARE_DEFAULTS = {"match_types": ["latex", "expr"], "precision": 6, "strict": True, "allow_set_relation_comp": False}
_SETTINGS = ("match_types", "precision", "strict", "allow_set_relation_comp")


# Math-Verify's conventions that ``math`` deliberately does not follow under its default reading, by the
# literal that shows each; ``reading: "math_verify"`` asks for Math-Verify's verdict and follows them all.
CONVENTIONS = {
    "huggingface/Math-Verify@pypi-0.9.0/tests/test_all.py:138": (
        "'\\frac{1}{2} \\$ = \\frac{10}{9}' read as its right-hand side by Math-Verify; to us a chain of constants "
        "whose sides differ is a false equation that states nothing (falsepass's P15 paid '\\boxed{49 = 42}' for 42)"
    ),
    "huggingface/Math-Verify@pypi-0.9.0/tests/test_all.py:957": (
        "the gold is the Python literal \"$\\text{13}$\", whose \\t is a tab: Math-Verify reads the tab and 'ext{13}' "
        "(E*x*t*13, not 13); we repair an escape that ate a command's backslash and read \\text{13}, the number 13"
    ),
    "huggingface/Math-Verify@pypi-0.9.0/tests/test_yujianll.py:28": (
        "1 - 1/e equal to 1 + 1/e: Math-Verify's parser stops at \\frac{1}{\\mathrm{e}} and reads 1 on both sides, "
        "and its test asserts the match; they differ by 2/e, and we keep refusing"
    ),
}


# -- extract ---------------------------------------------------------------------------------------


def _value(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:  # the one f-string row: evaluated with math only, as the test module would
        return eval(compile(ast.Expression(node), "<literal>", "eval"), {"math": math, "__builtins__": {}})  # noqa: S307


def _call_settings(call: ast.Call) -> dict[str, Any]:
    return {k.arg: k.value for k in call.keywords if k.arg in _SETTINGS}


def _harness_call(function: ast.FunctionDef) -> tuple[str, ast.Call] | None:
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "compare_strings":
                return "math_verify.compare_strings", node
            if node.func.id == "verify" and all(
                isinstance(a, ast.Call) and getattr(a.func, "id", "") == "parse" for a in node.args[:2]
            ):
                return "math_verify.parse_verify", node
    return None


def _parametrize(function: ast.FunctionDef) -> tuple[list[str], list[ast.expr]] | None:
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "parametrize":
            names = [n.strip() for n in ast.literal_eval(decorator.args[0]).split(",")]
            rows = decorator.args[1]
            assert isinstance(rows, ast.List | ast.Tuple)
            return names, list(rows.elts)
    return None


def extract(sdist: Path) -> list[dict[str, Any]]:
    """Every labelled (gold, response) pair of the sdist's tests, with the settings its test used."""
    cases: list[dict[str, Any]] = []
    with tarfile.open(sdist) as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            parts = Path(member.name).parts
            if len(parts) != 3 or parts[1] != "tests" or not parts[2].startswith("test_"):
                continue
            source = archive.extractfile(member)
            assert source is not None
            tree = ast.parse(source.read().decode())
            for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
                cases.extend(_cases_of(function, f"tests/{parts[2]}"))
    return cases


def _cases_of(function: ast.FunctionDef, path: str) -> list[dict[str, Any]]:
    found = _harness_call(function)
    if found is None:
        return []
    harness, call = found
    source = f"huggingface/Math-Verify@pypi-{VERSION}/{path}"
    parametrized = _parametrize(function)
    cases = []
    if parametrized is None:  # test_precision: literal calls asserted == 1
        for node in ast.walk(function):
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
                inner = node.left
                if getattr(inner.func, "id", "") == "compare_strings":
                    settings = {**_COMPARE_DEFAULTS, **{k: _value(v) for k, v in _call_settings(inner).items()}}
                    row = {"gold": _value(inner.args[0]), "response": _value(inner.args[1])}
                    expected = _value(node.comparators[0])
                    cases.append(_case(row, expected, harness, function, settings, source, node.lineno))
        return cases
    names, rows = parametrized
    fixed = {k: _value(v) for k, v in _call_settings(call).items() if not isinstance(v, ast.Name)}
    passed = {k: v.id for k, v in _call_settings(call).items() if isinstance(v, ast.Name)}
    for row_node in rows:
        assert isinstance(row_node, ast.Tuple)
        row = dict(zip(names, (_value(e) for e in row_node.elts), strict=True))
        settings = {**_COMPARE_DEFAULTS, **fixed, **{k: row[v] for k, v in passed.items()}}
        expected = row.get("expected", row.get("result"))
        pair = {"gold": row["gold"], "response": row["pred"]}
        cases.append(_case(pair, expected, harness, function, settings, source, row_node.lineno))
    return cases


def _case(
    pair: dict[str, str],
    expected: Any,
    harness: str,
    function: ast.FunctionDef,
    settings: dict[str, Any],
    source: str,
    line: int,
) -> dict[str, Any]:
    return {
        **pair,
        "expected": bool(expected),
        "source": f"{source}:{line}",
        "harness": {"harness": harness, "test": function.name, **settings},
    }


# -- measure ---------------------------------------------------------------------------------------


def our_config(harness: dict[str, Any], reading: str = "rewardhub") -> dict[str, Any]:
    """The settings a row's test used, in the ``math`` config's terms (as bench/math_accuracy.py),
    under ``reading`` (``rewardhub`` or ``math_verify``)."""
    config: dict[str, Any] = {"reading": reading}
    if harness.get("harness", "").startswith("math_verify."):
        if "expr" not in harness.get("match_types", ["latex", "expr"]):
            config["bare_numbers"] = False
        if "precision" in harness:
            config["decimal_places"] = harness["precision"]
        if "strict" in harness:
            # strict=True still equates W(n) = 1 with W(x) = 1 (test_numina_cases) and keeps f(x) apart
            # from f(y) (test_strict): our "bound" renaming (math_verify: strict=True); strict=False renames anything
            config["rename_variables"] = "bound" if harness["strict"] else "always"
        if "allow_set_relation_comp" in harness:
            config["relations_as_sets"] = harness["allow_set_relation_comp"]
    return config


def score(cases: list[dict[str, Any]], reading: str = "rewardhub") -> list[dict[str, Any]]:
    """Our verdict on each case under ``reading``: ``{"match": bool, "result": ...}``."""
    from rewardhub.types import Sample
    from rewardhub.verifiers.math import MathVerifier

    verifier = MathVerifier()
    verdicts = []
    for case in cases:
        config = MathVerifier.Config(**our_config(case.get("harness", {}), reading))
        result = verifier.score(Sample(response=case["response"], reference=case["gold"]), config)
        verdicts.append({"match": result.status == "ok" and result.score == 1.0, "result": result})
    return verdicts


def baseline(cases: list[dict[str, Any]]) -> list[bool]:
    """Math-Verify's own verdicts, called as its tests call it (``compare_strings`` of
    tests/test_all.py, or ``verify(parse(gold), parse(pred))``), in this process."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    verdicts = []
    for case in cases:
        harness = case["harness"]
        try:
            if harness["harness"] == "math_verify.parse_verify":
                verdicts.append(bool(verify(parse(case["gold"]), parse(case["response"]))))
                continue
            targets = [
                LatexExtractionConfig(boxed_match_priority=0) if kind == "latex" else ExprExtractionConfig()
                for kind in harness["match_types"]
            ]
            gold, answer = parse(case["gold"], targets), parse(case["response"], targets)
            verdicts.append(
                bool(
                    verify(
                        gold,
                        answer,
                        float_rounding=harness["precision"],
                        strict=harness["strict"],
                        allow_set_relation_comp=harness["allow_set_relation_comp"],
                    )
                )
            )
        except Exception:  # noqa: BLE001 - the baseline's own failures count as "no"
            verdicts.append(False)
    return verdicts


def metrics(predicted: list[bool], labels: list[bool]) -> dict[str, float]:
    tp = sum(p and y for p, y in zip(predicted, labels, strict=True))
    fp = sum(p and not y for p, y in zip(predicted, labels, strict=True))
    fn = sum(y and not p for p, y in zip(predicted, labels, strict=True))
    return {
        "n": len(labels),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "agreement": sum(p == y for p, y in zip(predicted, labels, strict=True)) / len(labels),
    }


def line(name: str, m: dict[str, float]) -> str:
    return (
        f"{name}: {m['n']} cases  precision {m['precision']:.3f}  recall {m['recall']:.3f}  "
        f"agreement with labels {m['agreement']:.1%}  (tp {m['tp']}, fp {m['fp']}, fn {m['fn']})"
    )


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(row) for row in path.read_text().splitlines() if row.strip()]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("extract").add_argument("sdist", type=Path)
    measure = sub.add_parser("measure")
    measure.add_argument("--dev", type=Path)
    measure.add_argument("--errors", action="store_true")
    measure.add_argument("--baseline", action="store_true", help="also score the literals with math-verify itself")
    measure.add_argument(
        "--reading", choices=("rewardhub", "math_verify"), default="rewardhub", help="the math reading"
    )
    args = parser.parse_args(argv)
    if args.command == "extract":
        for case in extract(args.sdist):
            print(json.dumps(case, ensure_ascii=False))
        return 0
    literals = load(LITERALS)
    if args.baseline:
        print(
            line(
                "math-verify 0.9.0 itself on its test literals",
                metrics(baseline(literals), [c["expected"] for c in literals]),
            )
        )
    sets = [("Math-Verify 0.9.0 test literals", literals)]
    if args.dev:
        sets.append((f"dev set {args.dev.name} (tuned on)", load(args.dev)))
    for name, cases in sets:
        verdicts = score(cases, args.reading)
        labels = [bool(c["expected"]) for c in cases]
        print(line(f"{name}, reading {args.reading}", metrics([v["match"] for v in verdicts], labels)))
        wrong = [(c, v) for c, v, y in zip(cases, verdicts, labels, strict=True) if v["match"] != y]
        if args.errors:
            for case, verdict in wrong:
                details = verdict["result"].details
                print(
                    f"  expected {case['expected']!s:<5} {case['source']}\n    gold {case['gold'][:150]!r}\n"
                    f"    response {case['response'][-150:]!r}\n    reason {details.get('reason')} "
                    f"answer {str(details.get('answer'))[:80]!r} gold read {str(details.get('gold'))[:80]!r}"
                    f" {verdict['result'].error or ''}"
                )
        print("  disagreements by test:", dict(Counter(c["harness"]["test"] for c, _ in wrong)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
