"""One spelling for one answer: the text clean-up done before an answer is parsed.

Models and users write the same answer many ways: ``\\dfrac`` or ``\\frac``, ``≤`` or ``\\le`` or
``<=``, ``**73**`` in markdown, ``$...$`` delimiters, ``2**(1/4)`` and ``sqrt(3)`` in Python
spelling, ``14{,}916`` with TeX thousands separators. :func:`normalize` maps all of them onto one
LaTeX-ish spelling so the parser sees one language.

It only rewrites notation; it never changes what an answer means (units, labels, percent signs
and degree marks are kept for the parser, which records them). Python spellings are *rewritten*
into LaTeX, never evaluated.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["normalize", "python_to_latex", "repair_escapes"]

_UNICODE = {
    "−": "-",
    "–": "-",
    "—": "-",
    "‐": "-",
    "×": r" \times ",
    "÷": r" \div ",
    "·": r" \cdot ",
    "⋅": r" \cdot ",
    "∞": r"\infty ",
    "∪": r" \cup ",
    "∩": r" \cap ",
    "≤": r" \le ",
    "≥": r" \ge ",
    "≠": r" \neq ",
    "⩽": r" \le ",
    "⩾": r" \ge ",
    "π": r"\pi ",
    "°": r"^\circ ",
    "√": r"\sqrt",
    "∈": r" \in ",
    "±": r" \pm ",
    "∓": r" \mp ",
    "²": "^2",
    "³": "^3",
    "¹": "^1",
    "⁴": "^4",
    "½": r"\frac{1}{2}",
    "¼": r"\frac{1}{4}",
    "¾": r"\frac{3}{4}",
    "⅓": r"\frac{1}{3}",
    "⅔": r"\frac{2}{3}",
    "…": r"\ldots",
    "’": "'",
    "，": ",",
    "：": ":",
    "；": ";",
    "（": "(",
    "）": ")",
    "\u00a0": " ",
    "\u202f": " ",
    "\u2009": " ",
    "\u200b": "",
    "∅": r"\emptyset ",
    "θ": r"\theta ",
    "α": r"\alpha ",
    "β": r"\beta ",
    "⟨": r"\langle ",
    "⟩": r"\rangle ",
    "∖": r" \setminus ",
    "→": r" \to ",
}
_UNICODE_TABLE = str.maketrans(_UNICODE)

_SUBSTITUTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\\(?:display|text|script)style", ""),
        (r"\\[hv]?phantom\s*\{[^{}]*\}|\\[hv]space\*?\s*\{[^{}]*\}", " "),  # invisible: never an answer
        (r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)\s*\.", ""),
        (r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big)(?![a-zA-Z])", ""),
        (r"\\\$", ""),
        (r"(?<!\\)\$", ""),
        (r"(?<!\\)\\[()\[\]]", " "),
        (r",\s*\\!\s*", ","),  # "11,\! 111": TeX's thousands separator
        (r"\\!", ""),
        (r"\\q?quad", " "),
        (r"(?<!\\)\\[,;: ]", " "),
        (r"~", " "),
        (r"\s*\{\s*,\s*\}\s*", ","),
        (r"\\[dtc]frac", r"\\frac"),
        (r"\\frac\s*(\d)\s*(\d)", r"\\frac{\1}{\2}"),
        (r"\\frac\s*(\\[a-zA-Z]+)\s*(\d|\\[a-zA-Z]+)", r"\\frac{\1}{\2}"),
        (r"\{(\d{1,3}),(\d{3})\}", r"{\1\2}"),  # "\frac{12}{5,525}": a braced number, not a list
        (r"\\frac\s*(\d)\s*\{", r"\\frac{\1}{"),
        (r"\\frac\s*\{([^{}]*)\}\s*(\d)", r"\\frac{\1}{\2}"),
        # TeX takes one token as an unbraced argument: \frac{1+a}c, \frac a{b+1}, \frac ab, \frac{1}\pi
        (r"\\frac\s*\{([^{}]*)\}\s*([A-Za-z]|\\[A-Za-z]+(?![A-Za-z])(?!\s*\{))", r"\\frac{\1}{\2}"),
        (r"\\frac\s*([A-Za-z])\s*\{", r"\\frac{\1}{"),
        (r"\\frac\s*(\d)\s*(\\[A-Za-z]+)(?![A-Za-z])(?!\s*\{)", r"\\frac{\1}{\2}"),
        (r"\\frac\s+([A-Za-z0-9])\s*([A-Za-z0-9])", r"\\frac{\1}{\2}"),
        # ordinal suffixes of an integer: 12^{th}, 12^{\text{th}}, 12^\text{th}, 1\text{st}, 2nd
        (
            r"(?<![\d.])(\d+)\s*(?:\^\s*\{\s*(?:st|nd|rd|th)\s*\}"
            r"|\^\s*\{\s*\\(?:text|textrm|mathrm)\s*\{\s*(?:st|nd|rd|th)\s*\}\s*\}"
            r"|(?:\^\s*)?\\(?:text|textrm|mathrm)\s*\{\s*(?:st|nd|rd|th)\s*\}"
            r"|(?:\^\s*)?(?:st|nd|rd|th)(?![A-Za-z]))",
            r"\1",
        ),
        (r"\\sqrt\s*(\d)", r"\\sqrt{\1}"),
        (r"\\[dt]binom", r"\\binom"),
        (r"\\(?:leqslant|leq|le)(?![a-zA-Z])|<=", r" \\le "),
        (r"\\(?:geqslant|geq|ge)(?![a-zA-Z])|>=", r" \\ge "),
        (r"\\(?:neq|ne)(?![a-zA-Z])|!=", r" \\neq "),
        (r"\\lt(?![a-zA-Z])", "<"),
        (r"\\gt(?![a-zA-Z])", ">"),
        (
            r"\\(?:mathrm|mathbf|mathit|mathsf|mathtt|textbf|textit|textnormal|textrm|textsf|texttt|mbox|hbox)\s*\{",
            r"\\text{",
        ),
        (r"\\operatorname\s*\{([A-Za-z]+)\}", r"\\\1"),
        (r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree", r"^\\circ"),
        (r"\\infin(?![a-zA-Z])|(?<![A-Za-z\\])infinity(?![A-Za-z])|(?<![A-Za-z\\])inf(?![A-Za-z])", r"\\infty "),
        (r"\\varnothing", r"\\emptyset"),
        (r"(?<=\d)\s*(?:degrees|degree|deg)(?![A-Za-z])|(?<=\d)\s*\\text\{\s*(?:degrees?|deg)\s*\}", r"^\\circ"),
        (r"[,;]?\s*\(?\s*(?:\\forall\s*)?[a-z]\s*\\in\s*\\mathbb\s*\{?[ZN]\}?\s*\)?\s*$", ""),
        (r"\\text\{\s*(?:for|where)\s+(?:some|any|all)?\s*(?:integers?|integral)\s*[a-z]?\s*\}.*$", ""),
        (r"\\(?:ldots|cdots|dots)", ""),
        (r"(?<=\d)\s*(?:percentage|percent|pct)(?![A-Za-z])", r"\\%"),
        (r"\\text\{\s*(?:percentage|percent|pct)\s*\}", r"\\%"),
        (r"(?<!\\)%", r"\\%"),
    )
)
_UNICODE_ROOT = re.compile(r"√\s*(\d+(?:\.\d+)?|[A-Za-z])")
_MARKDOWN_BOLD = re.compile(r"(?<![\w)])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![\w(])")
_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"(?:[\s.,;:]|\\\\|\\(?=$))+$")


@lru_cache(maxsize=16384)
def normalize(text: str) -> str:
    """The canonical spelling of one answer (see the module docstring for what it covers)."""
    text = repair_escapes(text)
    text = _UNICODE_ROOT.sub(_unicode_root, text)
    text = text.translate(_UNICODE_TABLE)
    text = _MARKDOWN_BOLD.sub(r"\1", text)  # before "**" is read as a power
    text = python_to_latex(text)
    for pattern, replacement in _SUBSTITUTIONS:
        text = pattern.sub(replacement, text)
    text = _SPACES.sub(" ", text).strip()
    text = _TRAILING.sub("", text)
    return text.strip("'\" ")


_PY_SQRT = re.compile(r"(?<![A-Za-z])\\?sqrt\s*\(")
_PY_CARET = re.compile(r"\^\s*\(")
_PY_EXP = re.compile(r"(?<![A-Za-z\\])exp\s*\(")
_PY_PI = re.compile(r"(?<![A-Za-z\\])pi(?![A-Za-z])")
_PY_FUNCS = re.compile(r"(?<![A-Za-z\\])(sin|cos|tan|log|ln)\s*(?=\()")


def _unicode_root(match: re.Match[str]) -> str:
    """``√12`` is the root of 12 (in LaTeX ``\\sqrt12`` would be ``\\sqrt{1}2``)."""
    return "\\sqrt{" + match.group(1) + "}"


# A JSON or Python string written with single backslashes turns "\\frac" into a form feed and "rac",
# "\\text" into a tab and "ext": the control character stands where the backslash and the letter were.
_ESCAPED_LETTER = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r"}
_MACROS = frozenset(
    "alpha approx angle arcsin arccos arctan ast "
    "boxed beta binom bar bmod bigcup bigcap bot because backslash "
    "text textbf textit textrm times theta tan tau to triangle top tfrac tbinom therefore tilde "
    "neq ne nu nabla not notin "
    "vec varphi vee varepsilon vartheta varnothing vdots "
    "frac forall "
    "right rightarrow rho rangle rfloor rceil rbrace rvert".split()
)
_DAMAGED = re.compile(r"\\?([\a\b\t\n\v\f\r])([A-Za-z]+)")


def repair_escapes(text: str) -> str:
    """Undo JSON/Python escapes that ate a LaTeX command's backslash (a form feed + ``rac`` is
    ``\\frac``; a backslash already before it is that command's own). Only where the letters that
    follow make a known command, so a real tab or line break stays what it is."""

    def restore(match: re.Match[str]) -> str:
        name = _ESCAPED_LETTER[match.group(1)] + match.group(2)
        return "\\" + name if name in _MACROS else match.group(0)

    return _DAMAGED.sub(restore, text)


def python_to_latex(text: str) -> str:
    """Rewrite Python/calculator spellings (``2**(1/4)``, ``sqrt(3)``, ``exp(x)``, ``pi``) as LaTeX.

    A purely textual rewrite with bracket matching: nothing is evaluated, so model text can never
    run (verl's prime_math once ``eval``-ed it: CVE-2026-6878).
    """
    text = text.replace("**", "^")
    for opener, new_open in ((_PY_SQRT, "\\sqrt{"), (_PY_CARET, "^{"), (_PY_EXP, "e^{")):
        for _ in range(20):  # nested calls: one level per pass
            rewritten = _rewrite_call(text, opener, new_open, "}")
            if rewritten == text:
                break
            text = rewritten
    if "\\" not in text:
        text = _PY_PI.sub(r"\\pi ", text)
        text = _PY_FUNCS.sub(r"\\\1", text)
    return text


def _rewrite_call(text: str, opener: re.Pattern[str], new_open: str, new_close: str) -> str:
    """Replace ``opener ... )`` by ``new_open ... new_close`` where the parenthesis matches."""
    out: list[str] = []
    position = 0
    while True:
        match = opener.search(text, position)
        if match is None:
            break
        close = _matching_paren(text, match.end() - 1)
        if close is None:
            break
        out.append(text[position : match.start()])
        out.append(new_open + text[match.end() : close] + new_close)
        position = close + 1
    out.append(text[position:])
    return "".join(out)


def _matching_paren(text: str, open_index: int) -> int | None:
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return None
