"""Mutants of a reference solution: one site changed, a valid program, different from the reference, seeded.

Pure: sources and trees only. A mutant runs nowhere but in the sandbox (tests/audit/test_weak_tests.py).
"""

from __future__ import annotations

import ast

import pytest

from rewardhub.audit.mutation import KINDS, Site, apply_site, mutants, sites

# one table row per kind: a reference, and the one line its mutant must hold instead of the original
KIND_TABLE = [
    ("cmp", "def f(x):\n    return x < 3\n", "    return x <= 3"),
    ("arith", "def f(x):\n    return x + 3\n", "    return x - 3"),
    ("bool", "def f(a, b):\n    return a and b\n", "    return a or b"),
    ("boolconst", "def f(*args):\n    return True\n", "    return False"),
    ("intconst", "def f(x):\n    return x * 7\n", "    return x * 8"),
    ("return_none", "def f(x):\n    return x\n", "    return None"),
    ("const_down", "def f(x):\n    return x > 0\n", "    return x > -1"),
    ("negate", "def f(x):\n    if x:\n        return 1\n    return 2\n", "    if not (x):"),
    ("unary_drop", "def f(x):\n    return not x\n", "    return x"),
    ("minmax", "def f(xs):\n    return max(xs)\n", "    return min(xs)"),
    ("off_by_one", "def f(n):\n    return [i for i in range(n)]\n", "    return [i for i in range(n - 1)]"),
    ("slice_bound", "def f(xs):\n    return xs[:2]\n", "    return xs[:2 - 1]"),
    ("loop_once", "def f(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n", "        break"),
]


def test_the_table_covers_every_kind() -> None:
    assert sorted(kind for kind, _, _ in KIND_TABLE) == sorted(KINDS)


@pytest.mark.parametrize(("kind", "reference", "line"), KIND_TABLE, ids=[row[0] for row in KIND_TABLE])
def test_each_kind_makes_a_valid_different_program_changed_at_one_site(kind: str, reference: str, line: str) -> None:
    made = [m for m in mutants(reference, limit=50) if m.kind == kind]
    assert made, f"no {kind} mutant of {reference!r}"
    mutant = next(m for m in made if line in m.source.splitlines())
    ast.parse(mutant.source)  # valid Python
    assert ast.dump(ast.parse(mutant.source)) != ast.dump(ast.parse(reference))
    changed = [row for row in mutant.diff.splitlines() if row[:1] in "+-" and row[:3] not in ("+++", "---")]
    assert f"+{line}" in changed
    assert len(changed) <= 2  # one line replaced (or, for loop_once, one line added)


def test_the_mutant_keeps_the_references_comments_and_layout() -> None:
    reference = "def f(x):\n    # the edge case\n    y = x * 2  # double\n\n    return y + 1\n"
    for mutant in mutants(reference, limit=50):
        assert "# the edge case" in mutant.source and "# double" in mutant.source
        assert len(mutant.source.splitlines()) in (len(reference.splitlines()), len(reference.splitlines()) + 1)


def test_an_operator_that_binds_less_tightly_is_parenthesised() -> None:
    reference = "def f(a, b):\n    return a / b ** 2\n"
    (pow_site,) = [s for s in sites(reference) if s.kind == "arith" and _node_text(reference, s) == "b ** 2"]
    mutant = apply_site(reference, pow_site)
    assert mutant is not None and "a / (b * 2)" in mutant
    # the tree is the division of a by (b * 2), not (a / b) * 2 (mutants are never run here: only in the sandbox)
    returned = ast.parse(mutant).body[0].body[0].value  # type: ignore[attr-defined]
    assert ast.dump(returned) == ast.dump(ast.parse("a / (b * 2)", mode="eval").body)


def test_a_negative_constant_is_spliced_as_the_minus_python_reads() -> None:
    reference = "def f(balance):\n    return balance < 0\n"
    (mutant,) = [m for m in mutants(reference) if m.kind == "const_down"]
    assert mutant.source == "def f(balance):\n    return balance < -1\n"


def test_nothing_inside_an_f_string_is_touched() -> None:
    reference = "def f(x):\n    return f'{x + 1:>{3}}'\n"
    assert [site.kind for site in sites(reference)] == ["return_none"]  # the return itself, nothing inside


def test_a_source_that_does_not_parse_has_no_mutants() -> None:
    assert mutants("def f(:\n") == []


def test_the_same_seed_gives_the_same_mutants_and_another_seed_another_order() -> None:
    reference = "def f(x):\n" + "".join(f"    x = x + {i}\n" for i in range(1, 30)) + "    return x\n"
    first = mutants(reference, limit=6, seed=0)
    assert first == mutants(reference, limit=6, seed=0)
    assert [m.source for m in first] != [m.source for m in mutants(reference, limit=6, seed=1)]


def test_the_cap_is_shared_across_kinds_and_never_passed() -> None:
    reference = "def f(x, y):\n" + "".join(f"    x = x + {i}\n" for i in range(1, 30)) + "    return x < y\n"
    made = mutants(reference, limit=5)
    assert len(made) == 5
    assert {"cmp", "return_none"} <= {m.kind for m in made}  # the single cmp and return sites are not crowded out
    assert len({m.source for m in made}) == 5


def test_two_sites_that_make_one_program_count_once() -> None:
    reference = "def f(x):\n    return x + 1\n"
    made = mutants(reference, limit=50)
    assert len({ast.dump(ast.parse(m.source)) for m in made}) == len(made)


def _node_text(source: str, site: Site) -> str:
    return ast.unparse(list(ast.walk(ast.parse(source)))[site.index])
