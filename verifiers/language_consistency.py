"""``language_consistency``: is the response written in one language, the expected one?

Practitioners name language mixing (an English question answered with Chinese spans) as a sign of
unstable RL training; DeepSeek-R1 added a language-consistency reward for it. This verifier
detects the Unicode *script* of every letter of the response and scores the fraction of letters
written in the expected scripts, in [0, 1] (or 1/0 against ``threshold``); ``details["scripts"]``
has the fraction of each script found.

What is not language is removed first: fenced and inline code, LaTeX math and commands, URLs and
XML-like tags (``<think>``), and, by default, isolated single letters of alphabetic scripts
(variables such as *x* or *π*). The expected scripts come from ``language`` (an ISO 639-1 code
such as ``zh`` or a script name such as ``cyrillic`` or ``cjk``), else from the prompt (every
script with at least ``prompt_min_share`` of its letters), else from the response's own dominant
script, so that without any hint it still measures mixing. Japanese brings Han and both kana,
Korean brings Hangul and Han.

It judges scripts, not languages: English and French (both Latin) are indistinguishable, and it
does not judge fluency or correctness.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .text import strip_think

__all__ = ["LanguageConsistencyVerifier", "ScriptCounts", "count_scripts", "expected_scripts", "strip_non_language"]

Source = Literal["config", "prompt", "response"]

# (first code point, last code point, script); letters outside every range count as "other".
_RANGES = sorted([
    (0x0041, 0x024F, "latin"), (0x1E00, 0x1EFF, "latin"), (0xFF21, 0xFF5A, "latin"),
    (0x0370, 0x03FF, "greek"), (0x1F00, 0x1FFF, "greek"),
    (0x0400, 0x052F, "cyrillic"), (0x0530, 0x058F, "armenian"), (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x06FF, "arabic"), (0x0750, 0x077F, "arabic"), (0x08A0, 0x08FF, "arabic"),
    (0xFB50, 0xFDFF, "arabic"), (0xFE70, 0xFEFF, "arabic"),
    (0x0900, 0x097F, "devanagari"), (0x0980, 0x09FF, "bengali"), (0x0B80, 0x0BFF, "tamil"),
    (0x0E00, 0x0E7F, "thai"), (0x10A0, 0x10FF, "georgian"),
    (0x1100, 0x11FF, "hangul"), (0x3130, 0x318F, "hangul"), (0xAC00, 0xD7AF, "hangul"),
    (0x3040, 0x309F, "hiragana"), (0x30A0, 0x30FF, "katakana"), (0x31F0, 0x31FF, "katakana"),
    (0xFF66, 0xFF9F, "katakana"),
    (0x3400, 0x4DBF, "han"), (0x4E00, 0x9FFF, "han"), (0xF900, 0xFAFF, "han"), (0x20000, 0x2FA1F, "han"),
])  # fmt: skip
_STARTS = [start for start, _, _ in _RANGES]
SCRIPTS = frozenset(script for _, _, script in _RANGES) | {"other"}
LOGOGRAPHIC = frozenset({"han", "hiragana", "katakana", "hangul", "thai", "other"})  # a single character is a word

_FAMILIES = {
    "hiragana": {"han", "hiragana", "katakana"},
    "katakana": {"han", "hiragana", "katakana"},
    "hangul": {"hangul", "han"},
}
# What a `language` or `allow` entry may name: a script, "cjk", or a language code.
_ALIASES: dict[str, set[str]] = {script: {script} for script in SCRIPTS}
_ALIASES["cjk"] = {"han", "hiragana", "katakana", "hangul"}
_ALIASES |= {"zh": {"han"}, "ja": {"han", "hiragana", "katakana"}, "ko": {"hangul", "han"}}
for _codes, _script in [
    ("en fr de es it pt nl sv da no fi pl cs tr vi id ms ro hu sw", "latin"),
    ("ru uk bg sr be kk mk", "cyrillic"),
    ("ar fa ur ps", "arabic"),
    ("hi mr ne", "devanagari"),
    ("el", "greek"), ("he", "hebrew"), ("hy", "armenian"), ("ka", "georgian"),
    ("bn", "bengali"), ("ta", "tamil"), ("th", "thai"),
]:  # fmt: skip
    _ALIASES |= {code: {_script} for code in _codes.split()}

_NOT_LANGUAGE = re.compile(
    r"```.*?(?:```|\Z)"  # fenced code (an unclosed fence runs to the end)
    r"|`[^`\n]*`"  # inline code
    r"|\$\$.*?\$\$|\$[^$\n]*\$"  # LaTeX math; \( and \[ stop at the next opener, else an unclosed
    r"|\\\((?:(?!\\\().)*?\\\)|\\\[(?:(?!\\\[).)*?\\\]"  # run of them would rescan the text (quadratic)
    r"|\\[A-Za-z]+"  # LaTeX commands outside math
    r"|https?://\S+|www\.\S+"  # URLs
    r"|</?[A-Za-z][\w-]*(?:\s[^<>]*)?>",  # XML-like tags
    re.DOTALL,
)


def strip_non_language(text: str) -> str:
    """The text with code, math, URLs and tags replaced by spaces."""
    return _NOT_LANGUAGE.sub(" ", text)


def script_of(ch: str) -> str:
    i = bisect_right(_STARTS, ord(ch)) - 1
    if i >= 0 and ord(ch) <= _RANGES[i][1]:
        return _RANGES[i][2]
    return "other"


@dataclass(frozen=True)
class ScriptCounts:
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def fractions(self) -> dict[str, float]:
        return {s: round(n / self.total, 4) for s, n in sorted(self.counts.items(), key=lambda kv: -kv[1])}

    def share(self, scripts: Iterable[str]) -> float:
        return sum(self.counts.get(s, 0) for s in set(scripts)) / self.total if self.total else 1.0


def count_scripts(text: str, ignore_single_letters: bool = True) -> ScriptCounts:
    """Letters per script in runs of one script; isolated letters of alphabetic scripts may be skipped."""
    counts: Counter[str] = Counter()
    run_script, run_length = "", 0
    for ch in text + " ":
        script = script_of(ch) if ch.isalpha() else ""
        if script == run_script:
            run_length += 1
            continue
        if run_script and not (ignore_single_letters and run_length == 1 and run_script not in LOGOGRAPHIC):
            counts[run_script] += run_length
        run_script, run_length = script, 1
    return ScriptCounts(dict(counts))


def expected_scripts(counts: ScriptCounts, min_share: float) -> set[str]:
    """Every script with at least ``min_share`` of the letters, closed over language families."""
    found = {s for s, n in counts.counts.items() if counts.total and n / counts.total >= min_share}
    return found.union(*(_FAMILIES.get(s, set()) for s in found))


class LanguageConsistencyVerifier(Verifier):
    """Fraction of the response's letters written in the expected script(s); penalises language mixing."""

    name = "language_consistency"
    version = "1"
    kind = "rule"  # not inline: a per-character pass over a long response belongs in the pool

    class Config(VerifierConfig):
        language: str | None = Field(
            None,
            description="Expected language (ISO 639-1 code, e.g. 'en', 'zh') or script ('latin', 'cjk'); else from the prompt.",
        )
        allow: list[str] = Field(
            default_factory=list, description="Scripts (or language codes) always accepted besides the expected ones."
        )
        prompt_min_share: float = Field(
            0.1,
            gt=0,
            le=1,
            description="When inferring from the prompt: least share of its letters a script needs to be expected.",
        )
        threshold: float | None = Field(
            None, ge=0, le=1, description="When set, score 1 if the expected-script fraction reaches it, else 0."
        )
        ignore_single_letters: bool = Field(
            True, description="Skip isolated single letters of alphabetic scripts (math variables such as x or π)."
        )
        strip_think: bool = Field(
            False, description="Judge only the answer after <think>...</think> (by default the reasoning counts too)."
        )

        @field_validator("language")
        @classmethod
        def _known_language(cls, value: str | None) -> str | None:
            if value is not None and value.lower() not in _ALIASES:
                raise ValueError(f"unknown language or script {value!r}; known: {sorted(_ALIASES)}")
            return value.lower() if value else value

        @field_validator("allow")
        @classmethod
        def _known_scripts(cls, value: list[str]) -> list[str]:
            unknown = [v for v in value if v.lower() not in _ALIASES]
            if unknown:
                raise ValueError(f"unknown languages or scripts {unknown}")
            return [v.lower() for v in value]

    def score(self, sample: Sample, config: Config) -> Result:
        response = strip_think(sample.response) if config.strip_think else sample.response
        counts = count_scripts(strip_non_language(response), config.ignore_single_letters)
        expected, source = self._expected(sample, config, counts)
        allowed = expected.union(*(_ALIASES[a] for a in config.allow))
        fraction = counts.share(allowed)
        score = fraction if config.threshold is None else float(fraction >= config.threshold)
        return Result.ok(
            score,
            scripts=counts.fractions(),
            letters=counts.total,
            expected=sorted(expected),
            expected_from=source,
            expected_fraction=round(fraction, 4),
        )

    @staticmethod
    def _expected(sample: Sample, config: Config, response: ScriptCounts) -> tuple[set[str], Source]:
        if config.language is not None:
            return set(_ALIASES[config.language]), "config"
        prompt = count_scripts(strip_non_language(sample.prompt_text()), config.ignore_single_letters)
        if prompt.total:
            return expected_scripts(prompt, config.prompt_min_share), "prompt"
        dominant = max(response.counts, key=response.counts.__getitem__, default=None)
        return ({dominant} | _FAMILIES.get(dominant, set()) if dominant else set()), "response"
