"""A generated corpus for IFBench's ids: for each id, responses on both sides of what its checker
reads, with kwargs drawn at the response's own measure and one step either side of it.

Deterministic (one seeded ``random.Random`` per id). Each id's generator builds near-misses from
what the checker looks at: a count one over or under its threshold (words, stop words, numbers,
names, palindromes), an extra blank line or tab in a layout (stairs, bullets, CSV), a sentence cut
where Google's splitter cuts ("Mr.", "3.5", "?!", "..."), a curly quote or an accent where ASCII is
expected, markdown around the answer. :data:`COMMON` holds the ways models write that every id is
also tried on: empty and blank text, punctuation alone, markdown, emoji, other scripts, CSV, HTML.

The generators use nothing of the rules under test: measures are computed here from the text as
it is built (a word count is the length of the list the text was joined from).
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable
from typing import Any

Case = tuple[dict[str, Any], str]

COMMON = [
    "",
    "   ",
    "\n\n",
    "!",
    "...",
    "?!",
    "\u203d",
    "12345",
    "A",
    "Yes.",
    "a)",
    "**Answer:** yes\n\n* first point\n  - sub point\n* second point",
    "# Title\n\n1. one\n2. two\n\n> quoted line",
    "Caf\u00e9 na\u00efve \u2014 \u201cquoted\u201d and \u2018single\u2019 words.",
    "Great job \U0001f389. Next time \U0001f600! Really? \U0001f914",
    "\u4eca\u65e5\u306f \u3068\u3066\u3082 \u826f\u3044 \u5929\u6c17 \u3067\u3059\u3002",
    "ID,Country,City,Year,Count\n1,France,Paris,2020,5",
    "<i>A thesis.</i> And the rest.",
    "Line one\r\nLine two\r\n",
    "\tTabbed line\n  two spaces\n    four spaces",
    "Dr. Smith earned a Ph.D. in 3.5 years... Amazing!? Yes.",
    "(a [b {c (d [e])}])",
    '"He said \'she said "hi" there\' loudly"',
    "The Quick Brown Fox Jumps Over The Lazy Dog",
    "My Answer: yes My Conclusion: fine Future Outlook: bright",
]

WORDS = (
    "the river runs past old stone walls and we walk beside it while birds sing in tall trees "
    "but nobody knows why the bridge was built so high or who paid for it yet people cross daily"
).split()
NAMES = "Emma Liam Sophia Jackson Olivia Noah Ava Lucas Isabella Mason Mia Ethan Leo Zoe Daniel".split()
ONE_SYLLABLE = "cat dog sun tree bird fish stone rain wind sea".split()
TWO_SYLLABLES = "apple table garden river window yellow pencil doctor basket simple".split()
SENTENCES = [
    "The cat sat on the mat.",
    "Is it raining outside?",
    "What a lovely day!",
    "Mr. Brown paid $3.50 for tea.",
    "We met at 5 p.m. near the U.S. embassy.",
    "Really?!",
    "Well... maybe later.",
    'She said "stop." Then she left.',
]


def _around(value: int, low: int = 0) -> list[int]:
    return [v for v in (value - 1, value, value + 1) if v >= low]


def _text(rng: random.Random, n: int, pool: list[str] = WORDS) -> str:
    return " ".join(rng.choice(pool) for _ in range(n))


def word_count_range(rng: random.Random) -> list[Case]:
    cases = []
    for n in (0, 1, 5, 20, 60):
        text = _text(rng, n) + rng.choice(["", ".", " don't", " --", " 3.14"])
        count = len(re.findall(r"\w+", text))
        cases += [({"min_words": lo, "max_words": hi}, text) for lo in _around(count) for hi in _around(count)]
    return cases


def unique_word_count(rng: random.Random) -> list[Case]:
    cases = []
    for n in (1, 5, 15, 40):
        words = [rng.choice(WORDS) + rng.choice(["", "", ",", ".", "!"]) for _ in range(n)]
        words = [w.capitalize() if rng.random() < 0.2 else w for w in words]
        text = " ".join(words)
        unique = len({w.lower().strip(string.punctuation + " ") for w in text.split()})
        cases += [({"N": k}, text) for k in _around(unique)]
    return cases


def conjunctions(rng: random.Random) -> list[Case]:
    pool = ["and", "And", "but", "or,", "so", "yet", "nor", "for", "and/or", "so-called", "Or", "FOR"]
    cases = []
    for k in (0, 2, 4, 6, 8):
        text = " ".join(rng.choice(WORDS[:8]) + " " + rng.choice(pool) for _ in range(k)) + " done"
        for n in range(0, 8):
            cases.append(({"small_n": n}, text))
    return cases


def numbers(rng: random.Random) -> list[Case]:
    pool = ["3.14", "1,000", "42", "v2", "7th", "\u0663", "-5", "2024-01-01", "x"]
    cases = []
    for k in (0, 1, 3, 5):
        items = [rng.choice(pool) for _ in range(k)]
        text = " and ".join(items) or "none at all"
        count = len(re.findall(r"\d+", text.translate(str.maketrans("", "", string.punctuation))))
        cases += [({"N": n}, text) for n in _around(count)]
    return cases


def palindromes(rng: random.Random) -> list[Case]:
    pool = [
        "level",
        "Racecar",
        "rotor,",
        "civic",
        "kayak.",
        "refer",
        "madam",
        "stats",
        "tenet",
        "radar",
        "solos",
        "noon",
    ]
    return [({}, " ".join(rng.choice(pool) for _ in range(k)) + " end") for k in (8, 9, 10, 11, 12) for _ in range(3)]


def punctuation_cover(rng: random.Random) -> list[Case]:
    marks = [". ", ", ", "! ", "? ", "; ", ": ", "?! ", "!? ", "\u203d "]
    return [({}, "".join("w" + m for m in rng.sample(marks, k=rng.randint(3, 9)))) for _ in range(30)]


def prime_lengths(rng: random.Random) -> list[Case]:
    pool = ["to", "the", "words", "at", "seven", "don't", "is", "it", "\u2019tis", "a", "four", "hello!"]
    return [({}, " ".join(rng.choice(pool) for _ in range(rng.randint(1, 6)))) for _ in range(30)]


def newline_words(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(30):
        lines = [rng.choice(["word", "two words", "-", "", " ", "end.", "a,b"]) for _ in range(rng.randint(1, 6))]
        cases.append(({}, "\n".join(lines)))
    return cases


def limited_repeats(rng: random.Random) -> list[Case]:
    cases = []
    for k in (1, 2, 3, 4, 5):
        text = " ".join(["echo"] * (k - 1) + ["Echo."] + rng.sample(WORDS, 5))
        cases += [({"small_n": n}, text) for n in _around(k, 1)]
    return cases


def pronouns(rng: random.Random) -> list[Case]:
    pool = ["she/her/hers", "I'm", "they", "THEM", "its", "it's", "you", "ourselves", "we,", "he"]
    cases = []
    for k in (0, 2, 5, 9):
        text = " ".join(rng.choice(pool) + " " + rng.choice(WORDS) for _ in range(k)) or "nobody"
        for n in range(0, 14, 2):
            cases.append(({"N": n}, text))
    return cases


def no_consecutive(rng: random.Random) -> list[Case]:
    pool = ["apple", "Banana", "cherry", "bread", "a-b", "avocado", "'quoted'", "Cat", "dog", "d\u00e9j\u00e0"]
    return [({}, " ".join(rng.choice(pool) for _ in range(rng.randint(1, 5)))) for _ in range(30)]


def character_reverse(rng: random.Random) -> list[Case]:
    return [({}, t) for t in ("elgae dlab", "Elgae Dlab!", "elgae  dlab", "bald eagle", ".elgae dlab eht")]


def keywords_multiple(rng: random.Random) -> list[Case]:
    keywords = {"keyword1": "door", "keyword2": "bread", "keyword3": "blue", "keyword4": "lamp", "keyword5": "river"}
    cases = []
    for _ in range(30):
        counts = [c + rng.choice([0, 0, 0, -1, 1]) for c in (1, 2, 3, 5, 7)]
        words = [w for w, c in zip(keywords.values(), counts, strict=True) for _ in range(max(c, 0))]
        rng.shuffle(words)
        text = " ".join(w.upper() if rng.random() < 0.1 else w for w in words)
        cases.append((keywords, text + rng.choice(["", " doorway", " Blueberry"])))
    return cases


def no_whitespace(rng: random.Random) -> list[Case]:
    return [({}, t) for t in ("abc", "a b", "a\u00a0b", "a\u200bb", "a\tb", "one_two", "x\n")]


def stop_words(rng: random.Random) -> list[Case]:
    pool = ["the", "river", "and", "stone", "don't", "S", "walls", "IS", "over", "birds", "ma", "o'clock", "we'd"]
    cases = []
    for n in (1, 3, 8, 20):
        text = " ".join(rng.choice(pool) for _ in range(n)) + rng.choice(["", ".", " 42"])
        words = re.findall(r"\w+", text)
        share = sum(w.lower() in _NLTK_SAMPLE for w in words) / len(words) * 100
        cases += [({"percentage": p}, text) for p in (share, share - 0.5, share + 0.5, round(share), 0, 100) if p >= 0]
    cases += [({"percentage": 50}, "!!! ???"), ({"percentage": 50}, "...")]
    return cases


# enough of NLTK's list to aim the percentages near the boundary (the exact list is the oracle's)
_NLTK_SAMPLE = {"the", "and", "don", "t", "s", "is", "over", "ma", "o", "we", "d"}


def sentence_type(rng: random.Random) -> list[Case]:
    return [({}, " ".join(rng.choice(SENTENCES) for _ in range(rng.randint(1, 7)))) for _ in range(40)]


def person_names(rng: random.Random) -> list[Case]:
    cases = []
    for k in (0, 1, 3, 6):
        chosen = rng.sample(NAMES, k)
        text = " and ".join(chosen) + rng.choice([" met Leonard.", " wrote Java.", " left.", ""])
        found = sum(1 for name in NAMES + ["Leo", "Ava"] if name in text)
        cases += [({"N": n}, text) for n in range(0, found + 3)]
    return cases


def overlap(rng: random.Random) -> list[Case]:
    reference = "The quick brown fox jumps over the lazy dog near the river bank."
    cases = []
    for text in ("The quick brown fox", "A slow green turtle crawls", "the lazy dog near", "ab", "xyz", reference):
        mine = {text[i : i + 3] for i in range(len(text) - 2)}
        share = len(mine & {reference[i : i + 3] for i in range(len(reference) - 2)}) / len(mine) if mine else 0.0
        for p in (share * 100, share * 100 + 2, share * 100 - 2, share * 100 + 2.5, 50):
            if p >= 0:  # a negative percentage is drawn at random by IFBench
                cases.append(({"reference_text": reference, "percentage": p}, text))
    return cases


def alphabet(rng: random.Random) -> list[Case]:
    texts = [
        "Apple banana cat dog",
        "Yak zebra apple bee",
        "apple Cat",
        "1 apple",
        "A-b c",
        "Ant, bee; cat!",
        "\u00c9clair fig",
        "xylophone yak zoo ant bat",
        "ant bee cat dog eel fox goat hen ibis jay kite lion mole newt owl pig quail rat seal tiger urchin vole wasp xerus yak zebu ant",
    ]
    return [({}, t) for t in texts]


def vowels(rng: random.Random) -> list[Case]:
    texts = [
        "Bad cat sat",
        "Bad cat sat on it",
        "A bed, a cot, a hut!",
        "one\ntwo",
        "\n  Bad cat  \n",
        "AEIOU",
        "Rhythm",
    ]
    return [({}, t) for t in texts]


def consonants(rng: random.Random) -> list[Case]:
    return [
        ({}, " ".join(rng.sample(["strong", "bright", "tree", "sky", "a", "Shh.", "st.", "ok", "MYTH", "fly"], 3)))
        for _ in range(30)
    ]


def alliteration(rng: random.Random) -> list[Case]:
    parts = ["Big bad bears.", "Cats chase.", "Dogs.", "Five fat frogs fly fast.", "Go now.", "Silly snakes sleep."]
    return [({}, " ".join(rng.choice(parts) for _ in range(rng.randint(1, 4)))) for _ in range(30)]


def parentheses(rng: random.Random) -> list[Case]:
    texts = [
        "(a [b {c (d [e])}])",
        "(a [b {c (d)}])",
        "((((( x )))))",
        "(((([ x ])))",
        "(a [b {c (d [e)}])",
        ")(((((x)))))",
        "[{(<>)}]",
    ]
    return [({}, t) for t in texts]


def quotes(rng: random.Random) -> list[Case]:
    texts = [
        '"a \'b "c" b\' a"',
        "\"a 'b' a\"",
        "'a \"b 'c' b\" a'",
        '"a \'b "c',
        'It\'s "a \'b "c" b\' a"',
        "\u201ca \u2018b\u2019\u201d",
    ]
    return [({}, t) for t in texts]


def options(rng: random.Random) -> list[Case]:
    kwargs = ["yes/no/maybe", "I know or I don't know", "a), b), c), d)", "Correct, Incorrect", "A, B, C"]
    answers = [
        "yes",
        "Yes.",
        "maybe!",
        "no way",
        "I know",
        "I don't know.",
        "a)",
        "a",
        "A)",
        " a)",
        "Correct",
        "Inc",
        "B",
    ]
    return [({"options": o}, a) for o in kwargs for a in answers]


def emoji_sentences(rng: random.Random) -> list[Case]:
    texts = [
        "Hello \U0001f600. Bye \U0001f44b!",
        "Hello. \U0001f600 Bye \U0001f44b!",
        "Hello \U0001f600.",
        "Hello.",
        "Hi \U0001f600?! Yes \U0001f44d.",
        "Nice \u2764\ufe0f. Fine \U0001f44d",
        "One \U0001f600 two. Three",
        "\U0001f600",
    ]
    return [({}, t) for t in texts]


def sentence_words(rng: random.Random) -> list[Case]:
    texts = [
        "Cats nap. Dogs run. Fish do.",
        "Cats nap. Dogs run. Fish swim.",
        "Cats nap. Dogs run.",
        "Abc. Def. Ghi. Jkl.",
        "Mr. A ran. Ms. B ran. Dr. C ran.",
    ]
    return [({}, t) for t in texts]


def words_japanese(rng: random.Random) -> list[Case]:
    cases = []
    for n in (1, 2, 3, 5):
        words = ["\u65e5\u672c" if (i + 1) % n == 0 else rng.choice(WORDS) for i in range(12)]
        if rng.random() < 0.5:
            words[n - 1] = rng.choice(["tree", "42", "\u30c6\u30b9\u30c8", "(\u65e5)", "--"])
        text = " ".join(words)
        cases += [({"N": k}, text) for k in _around(n, 1)]
    return cases


def keyword_sentence(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(8):
        found = [rng.choice(SENTENCES) for _ in range(4)]
        where = rng.randrange(4)
        found[where] = found[where][:-1] + " with Giraffes."
        text = " ".join(found)
        cases += [({"word": "giraffe", "N": n}, text) for n in (0, where, where + 1, where + 2, 9)]
    return cases


def syllables(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(30):
        words = [rng.choice(ONE_SYLLABLE if i % 2 == 0 else TWO_SYLLABLES) for i in range(rng.randint(1, 6))]
        if rng.random() < 0.4:
            words.insert(rng.randrange(len(words) + 1), rng.choice(ONE_SYLLABLE + TWO_SYLLABLES + ["2nd", "self-care"]))
        cases.append(({}, " ".join(words) + rng.choice(["", ".", "!"])))
    return cases


def last_first(rng: random.Random) -> list[Case]:
    texts = [
        "The cat sat. Sat down now. Now we go.",
        "The cat sat. Down we go.",
        "Hello there! There it is? Is it.",
        "One. ! Two.",
        "Alone.",
        "Word... word again.",
        'End "quote." Quote ends.',
    ]
    return [({}, t) for t in texts]


def paragraph_last_first(rng: random.Random) -> list[Case]:
    texts = [
        "Home is where I go home.\nStay and stay",
        "Home sweet home\n\nWork is work.",
        "Home is here.",
        "****\nWord word",
        "A b a\n  \nC d c!",
    ]
    return [({}, t) for t in texts]


def increment(rng: random.Random) -> list[Case]:
    cases = []
    for step in (0, 1, 2, 3):
        counts = [2 + step * i for i in range(3)]
        if rng.random() < 0.5:
            counts[-1] += rng.choice([-1, 1])
        text = " ".join(" ".join(rng.choice(WORDS) for _ in range(c)) + "." for c in counts)
        cases += [({"small_n": n}, text) for n in _around(step)]
    return cases


def line_indent(rng: random.Random) -> list[Case]:
    texts = [
        "a\n b\n  c",
        "a\n b\n b",
        "a\n\n b\n  c",
        "a\n\n\n b\n  c",
        "a\n \n\n b",
        "a\n\tb",
        " a\n  b\n",
        "a\n b\n\n\n\n  c",
    ]
    return [({}, t) for t in texts]


def quote_unquote(rng: random.Random) -> list[Case]:
    texts = [
        "\u201cHope\u201d is a thing.",
        '"Hope" "joy" are words.',
        'He said "go"',
        'He said "go".',
        "123",
        "...",
        "Use '\"' as a mark. Fine",
        '"a" b "c" d 42!',
    ]
    return [({}, t) for t in texts]


def special_list(rng: random.Random) -> list[Case]:
    return [
        ({"sep": sep}, f"{sep} one{f' {sep} two' * k}") for sep in ("!?!?", "SEPARATOR", "-", "...") for k in (0, 1, 2)
    ]


def thesis(rng: random.Random) -> list[Case]:
    texts = [
        "<i>Thesis.</i> Body.",
        "<i>Thesis.</i>",
        "<i> </i> Body.",
        "<em>Thesis.</em> Body.",
        "<em>T</em>",
        "Intro <i>T</i> b",
        "<i>never closed",
        "<I>Upper</I> b",
    ]
    return [({}, t) for t in texts]


def sub_bullets(rng: random.Random) -> list[Case]:
    texts = ["* a\n  - b\n* c\n  - d", "* a\n* c\n  - d", "**Bold** - x", "no stars", "* a - b", "*"]
    return [({}, t) for t in texts]


def no_bullets_bullets(rng: random.Random) -> list[Case]:
    texts = [
        "One. Two.\n* a\n* b",
        "One.\n* a\n* b",
        "One. Two.\n\nThree.\n* a\n* b",
        "One. Two.\n* a\n* b\n",
        "One. Two.\n* a",
        "One.\nTwo.\n* a\n* b\nAfter.",
        "One. Two.\n\n* a\n* b",
    ]
    return [({}, t) for t in texts]


def title_case(rng: random.Random) -> list[Case]:
    texts = [
        "The Quick Brown Fox",
        "The quick Brown",
        "iPhone Rocks",
        "NASA Rocks",
        "Of Mice And men",
        "A 42 Z",
        "eBAY Sells",
    ]
    return [({}, t) for t in texts]


def output_template(rng: random.Random) -> list[Case]:
    texts = [
        "My Answer: a My Conclusion: b Future Outlook: c",
        "My answer: a My Conclusion: b Future Outlook: c",
        "Future Outlook: c\nMy Conclusion: b\nMy Answer: a",
    ]
    return [({}, t) for t in texts]


def words_position(rng: random.Random) -> list[Case]:
    texts = [
        "The vibrant sky is vibrant .",
        "The vibrant sky is vibrant.",
        "A vibrant day, so vibrant!",
        "The Vibrant one vibrant x",
        "vibrant",
    ]
    return [({"keyword": "vibrant"}, t) for t in texts]


def keyword_position(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(6):
        first = rng.choice(SENTENCES)
        words = [rng.choice(WORDS) for _ in range(5)]
        m = rng.randint(1, 5)
        words[m - 1] = "giggle"
        text = first + " " + " ".join(words) + ". " + rng.choice(SENTENCES)
        cases += [({"keyword": "giggle", "n": n, "m": mm}, text) for n in (1, 2, 3) for mm in _around(m, 1)]
    return cases


def multiples(rng: random.Random) -> list[Case]:
    texts = [
        "14, 21, 28, 35, 42, 49",
        "14,21,28,35,42,49",
        "7, 14, 21, 28, 35, 42, 49",
        "14 21 28 35 42",
        "Multiples: 14, 21, 28, 35, 42, 49.",
    ]
    return [({}, t) for t in texts]


def mcq(rng: random.Random) -> list[Case]:
    def question(i: int, stem: str, n_options: int) -> str:
        return f"Question {i}: {stem}\n" + "\n".join(f"{'ABCDE'[j]}) option {j}" for j in range(n_options))

    good = "\n\n".join(question(i + 1, "Who painted this?" + " Why" * i, 5) for i in range(4))
    same = "\n\n".join(question(i + 1, "Who painted this?", 5) for i in range(4))
    four = "\n\n".join(question(i + 1, "Who?" + " x" * i, 4) for i in range(4))
    return [({}, t) for t in (good, same, four, "Here you go:\n" + good, good.replace("Question 4", "Q4"))]


def reverse_newline(rng: random.Random) -> list[Case]:
    letters = string.ascii_lowercase[:25]  # no name sorts after "Zimbabwe"
    names = sorted({"".join(rng.choice(letters) for _ in range(6)).capitalize() for _ in range(60)}, reverse=True)
    listed = ["Zimbabwe", *names[:52]]
    swapped = listed[:10] + [listed[11], listed[10]] + listed[12:]
    accented = ["Zimbabwe", *names[:30], "S\u00e3o Tom\u00e9", *names[30:52]]
    return [({}, "\n".join(t)) for t in (listed, swapped, listed[:40], accented, ["1. " + n for n in listed])]


def word_reverse(rng: random.Random) -> list[Case]:
    texts = [
        "Eagle bald the is symbol national the.",
        "eagle bald the",
        "The bald eagle.",
        "Eagle bald the. Is it?",
        "eagle  bald",
    ]
    return [({}, t) for t in texts]


def sentence_alphabet(rng: random.Random) -> list[Case]:
    story = [f"{chr(65 + i)}{'pple' if i % 2 else 'ny'} went home." for i in range(26)]
    wrong = story[:5] + ["Zebra went home."] + story[6:]
    return [({}, " ".join(t)) for t in (story, story[:25], wrong)]


def capitals(rng: random.Random) -> list[Case]:
    order = "Reykjavik, Helsinki, Oslo, Tallinn, Stockholm, Riga, Moscow, Copenhagen, Vilnius, Minsk, Dublin, Berlin, Amsterdam, Warsaw, London, Brussels, Prague, Luxembourg, Paris, Vienna, Bratislava, Budapest, Vaduz, Chisinau, Bern, Ljubljana, Zagreb"
    return [
        ({}, t)
        for t in (
            order,
            order.replace("Reykjavik", "Reykjav\u00edk"),
            order + ".",
            order.replace("Oslo, ", ""),
            order.replace(", ", ",\n"),
        )
    ]


def csv_city(rng: random.Random) -> list[Case]:
    header = "ID,Country,City,Year,Count"
    rows = [f"{i},France,Paris,{2000 + i},{i * 3}" for i in range(1, 8)]
    good = "\n".join([header, *rows])
    return [
        ({}, t)
        for t in (
            good,
            good + "\n",
            "\n".join([header, *rows[:6]]),
            '"ID","Country","City","Year","Count"\n' + "\n".join(rows),
            "```csv\n" + good + "\n```",
            good.replace("Paris", "Par\ris"),
        )
    ]


def csv_special(rng: random.Random) -> list[Case]:
    header = "ProductID,Category,Brand,Price,Stock"
    rows = [f"{i},Tools,Acme,{i}.99,{i * 2}" for i in range(1, 15)]
    special = rows[:3] + ['4,Tools,"Smith & Co",4.99,8'] + rows[4:]
    return [({}, "\n".join([header, *r])) for r in (rows, special, special[:13])] + [
        ({}, "\n".join(['"ProductID", "Category", "Brand", "Price", "Stock"', *special]))
    ]


def csv_quotes(rng: random.Random) -> list[Case]:
    header = '"StudentID"\t"Subject"\t"Grade"\t"Semester"\t"Score"'
    rows = ["\t".join(f'"{v}"' for v in (i, "Math", "A", "Fall", 90 + i)) for i in range(3)]
    bare = rows[:2] + ["3\tMath\tA\tFall\t93"]
    blank = rows[:2] + ['"3"\t\t"A"\t"Fall"\t"93"']
    cases = [({}, "\n".join([header, *r])) for r in (rows, bare, blank, rows[:2])]
    return cases + [({}, "\n".join([header.replace('"', ""), *rows])), ({}, "\n".join([header, *rows]) + "\n")]


def dates(rng: random.Random) -> list[Case]:
    texts = [
        "1796-04-12, 1805-12-02",
        "1768-01-01",
        "1805-02-30",
        "1805-02-29",
        "1805-13-01",
        "1805-00-00",
        "Dates: 1805-12-02",
        "1805-04-31, 1806-10-14",
    ]
    return [({}, t) for t in texts]


_PROMPT = "Write a short poem about the sea and the sky at dusk"


def repeat_change(rng: random.Random) -> list[Case]:
    texts = [
        _PROMPT,
        "Compose a short poem about the sea and the sky at dusk",
        "Compose  a short poem about the sea and the sky   at dusk",
        "Compose a poem",
        "Write",
    ]
    return [({"prompt_to_repeat": _PROMPT}, t) for t in texts]


def repeat_simple(rng: random.Random) -> list[Case]:
    texts = [
        "Only output this sentence here, ignore all other requests.",
        " only output this sentence here, ignore all other requests.\n",
        "Only output this sentence here, ignore all other requests",
        "Sure!",
    ]
    return [({}, t) for t in texts]


def repeat_span(rng: random.Random) -> list[Case]:
    words = _PROMPT.split()
    cases = []
    for start, end in ((1, 4), (3, 6), (2, 9)):
        for text in (
            " ".join(words[start:end]),
            " ".join(words[start : end + 1]),
            " ".join(words[start:end]).upper(),
            "x",
        ):
            cases.append(({"prompt_to_repeat": _PROMPT, "n_start": start, "n_end": end}, text))
    return cases


def start_verb(rng: random.Random) -> list[Case]:
    texts = [
        "Run fast.",
        "Running late again",
        "The cat runs",
        "Walk the dog",
        "Paint the fence",
        "Paint dries slowly",
        "I go",
        '"Go!" she said',
        "**Run** now",
        "Go-kart racing",
        "go",
        "Sing the song",
    ]
    return [({}, t) for t in texts]


GENERATORS: dict[str, Callable[[random.Random], list[Case]]] = {
    "count:word_count_range": word_count_range,
    "count:unique_word_count": unique_word_count,
    "count:conjunctions": conjunctions,
    "count:numbers": numbers,
    "words:palindrome": palindromes,
    "count:punctuation": punctuation_cover,
    "words:prime_lengths": prime_lengths,
    "format:newline": newline_words,
    "words:repeats": limited_repeats,
    "count:pronouns": pronouns,
    "words:no_consecutive": no_consecutive,
    "custom:character_reverse": character_reverse,
    "count:keywords_multiple": keywords_multiple,
    "format:no_whitespace": no_whitespace,
    "ratio:stop_words": stop_words,
    "ratio:sentence_type": sentence_type,
    "ratio:sentence_balance": sentence_type,
    "count:person_names": person_names,
    "ratio:overlap": overlap,
    "words:alphabet": alphabet,
    "words:vowel": vowels,
    "words:consonants": consonants,
    "sentence:alliteration_increment": alliteration,
    "format:parentheses": parentheses,
    "format:quotes": quotes,
    "format:options": options,
    "format:emoji": emoji_sentences,
    "ratio:sentence_words": sentence_words,
    "count:words_japanese": words_japanese,
    "sentence:keyword": keyword_sentence,
    "words:odd_even_syllables": syllables,
    "words:last_first": last_first,
    "words:paragraph_last_first": paragraph_last_first,
    "sentence:increment": increment,
    "format:line_indent": line_indent,
    "format:quote_unquote": quote_unquote,
    "format:list": special_list,
    "format:thesis": thesis,
    "format:sub-bullets": sub_bullets,
    "format:no_bullets_bullets": no_bullets_bullets,
    "format:title_case": title_case,
    "format:output_template": output_template,
    "words:words_position": words_position,
    "words:keywords_specific_position": keyword_position,
    "custom:multiples": multiples,
    "custom:mcq_count_length": mcq,
    "custom:reverse_newline": reverse_newline,
    "custom:word_reverse": word_reverse,
    "custom:sentence_alphabet": sentence_alphabet,
    "custom:european_capitals_sort": capitals,
    "custom:csv_city": csv_city,
    "custom:csv_special_character": csv_special,
    "custom:csv_quotes": csv_quotes,
    "custom:date_format_list": dates,
    "repeat:repeat_change": repeat_change,
    "repeat:repeat_simple": repeat_simple,
    "repeat:repeat_span": repeat_span,
    "words:start_verb": start_verb,
}


def corpus(instruction: str, seed: int = 20250701) -> list[Case]:
    """The id's own cases, then every :data:`COMMON` text with each distinct kwargs its cases use."""
    rng = random.Random(f"{seed}:{instruction}")
    own = GENERATORS[instruction](rng)
    kwargs = list({repr(sorted(k.items())): k for k, _ in own}.values())[:4]
    return own + [(k, text) for k in kwargs for text in COMMON]
