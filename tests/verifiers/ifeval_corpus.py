"""A generated IFEval corpus: every one of the 25 instruction types on passing, failing and edge responses.

Deterministic (one seeded ``random.Random``). Responses are built from pieces that exercise what
Google's checker reads: abbreviations, decimals, ellipses and quotes for the sentence splitter;
``***`` and blank-line paragraphs, empty ones and stray dividers; ``*`` and ``-`` bullets next to
``**bold**`` lines; highlights; section headers; titles; postscripts inline and on their own line;
fenced, bare and broken JSON; two responses; all-caps and lower-case text in and out of English;
other languages; keywords hidden inside longer words ("war" in "toward"); a chatty first or last
line and markdown stars (what IFEval's loose variants remove). Each row's kwargs are drawn near
what the response holds (a count, that count plus or minus one, a word it has or lacks), so both
verdicts occur. Every kwarg is given and no count is 0: Google's checker draws a missing or falsy
kwarg at random, which would make its verdict noise.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

SEED = 20231107

ENGLISH = [
    "Dr. Smith moved toward the old harbor at dawn.",
    "The U.S. economy grew by 3.5 percent last year.",
    "We bought apples, pears and plums, e.g. the red ones.",
    "Is this the right way to the station?",
    "What a wonderful surprise that was!",
    'Mr. Brown said "yes." Then he left.',
    "The meeting ran long... Nobody minded.",
    "NASA launched a new probe in 2021.",
    "They walked along the river for hours.",
    "Our team finished the project on time.",
    "However, the warranty does not cover water damage.",
    "The software costs $4.99 per month.",
    "She works for Acme Inc. in New York.",
    "I DON'T think that is a good idea.",
    "The art of war is an ancient text.",
    "This sentence mentions a part of the plan.",
    "It was 5 p.m. when the train arrived.",
    "Prof. Lee teaches biology and chemistry.",
    "The report, in short, was a success.",
    "Visit example.com for more details.",
]
FOREIGN = {
    "fr": "Le chat dort sur le canapé pendant que nous préparons le dîner ce soir.",
    "de": "Der Hund spielt im Garten, während die Kinder ihre Hausaufgaben machen.",
    "es": "El perro juega en el jardín mientras los niños hacen sus deberes.",
    "it": "Il gatto dorme sul divano mentre prepariamo la cena questa sera.",
    "pt": "O cachorro brinca no jardim enquanto as crianças fazem a lição de casa.",
    "ru": "Собака играет в саду, пока дети делают домашнее задание.",
    "ja": "今日はとても良い天気なので、公園で散歩をしました。",
    "hi": "आज मौसम बहुत अच्छा है इसलिए हम पार्क में टहलने गए।",
    "ko": "오늘은 날씨가 정말 좋아서 공원에서 산책을 했습니다.",
    "fi": "Koira leikkii puutarhassa, kun lapset tekevät läksyjään.",
}
CHATTY_FIRST = ["Sure! Here is my answer:", "Of course, here you go.", "**Answer**", "<<draft>>"]
CHATTY_LAST = ["Hope this helps!", "Let me know if you need more.", "*Thank you*", "P.S. more soon."]
KEYWORD_POOL = ["war", "art", "harbor", "plan", "apples", "river", "team", "dawn", "probe", "banana", "Dr", "a.b"]


def _sentences(rng: random.Random, k: int) -> str:
    return " ".join(rng.choice(ENGLISH) for _ in range(k))


def _paragraphs(rng: random.Random, n: int, joiner: str) -> str:
    return joiner.join(_sentences(rng, rng.randint(1, 3)) for _ in range(n))


def _response(rng: random.Random, kind: int) -> str:
    if kind == 0:
        return _paragraphs(rng, rng.randint(1, 5), "\n\n")
    if kind == 1:
        text = _paragraphs(rng, rng.randint(1, 5), rng.choice(["\n***\n", " *** ", "***", "\n\n***\n\n"]))
        edge = rng.randrange(4)
        if edge == 1:
            text = "***\n" + text + "\n***"
        elif edge == 2:
            text = text + "\n***\n***\nTail sentence."
        return text
    if kind == 2:
        bullets = [
            rng.choice(["* ", "- ", "  * ", "-", "**bold** ", "*"]) + rng.choice(ENGLISH)
            for _ in range(rng.randint(1, 6))
        ]
        return rng.choice(["Here are the points:\n", ""]) + "\n".join(bullets)
    if kind == 3:
        words = [
            rng.choice(["*key idea*", "**bold claim**", "* *", "**", "*a*", "plain"]) for _ in range(rng.randint(1, 6))
        ]
        return _sentences(rng, 1) + " " + " ".join(words) + " " + _sentences(rng, 1)
    if kind == 4:
        marker = rng.choice(["SECTION", "Section", "Part"])
        return "\n".join(f"{marker} {i + 1}\n{_sentences(rng, 2)}" for i in range(rng.randint(1, 5)))
    if kind == 5:
        title = rng.choice(
            ["<<Ode to the Sea>>", "<<Ode to the Sea>>", "<< >>", "<<A Title>> extra", "<no title>", "<<Two\nLines>>"]
        )
        return title + "\n" + _paragraphs(rng, rng.randint(1, 3), "\n\n")
    if kind == 6:
        ps = rng.choice(
            [
                "P.S. See you soon.",
                "p.s. remember the keys.",
                "P.P.S. One more thing.",
                "P. P. S also this",
                "Note: bring water.",
            ]
        )
        return _sentences(rng, 3) + rng.choice(["\n\n", " "]) + ps
    if kind == 7:
        value = {"name": "Ada", "tags": ["x", "y"], "n": rng.randint(1, 9)}
        body = json.dumps(value, indent=rng.choice([None, 2]))
        return rng.choice(
            [
                body,
                f"```json\n{body}\n```",
                f"```JSON\n{body}\n```",
                f"```\n{body}\n```",
                "{'a': 1}",
                body + " trailing",
                "Here: " + body,
            ]
        )
    if kind == 8:
        first, second = _sentences(rng, 2), rng.choice([_sentences(rng, 2), ""])
        return rng.choice(
            [
                f"{first}\n******\n{second}",
                f"{first}\n******\n{first}",
                f"{first}******{second}******",
                f"******\n{first}\n******\n{second}",
            ]
        )
    if kind == 9:
        return _sentences(rng, rng.randint(1, 4)).upper()
    if kind == 10:
        return _sentences(rng, rng.randint(1, 4)).lower()
    if kind == 11:
        lang = rng.choice(sorted(FOREIGN))
        text = FOREIGN[lang]
        return rng.choice([text, text.lower(), text.upper(), text + " " + _sentences(rng, 1)])
    if kind == 12:
        return rng.choice(['"', '"', "\u201c", ""]) + _sentences(rng, 2) + rng.choice(['"', '"', "\u201d", "", '" \n'])
    if kind == 13:
        option = rng.choice(
            ["My answer is yes.", "My answer is no.", "My answer is maybe.", "My answer is Yes.", "my answer is no."]
        )
        return rng.choice(["", _sentences(rng, 1) + " "]) + option
    if kind == 14:
        holders = " ".join(
            rng.choice(["[name]", "[address]", "[ ]", "[date", "[[x]]", "word"]) for _ in range(rng.randint(1, 6))
        )
        return f"Dear {holders}, " + _sentences(rng, 1)
    if kind == 15:
        body = _paragraphs(rng, rng.randint(1, 3), "\n\n")
        return rng.choice(CHATTY_FIRST) + "\n" + body + rng.choice(["", "\n" + rng.choice(CHATTY_LAST)])
    if kind == 16:
        return rng.choice(["", "   ", "\n\n", "*", "***", "...", "12345", "!!!", "A", "ok"])
    if kind == 17:
        return " ".join(
            rng.choice(["THE", "NASA", "U.S.A.", "DON'T", "Hello", "I", "OK", "A1", "x-RAY", "CEO's"])
            for _ in range(rng.randint(1, 12))
        )
    if kind == 18:
        return "\n".join(
            rng.choice(["", " ", _sentences(rng, 1), "  " + _sentences(rng, 1)]) for _ in range(rng.randint(2, 7))
        )
    return _sentences(rng, rng.randint(1, 8))


def _near(rng: random.Random, count: int) -> int:
    return max(1, count + rng.choice([-2, -1, 0, 0, 1, 2]))


def _relation(rng: random.Random) -> str:
    return rng.choice(["less than", "at least"])


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", text) or ["empty"]


def _kwargs(rng: random.Random, instruction: str, text: str) -> dict[str, Any]:
    """kwargs for ``instruction`` drawn near what ``text`` holds (rough counts: only their neighbourhood matters)."""
    words = _words(text)
    rough_sentences = max(1, len(re.findall(r"[.!?]+", text)))
    if instruction == "keywords:existence":
        return {"keywords": rng.sample(list(dict.fromkeys(words + KEYWORD_POOL)), k=rng.randint(1, 3))}
    if instruction == "keywords:frequency":
        keyword = rng.choice(words + KEYWORD_POOL)
        return {
            "keyword": keyword,
            "frequency": _near(rng, len(re.findall(re.escape(keyword), text, re.I))),
            "relation": _relation(rng),
        }
    if instruction == "keywords:forbidden_words":
        return {"forbidden_words": rng.sample(list(dict.fromkeys(words + KEYWORD_POOL)), k=rng.randint(1, 3))}
    if instruction == "keywords:letter_frequency":
        letter = rng.choice("abcdefghijklmnopqrstuvwxyzAEIOU")
        return {
            "letter": letter,
            "let_frequency": _near(rng, text.lower().count(letter.lower())),
            "let_relation": _relation(rng),
        }
    if instruction == "language:response_language":
        return {"language": rng.choice(["en", "en", "fr", "de", "es", "it", "pt", "ru", "ja", "hi", "ko", "fi", "ar"])}
    if instruction == "length_constraints:number_sentences":
        return {"num_sentences": _near(rng, rough_sentences), "relation": _relation(rng)}
    if instruction == "length_constraints:number_paragraphs":
        return {"num_paragraphs": _near(rng, text.count("***") + 1)}
    if instruction == "length_constraints:number_words":
        return {"num_words": _near(rng, len(re.findall(r"\w+", text))), "relation": _relation(rng)}
    if instruction == "length_constraints:nth_paragraph_first_word":
        blocks = [b for b in text.split("\n\n") if b.strip()] or [""]
        num = _near(rng, len(blocks))
        nth = rng.randint(1, num)
        first = (blocks[nth - 1].split() or ["none"])[0] if nth <= len(blocks) else rng.choice(words)
        return {
            "num_paragraphs": num,
            "nth_paragraph": nth,
            "first_word": rng.choice([first, first.strip(".,\"'"), rng.choice(words)]),
        }
    if instruction == "detectable_content:number_placeholders":
        return {"num_placeholders": _near(rng, text.count("["))}
    if instruction == "detectable_content:postscript":
        return {"postscript_marker": rng.choice(["P.S.", "P.P.S", "Note:", "P.S"])}
    if instruction == "detectable_format:number_bullet_lists":
        return {"num_bullets": _near(rng, len(re.findall(r"^\s*[*-]", text, re.M)))}
    if instruction == "detectable_format:number_highlighted_sections":
        return {"num_highlights": _near(rng, len(re.findall(r"\*[^\n*]+\*", text)))}
    if instruction == "detectable_format:multiple_sections":
        spliter = rng.choice(re.findall(r"(SECTION|Section|Part) \d", text) + ["SECTION", "Chapter"])
        return {"section_spliter": spliter, "num_sections": _near(rng, len(re.findall(spliter + r"\s?\d+", text)))}
    if instruction == "combination:repeat_prompt":
        head = text.strip()[: rng.randint(1, 40)] or "Repeat me"
        return {"prompt_to_repeat": rng.choice([head, head.upper(), "Write a poem about the sea."])}
    if instruction == "startend:end_checker":
        tail = text.strip().strip('"')[-rng.randint(1, 30) :] or "Any other questions?"
        return {"end_phrase": rng.choice([tail, tail.upper(), "Any other questions?", tail + " "])}
    if instruction == "change_case:capital_word_frequency":
        return {
            "capital_frequency": _near(rng, sum(1 for w in text.split() if w.isupper())),
            "capital_relation": _relation(rng),
        }
    return {}


IFEVAL_IDS = (
    "keywords:existence", "keywords:frequency", "keywords:forbidden_words", "keywords:letter_frequency",
    "language:response_language", "length_constraints:number_sentences", "length_constraints:number_paragraphs",
    "length_constraints:number_words", "length_constraints:nth_paragraph_first_word",
    "detectable_content:number_placeholders", "detectable_content:postscript", "detectable_format:number_bullet_lists",
    "detectable_format:constrained_response", "detectable_format:number_highlighted_sections",
    "detectable_format:multiple_sections", "detectable_format:json_format", "detectable_format:title",
    "combination:two_responses", "combination:repeat_prompt", "startend:end_checker",
    "change_case:capital_word_frequency", "change_case:english_capital", "change_case:english_lowercase",
    "punctuation:no_comma", "startend:quotation",
)  # fmt: skip


# the response kinds (see _response) that can pass each instruction; any kind can fail it
_KINDS = {
    "keywords:letter_frequency": (0, 19), "length_constraints:number_paragraphs": (1,),
    "length_constraints:nth_paragraph_first_word": (0, 5, 15, 18), "detectable_content:number_placeholders": (14,),
    "detectable_content:postscript": (6,), "detectable_format:number_bullet_lists": (2,),
    "detectable_format:constrained_response": (13,), "detectable_format:number_highlighted_sections": (3, 2),
    "detectable_format:multiple_sections": (4,), "detectable_format:json_format": (7,), "detectable_format:title": (5,),
    "combination:two_responses": (8,), "change_case:capital_word_frequency": (17, 9), "change_case:english_capital": (9, 11),
    "change_case:english_lowercase": (10, 11), "language:response_language": (11, 0), "startend:quotation": (12,),
    "keywords:existence": (0, 19), "keywords:forbidden_words": (0, 19), "keywords:frequency": (0, 19),
}  # fmt: skip


def corpus(prompts: int = 700) -> list[tuple[dict[str, Any], str]]:
    """``prompts`` (row, response) pairs: a row's first instruction picks a response kind that can pass
    it (three times in four), then up to two more distinct instructions join it."""
    rng = random.Random(SEED)
    rows = []
    for key in range(prompts):
        first = IFEVAL_IDS[key % len(IFEVAL_IDS)]
        suited = _KINDS.get(first, tuple(range(20)))
        response = _response(rng, rng.choice(suited) if rng.random() < 0.75 else rng.randrange(20))
        if rng.random() < 0.15:  # what the loose variants strip: a chatty line around, stars inside
            response = rng.choice(CHATTY_FIRST) + "\n" + response + "\n" + rng.choice(CHATTY_LAST)
        ids = [first, *rng.sample([i for i in IFEVAL_IDS if i != first], k=rng.randint(0, 2))]
        row = {"key": key, "prompt": "", "instruction_id_list": ids, "kwargs": [_kwargs(rng, i, response) for i in ids]}
        rows.append((row, response))
    return rows


# Hand-picked edges of Google's rules, judged by the oracle like the generated rows.
EDGES: list[tuple[str, dict[str, Any], str]] = [
    ("keywords:existence", {"keywords": ["war"]}, "We walked toward the sea."),  # a substring counts
    ("keywords:existence", {"keywords": ["a.b"]}, "axb"),  # a keyword is a regular expression
    ("keywords:frequency", {"keyword": "the", "frequency": 3, "relation": "at least"}, "The theme: other things."),
    ("keywords:forbidden_words", {"forbidden_words": ["art"]}, "A part of the plan."),  # whole words only
    ("keywords:forbidden_words", {"forbidden_words": ["Art"]}, "art matters"),
    ("keywords:letter_frequency", {"letter": "A", "let_frequency": 3, "let_relation": "at least"}, "a A aa"),
    ("language:response_language", {"language": "en"}, "12345 !!!"),  # nothing to detect: followed
    (
        "length_constraints:number_sentences",
        {"num_sentences": 2, "relation": "less than"},
        "Dr. Smith arrived. He sat.",
    ),
    (
        "length_constraints:number_sentences",
        {"num_sentences": 3, "relation": "at least"},
        "It cost 3.5 dollars. Wow! Really? Yes...",
    ),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "***\nOne.\n***\nTwo.\n***"),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "One.\n***\n\n***\nTwo."),  # an empty inner one
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
        '\n\nFirst.\n\n"Then, more.',
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
        "First.\n\n'Then's it.",
    ),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "[a] [] [b"),
    (
        "detectable_content:postscript",
        {"postscript_marker": "P.S."},
        "See the p.s. inline",
    ),  # anywhere, not at a line start
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, "Body.\nP. P. S more"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* a\n**bold** line\n- b"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 1}, "*\n* b"),  # "*" and its next line are one match
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "**bold** and *it*"),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 1}, "* * and ** **"),
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "SECTION", "num_sections": 2},
        "SECTION1 a SECTION 2 b",
    ),
    ("detectable_format:json_format", {}, "```Json\n[1, 2]\n```"),
    ("detectable_format:json_format", {}, "```python\n[1]\n```"),
    ("detectable_format:title", {}, "<<  >> and <<Real>>"),
    ("combination:two_responses", {}, "Same.\n******\nSame."),
    ("combination:two_responses", {}, "A\n******\n\n******\nB"),
    ("combination:repeat_prompt", {"prompt_to_repeat": "  Say HI. "}, "say hi. and more"),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, 'Fine. Any other questions?"'),
    ("change_case:capital_word_frequency", {"capital_frequency": 3, "capital_relation": "at least"}, "DON'T stop"),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 2, "capital_relation": "less than"},
        "U.S.A. and x-RAY",
    ),
    ("change_case:english_capital", {}, "BONJOUR TOUT LE MONDE, COMMENT ALLEZ-VOUS AUJOURD'HUI?"),
    ("change_case:english_lowercase", {}, "hello there, how are you today?"),
    ("punctuation:no_comma", {}, "no commas here"),
    ("startend:quotation", {}, ' "quoted" '),
    ("startend:quotation", {}, '"'),
]


def edges() -> list[tuple[dict[str, Any], str]]:
    return [
        ({"key": -1 - n, "prompt": "", "instruction_id_list": [i], "kwargs": [k]}, r)
        for n, (i, k, r) in enumerate(EDGES)
    ]
