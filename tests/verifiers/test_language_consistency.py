"""`language_consistency`: script detection, what is not language, where the expectation comes from."""

from importlib.metadata import entry_points

import pytest
from pydantic import ValidationError

from rewardhub.types import Sample
from rewardhub.verifiers.language_consistency import (
    LanguageConsistencyVerifier,
    count_scripts,
    script_of,
    strip_non_language,
)


def score(response, prompt=None, **config):
    sample = Sample(prompt=prompt, response=response)
    return LanguageConsistencyVerifier().score(sample, LanguageConsistencyVerifier.Config(**config))


@pytest.mark.parametrize(
    ("ch", "script"),
    [
        ("a", "latin"), ("é", "latin"), ("ệ", "latin"), ("Ａ", "latin"),
        ("ж", "cyrillic"), ("λ", "greek"), ("ש", "hebrew"), ("ب", "arabic"), ("क", "devanagari"), ("ก", "thai"),
        ("中", "han"), ("𠀀", "han"), ("ひ", "hiragana"), ("カ", "katakana"), ("한", "hangul"), ("ᚠ", "other"),
    ],
)  # fmt: skip
def test_script_of_a_letter(ch, script):
    assert script_of(ch) == script


@pytest.mark.parametrize(
    ("text", "ignore_single", "counts"),
    [
        ("Hello, world 123!", True, {"latin": 10}),
        ("你好 world", True, {"han": 2, "latin": 5}),
        ("设 x 为 2", True, {"han": 2}),  # an isolated variable is not English
        ("设 x 为 2", False, {"han": 2, "latin": 1}),
        ("答案是 π", True, {"han": 3}),
        ("I 答 am", True, {"latin": 2, "han": 1}),  # a lone Han character is still a word
    ],
)
def test_counting_letters(text, ignore_single, counts):
    assert count_scripts(text, ignore_single).counts == counts


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Run ```python\nprint('你好')\n``` now", "Run   now"),
        ("use `变量` here", "use   here"),
        ("so $\\alpha + \\beta$ and $$\\sum_i x_i$$ ok", "so   and   ok"),
        ("\\frac12 or \\(\\text{答}\\) or \\[y\\]", " 12 or   or  "),
        ("see https://example.com/中文 and www.a.cn", "see   and  "),
        ("<think>hm</think><answer x='1'>4</answer>", " hm  4 "),
        ("open ```\ncode 中文", "open  "),
    ],
)
def test_what_is_not_language_is_removed(text, kept):
    assert strip_non_language(text) == kept


@pytest.mark.parametrize(
    ("prompt", "response", "config", "expected"),
    [
        ("What is 2+2?", "The answer is 4.", {}, 1.0),
        ("What is 2+2?", "The answer 是 four", {}, 13 / 14),  # 13 Latin letters, 1 Han
        ("What is 2+2?", "答案是四", {}, 0.0),
        ("What is 2+2?", "答案是四", {"allow": ["zh"]}, 1.0),
        ("2+2 等于多少？", "答案是 4，因为 x = 4。", {}, 1.0),
        ("2+2 等于多少？", "The answer is 4", {}, 0.0),
        ("日本の首都は？", "首都は東京です。", {}, 1.0),  # Japanese: Han and kana
        ("한국의 수도는?", "서울(首爾)입니다.", {}, 1.0),  # Korean: Hangul and Hanja
        ("Столица России?", "Москва", {}, 1.0),
        (None, "Привет, как дела? hello", {}, 13 / 18),  # no hint: the response's own dominant script
        (None, "", {}, 1.0),  # nothing to mix
        ("What is 2+2?", "答案是四", {"language": "zh"}, 1.0),  # configured language wins
        ("What is 2+2?", "The answer 是 four", {"threshold": 0.95}, 0.0),
        ("What is 2+2?", "The answer 是 four", {"threshold": 0.9}, 1.0),
        ("What is 2+2?", "<think>嗯，想一想</think>4", {}, 0.0),  # the reasoning counts by default
        ("What is 2+2?", "<think>嗯，想一想</think>4", {"strip_think": True}, 1.0),
        ("Explain this code", "It prints:\n```python\nprint('你好')\n```", {}, 1.0),
    ],
)
def test_scores(prompt, response, config, expected):
    result = score(response, prompt, **config)
    assert result.status == "ok"
    assert result.score == pytest.approx(expected)


def test_prompt_scripts_below_the_minimum_share_are_not_expected():
    prompt = "Translate 你好 into French, please, and explain the tones"
    assert score("Bonjour", prompt).details["expected"] == ["latin"]
    assert score("Bonjour", prompt, prompt_min_share=0.01).details["expected"] == ["han", "latin"]


def test_details_carry_the_script_fractions():
    result = score("The answer 是 four", "What is 2+2?")
    assert result.details == {
        "scripts": {"latin": 0.9286, "han": 0.0714},
        "letters": 14,
        "expected": ["latin"],
        "expected_from": "prompt",
        "expected_fraction": 0.9286,
    }
    assert score("答案", language="JA").details["expected"] == ["han", "hiragana", "katakana"]


@pytest.mark.parametrize("config", [{"language": "klingon"}, {"allow": ["latin", "elvish"]}, {"threshold": 2}])
def test_unknown_languages_are_config_errors(config):
    with pytest.raises(ValidationError):
        LanguageConsistencyVerifier.Config(**config)


def test_config_fields_are_documented_and_registered():
    assert all(field.description for field in LanguageConsistencyVerifier.Config.model_fields.values())
    (ep,) = entry_points(group="rewardhub.verifiers", name="language_consistency")
    assert ep.load() is LanguageConsistencyVerifier
