"""One spelling per answer: notation is rewritten, meaning is kept, nothing is evaluated."""

from __future__ import annotations

import pytest

from rewardhub.verifiers.math.normalize import normalize, python_to_latex


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$\\dfrac{1}{3} $", "\\frac{1}{3}"),
        ("\\tfrac12", "\\frac{1}{2}"),
        ("\\frac94\\pi", "\\frac{9}{4}\\pi"),
        ("\\sqrt 2+\\sqrt 5", "\\sqrt{2}+\\sqrt{5}"),
        ("**73**", "73"),
        ("x**2 + y**2", "x^2 + y^2"),
        ("\\left( 3, \\frac{\\pi}{2} \\right)", "( 3, \\frac{\\pi}{2} )"),
        ("14 {, }916", "14,916"),
        ("11,\\! 111,\\! 100", "11,111,100"),
        ("\\$16,\\!386.20", "16,386.20"),
        ("x \\geq 5", "x \\ge 5"),
        ("x >= 5", "x \\ge 5"),
        ("x \\neq 3", "x \\neq 3"),
        ("28 pct", "28\\%"),
        ("10%", "10\\%"),
        ("74°", "74^\\circ"),
        ("90 degrees", "90^\\circ"),
        ("√12", "\\sqrt{12}"),
        ("[2, ∞)", "[2, \\infty )"),
        ("185\\", "185"),
        ("x_{1}=10,\\quadx_{2}=3", "x_{1}=10, x_{2}=3"),
        ("x = k\\pi, k \\in \\mathbb{Z}", "x = k\\pi"),
        ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}"),
    ],
)
def test_normalize(text, expected):
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2**(1/4)", "2^{1/4}"),
        ("-1 + sqrt(3)", "-1 + \\sqrt{3}"),
        ("sqrt(sqrt(2))", "\\sqrt{\\sqrt{2}}"),
        ("4\\sqrt(2)", "4\\sqrt{2}"),
        ("exp(2x)", "e^{2x}"),
        ("2^((1+x)/2)", "2^{(1+x)/2}"),
    ],
)
def test_python_spellings_become_latex(text, expected):
    assert python_to_latex(text) == expected


def test_code_is_rewritten_never_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    normalize("__import__('os').system('touch marker') or 0")
    normalize("open('marker', 'w').write('x')")
    assert not (tmp_path / "marker").exists()
