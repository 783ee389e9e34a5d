"""A cheap pre-screen that refuses answers too expensive to parse or compare.

sympy evaluates integer powers, factorials and binomials eagerly while it parses, so
``9^{9^{9^{9}}}`` or ``(10^{10})!`` never comes back and ``2^{2^{2^{49}}}`` eats gigabytes before any
timeout fires. This module looks at the *text* of an answer, in one linear pass plus a tiny
arithmetic on magnitudes (logarithms, never the numbers themselves), and raises
:class:`TooComplex` before sympy sees it. It is a screen, not a proof: the execution pool's hard
timeout and memory limit catch whatever gets through.

What it refuses (every bound is a field of :class:`Limits`):

- more characters than ``max_chars`` in the part that would be parsed;
- brackets nested deeper than ``max_depth`` (the parser recurses per level);
- exponent towers of ``max_tower`` or more levels (``a^{b^{c}}`` is two);
- a power of a constant (numbers, ``\\frac``, ``\\sqrt``, ``\\pi``, ``e``) whose exact value could
  have more than ``max_digits`` digits, counted as the *height* of the base times the exponent:
  the digits of numerator and denominator together (``(1/2)^{10^{9}}`` has a 300-million-digit
  denominator, though its value is tiny), a root counted as its radicand. ``(2-\\sqrt{3})^{2016}``
  (at most about 1,700 digits) passes: sympy leaves such a power unexpanded, and ``closed_form``
  decides it in bounded time (it used to be refused as a "power of a non-number");
- a power of anything else (``x^{1000000}``) with an exponent above ``max_symbolic_exponent``:
  expanding it is where sympy would hang;
- a factorial of a number above ``max_factorial``; a binomial with more than ``max_digits`` digits.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["Limits", "TooComplex", "screen"]


class TooComplex(ValueError):
    """The answer is too expensive to judge; ``reason`` says which bound it broke."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    max_chars: int = 1000
    max_depth: int = 60
    max_tower: int = 3
    max_digits: int = 100_000
    max_symbolic_exponent: int = 1000
    max_factorial: int = 20_000


_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")", "]", "}"}
_BINOM = re.compile(r"\\[dt]?binom\s*")
_NUMERIC_CHARS = re.compile(r"^(?:[\d\s.+\-*/^(){}!]|\\cdot|\\times|\\left|\\right)+$")
_CONSTANT_CHARS = re.compile(r"^(?:[\d\s.+\-*/^(){}!]|\\cdot|\\times|\\left|\\right|\\sqrt|\\frac|\\pi)+$")
_TOKENS = re.compile(r"\d+\.?\d*|\.\d+|[+\-*/^(){}!]|\\cdot|\\times|\\sqrt|\\frac|\\pi")
_GAMMA = re.compile(r"\\Gamma\s*(?=[({])")
_SCIENTIFIC = re.compile(r"\d[eE]\s*\+?(\d+)")


def screen(text: str, limits: Limits = Limits()) -> None:
    """Raise :class:`TooComplex` if ``text`` is over any of ``limits``; return quietly otherwise."""
    if len(text) > limits.max_chars:
        raise TooComplex(f"answer has {len(text)} characters (limit {limits.max_chars})")
    _check_depth(text, limits.max_depth)
    _check_powers(text, limits)
    _check_factorials(text, limits)
    _check_binomials(text, limits)
    for match in _SCIENTIFIC.finditer(text):
        if int(match.group(1)[:12]) > limits.max_digits:
            raise TooComplex(f"number with more than {limits.max_digits} digits")


def _check_depth(text: str, max_depth: int) -> None:
    depth = 0
    for char in text:
        if char in _OPEN:
            depth += 1
            if depth > max_depth:
                raise TooComplex(f"brackets nested deeper than {max_depth}")
        elif char in _CLOSE:
            depth = max(0, depth - 1)


def _group_end(text: str, start: int) -> int:
    """Index just past the bracket group opening at ``start`` (or the end of text if unclosed)."""
    opener = text[start]
    closer = _OPEN[opener]
    depth = 0
    for i in range(start, len(text)):
        if text[i] == opener:
            depth += 1
        elif text[i] == closer:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _exponent_span(text: str, caret: int) -> tuple[int, int]:
    """The exponent after the ``^`` at ``caret``: a bracket group, a digit run or one token."""
    i = caret + 1
    while i < len(text) and text[i] == " ":
        i += 1
    if i >= len(text):
        return i, i
    if text[i] in _OPEN:
        return i, _group_end(text, i)
    if text[i].isdigit():
        j = i
        while j < len(text) and (text[j].isdigit() or text[j] == "."):
            j += 1
        return i, j
    if text[i] == "\\":
        match = re.match(r"\\[A-Za-z]+", text[i:])
        return i, i + (len(match.group(0)) if match else 1)
    return i, i + 1


def _tower_height(text: str) -> int:
    """Levels of nested exponents in ``text``: ``x`` is 0, ``x^2`` is 1, ``a^{b^c}`` is 2."""
    height = 0
    i = 0
    while i < len(text):
        if text[i] == "^":
            start, end = _exponent_span(text, i)
            height = max(height, 1 + _tower_height(text[start:end]))
            i = max(end, i + 1)
        else:
            i += 1
    return height


def _base_before(text: str, caret: int) -> str:
    """The base of the power whose ``^`` is at ``caret``: a bracket group, a number or a token."""
    j = caret - 1
    while j >= 0 and text[j] == " ":
        j -= 1
    if j < 0:
        return ""
    if text[j] in _CLOSE:
        opener = {")": "(", "]": "[", "}": "{"}[text[j]]
        depth = 0
        for k in range(j, -1, -1):
            if text[k] == text[j]:
                depth += 1
            elif text[k] == opener:
                depth -= 1
                if depth == 0:
                    return text[k : j + 1]
        return text[: j + 1]
    if text[j].isdigit() or text[j] == ".":
        k = j
        while k >= 0 and (text[k].isdigit() or text[k] == "."):
            k -= 1
        return text[k + 1 : j + 1]
    if text[j].isalpha():  # a command such as \pi is one token
        k = j
        while k >= 0 and text[k].isalpha():
            k -= 1
        if k >= 0 and text[k] == "\\":
            return text[k : j + 1]
    return text[j]


def _check_powers(text: str, limits: Limits) -> None:
    if "^" not in text and "**" not in text:
        return
    text = text.replace("**", "^")
    if _tower_height(text) >= limits.max_tower:
        raise TooComplex(f"exponent tower of {limits.max_tower} or more levels")
    for caret in (i for i, char in enumerate(text) if char == "^"):
        start, end = _exponent_span(text, caret)
        exponent = _log10_magnitude(text[start:end])
        if exponent is None:
            continue  # a symbolic exponent: harmless below the tower limit
        base_text = _base_before(text, caret)
        base = 0.5 if base_text == "e" else _log10_height(base_text)  # e^{2016} is exp(2016): never expanded
        exponent_value = 10.0**exponent if exponent < 300 else math.inf
        if base is None:
            if exponent_value > limits.max_symbolic_exponent:
                raise TooComplex(f"power of a non-constant with exponent above {limits.max_symbolic_exponent}")
        elif exponent_value * max(base, 0.0) > limits.max_digits:
            raise TooComplex(f"power with more than {limits.max_digits} digits")


def _check_factorials(text: str, limits: Limits) -> None:
    bangs = [i for i, char in enumerate(text) if char == "!" and text[i + 1 : i + 2] != "="]  # "!=" is a relation
    for position in bangs:
        magnitude = _log10_magnitude(_base_before(text, position))
        if magnitude is not None and magnitude > math.log10(limits.max_factorial):
            raise TooComplex(f"factorial of a number above {limits.max_factorial}")
    for match in _GAMMA.finditer(text):
        magnitude = _log10_magnitude(text[match.end() : _group_end(text, match.end())])
        if magnitude is not None and magnitude > math.log10(limits.max_factorial):
            raise TooComplex(f"Gamma of a number above {limits.max_factorial}")


def _check_binomials(text: str, limits: Limits) -> None:
    for match in _BINOM.finditer(text):
        i = match.end()
        if i >= len(text) or text[i] != "{":
            continue
        first_end = _group_end(text, i)
        if first_end >= len(text) or text[first_end] != "{":
            continue
        second_end = _group_end(text, first_end)
        n, k = _log10_magnitude(text[i:first_end]), _log10_magnitude(text[first_end:second_end])
        if n is None or k is None:
            continue
        if n > 15:
            raise TooComplex("binomial of numbers too large to evaluate")
        digits = _log10_binomial(10.0**n, 10.0**k)
        if digits > limits.max_digits or 10.0**n > 10 * limits.max_digits:
            raise TooComplex(f"binomial with more than {limits.max_digits} digits")


def _log10_binomial(n: float, k: float) -> float:
    k = min(k, n - k)
    if k <= 0:
        return 0.0
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(10)


def _log10_magnitude(text: str) -> float | None:
    """log10 of the absolute value of a purely numeric expression, or None if not numeric.

    Evaluated in log space with a tiny recursive-descent parser over ``+ - * / ^``, so a tower
    never materialises; the result is an upper bound good enough for a screen.
    """
    return _parse_log10(text, _NUMERIC_CHARS, height=False)


def _log10_height(text: str) -> float | None:
    """An upper bound on log10 of the *height* of a constant expression (numbers, ``\\frac``,
    ``\\sqrt``, ``\\pi``), or None if it is not one: the digits its exact value may need, numerator
    and denominator together (a sum of fractions multiplies denominators, a quotient counts both)."""
    return _parse_log10(text, _CONSTANT_CHARS, height=True)


def _parse_log10(text: str, allowed: re.Pattern[str], height: bool) -> float | None:
    text = text.strip()
    if not text or not allowed.match(text) or not any(c.isdigit() or c == "\\" for c in text):
        return None
    tokens = _TOKENS.findall(text.replace("\\left", "").replace("\\right", ""))
    parser = _MagnitudeParser(tokens, height)
    try:
        value = parser.sum()
    except (IndexError, ValueError, OverflowError):
        return None
    return value if parser.done() else None


class _MagnitudeParser:
    """``sum := product (('+'|'-') product)*``; ``product := power (('*'|'/') power)*``;
    ``power := atom ('^' power)?``; ``atom := number | group | \\sqrt group | \\frac group group | \\pi``.

    Values are log10 magnitudes (sums take the larger term, a quotient is at most its numerator),
    or, with ``height``, log10 heights (sums and products add the heights of their parts).
    """

    def __init__(self, tokens: list[str], height: bool = False) -> None:
        self.tokens = tokens
        self.height = height
        self.i = 0

    def done(self) -> bool:
        return self.i == len(self.tokens)

    def _peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _starts_atom(self) -> bool:
        """``4\\sqrt{3}``, ``2(1+\\sqrt{5})``: a product written without a sign."""
        token = self._peek()
        return token is not None and (token[0].isdigit() or token in ("(", "{", "\\sqrt", "\\frac", "\\pi"))

    def sum(self) -> float:
        value = self.product()
        while self._peek() in ("+", "-"):
            self.i += 1
            term = self.product()
            value = (value + term if self.height else max(value, term)) + math.log10(2)
        return value

    def product(self) -> float:
        value = self.power()
        while self._peek() in ("*", "/", "\\cdot", "\\times") or (self.height and self._starts_atom()):
            op = self.tokens[self.i]
            if not self._starts_atom():
                self.i += 1
            right = self.power()
            value = value + right if op != "/" or self.height else value  # a quotient is at most its numerator
        return value

    def power(self) -> float:
        base = self.atom()
        while self._peek() == "!":  # n! has about n log10 n digits
            self.i += 1
            value = 10.0**base if base < 300 else math.inf
            base = value * math.log10(max(value, 2.0))
        if self._peek() == "^":
            self.i += 1
            exponent = self.power()
            exponent_value = 10.0**exponent if exponent < 300 else math.inf
            return base * exponent_value if base > 0 else 0.0
        return base

    def atom(self) -> float:
        token = self._peek()
        if token is None:
            raise ValueError("unexpected end")
        self.i += 1
        if token in ("(", "{"):
            value = self.sum()
            if self._peek() not in (")", "}"):
                raise ValueError("unbalanced")
            self.i += 1
            return value
        if token in ("-", "+"):
            return self.atom()
        if token == "\\pi":
            return 0.5  # sympy keeps pi symbolic: its powers cost nothing
        if token == "\\sqrt":
            return self.atom()  # the radicand's height bounds the root's
        if token == "\\frac":
            numerator = self.atom()
            denominator = self.atom()
            return numerator + denominator if self.height else numerator
        number = float(token)
        if self.height and "." in token:  # 2.5 is 25/10
            return math.log10(max(number, 1.0)) + len(token.split(".", 1)[1])
        return math.log10(number) if number > 1 else 0.0
