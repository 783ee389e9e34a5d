"""The pre-screen refuses what would hang sympy, and lets real answers through; scoring the known
killers returns promptly (checked in a subprocess, so a regression cannot hang the test run)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from rewardhub.verifiers.math.screen import Limits, TooComplex, screen

KILLERS = [
    "9^{9^{9^{9}}}",
    "(10^{10})!",
    "2^{2^{2^{49}}}",
    "\\binom{1000000}{500000}",
    "(" * 20_000 + "1" + ")" * 20_000,
    "\\int_0^\\infty e^{-x^{1000000}} dx",
    "\\dfrac{5^{(5^{(5^{(5^5)})}-4)}-5}{16}",  # math-verify issue 65
    "10^{10^{10}}",
    "(10!)!",
    "\\Gamma(10^{10})",
    "1e100000000",
    "(1/2)^{1000000000}",  # a tiny value with a 300-million-digit denominator
    "\\sqrt{3}^{1000000000}",  # sympy evaluates it to 3^{500000000}
    "(2+\\sqrt{3})^{10^{9}}",
]


@pytest.mark.parametrize("text", KILLERS, ids=lambda t: t[:30])
def test_killers_are_too_complex(text):
    with pytest.raises(TooComplex):
        screen(text, Limits(max_chars=200_000))


@pytest.mark.parametrize(
    "text",
    [
        "2024^{4046}",
        "\\frac{1}{2004!}",
        "\\binom{2026}{1013}",
        "2^{2^{10}}",
        "3^{2025}",
        "e^{-x^2}",
        "\\sum_{k=0}^{n-1} F_k F_{n-k-1}",
        "\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{15+2\\sqrt{33}}",
        "1.5 \\times 10^{3}",
        "x^{1000}",
        "((((1))))",
        "(2-\\sqrt{3})^{2016}",  # sympy leaves it unexpanded; closed_form decides it
        "\\frac{(3-\\sqrt{3})(2-\\sqrt{3})^{2016}+(3+\\sqrt{3})(2+\\sqrt{3})^{2016}}{6}",
        "(7+4\\sqrt{3})^{1008}",
        "\\pi^{2016}",
    ],
)
def test_real_answers_pass(text):
    screen(text)


def test_each_bound_names_itself():
    with pytest.raises(TooComplex, match="characters"):
        screen("1" * 2000, Limits(max_chars=1000))
    with pytest.raises(TooComplex, match="nested"):
        screen("(" * 70 + ")" * 70)
    with pytest.raises(TooComplex, match="tower"):
        screen("a^{b^{c^{d}}}")
    with pytest.raises(TooComplex, match="factorial"):
        screen("100000!")


def test_every_killer_returns_promptly_when_scored():
    """In a subprocess with a generous hang guard: each killer, as gold and as answer, comes back
    as status error "too complex" (or a plain 0) instead of hanging or eating memory."""
    program = textwrap.dedent(
        """
        import json, sys
        from rewardhub.types import Sample
        from rewardhub.verifiers.math.verifier import MathVerifier
        verifier = MathVerifier()
        out = []
        for killer in json.loads(sys.stdin.read()):
            for gold, response in ((killer, "\\\\boxed{1}"), ("1", "\\\\boxed{" + killer + "}"), ("1", killer)):
                r = verifier.score(Sample(response=response, reference=gold), MathVerifier.Config())
                out.append([r.status, r.score, r.details.get("reason")])
        print(json.dumps(out))
        """
    )
    killers = [*KILLERS, "x" * 100_000, "The answer is " + "9" * 100_000]
    done = subprocess.run(
        [sys.executable, "-c", program], input=json.dumps(killers), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout)
    assert len(results) == 3 * len(killers)
    for status, score, reason in results:
        assert (status, reason) == ("error", "too_complex") or (status == "ok" and score == 0.0)
    assert sum(status == "error" for status, _, _ in results) >= 2 * len(killers)
