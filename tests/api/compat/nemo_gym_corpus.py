"""A seeded corpus over the behaviour of NeMo-Gym's mcqa, gpqa_diamond and reasoning_gym servers.

Each case is ``(server, server_mode, row, text, shape)``: the task row's fields, the response text
a model wrote, and the name of the way it was written (the disagreement classes are counted by
shape). ``server_mode`` is mcqa's server-config ``grading_mode`` (``lenient_answer_colon_md`` can
only be set there; it wins over the row's), or None: rewardhub gets it as ``mcqa:{mode}``. It is built in NeMo-Gym's child process (``nemo_gym_side.py``) and
only there, so that both sides score the same rows.
"""

from __future__ import annotations

import random
from typing import Any

SEED = 20260
LETTERS = "ABCDE"
WORDS = ["red", "blue", "green", "seven", "Paris", "carbon", "photon", "x = 4", "none of these", "42"]
MCQA_MODES = ["strict_single_letter_boxed", "lenient_boxed", "lenient_answer_colon", "lenient_answer_colon_md"]
RG_FAMILIES = [
    "basic_arithmetic", "chain_sum", "decimal_arithmetic", "gcd", "letter_counting", "spell_backward",
    "word_sorting", "number_sorting", "arc_agi", "n_queens", "binary_matrix", "coin_flip", "simple_equations",
    "fraction_simplification", "time_intervals", "propositional_logic", "knights_knaves", "base_conversion",
]  # fmt: skip
RG_CONFIGURED = {  # entries of non-default configs: the server scores them with the default config
    "decimal_arithmetic": {"min_num_decimal_places": 6, "max_num_decimal_places": 8},
    "time_intervals": {"max_time_difference_seconds": 600, "max_date_difference_days": 3},
    "word_ladder": {"min_word_length": 3, "max_word_length": 3},
}


def choice_texts(rng: random.Random, gold: str, options: dict[str, str]) -> list[tuple[str, str]]:
    """The ways a model writes a multiple-choice answer, right and wrong."""
    other = rng.choice([letter for letter in options if letter != gold])
    text = options[gold]
    return [
        ("boxed", f"The answer is \\boxed{{{gold}}}."),
        ("boxed_wrong", f"So \\boxed{{{other}}}"),
        ("boxed_brackets", f"Final: \\boxed{{[{gold}]}}"),
        ("boxed_parens", f"\\boxed{{({gold})}}"),
        ("boxed_text", f"\\boxed{{\\text{{{gold}}}}}"),
        ("boxed_label", f"\\boxed{{{gold}: {text}}}"),
        ("boxed_option_text", f"I pick \\boxed{{{text}}}"),
        ("boxed_lower", f"\\boxed{{{gold.lower()}}}"),
        ("think_then_box", f"<think>maybe \\boxed{{{other}}}</think>\n\\boxed{{{gold}}}"),
        ("box_in_think_only", f"<think>it is \\boxed{{{gold}}}</think>\nDone."),
        ("answer_colon", f"Reasoning here.\nAnswer: {gold}"),
        ("answer_colon_md", f"Reasoning.\n**Answer:** {gold}"),
        ("answer_colon_text", f"Answer: {text}"),
        ("answer_colon_paren", f"Answer: ({gold})"),
        ("answer_tag", f"<answer>{gold}</answer>"),
        ("answer_is_prose", f"After checking, the answer is ({gold}) because {text}."),
        ("final_line", f"Let me think.\n{gold}"),
        ("two_letters", f"Answer: {gold} or {other}"),
        ("two_boxes", f"\\boxed{{{gold}}} or maybe \\boxed{{{other}}}"),
        ("unclosed_box", f"\\boxed{{{gold}"),
        ("not_an_option", "\\boxed{Z}"),
        ("empty", ""),
        ("whitespace", "  \n "),
        ("prose_only", f"I think {text} is right."),
    ]


def mcqa_cases(rng: random.Random, server: str, rows: int) -> list[dict[str, Any]]:
    cases = []
    for index in range(rows):
        count = rng.choice([3, 4, 5])
        options = dict(zip(LETTERS[:count], rng.sample(WORDS, count), strict=True))
        gold = rng.choice(list(options))
        row: dict[str, Any] = {"options": [{k: v} for k, v in options.items()], "expected_answer": gold}
        if server == "gpqa_diamond" and index % 4 == 3:
            row = {"expected_answer": gold}  # gpqa_diamond takes any capital without options
        modes = MCQA_MODES if server == "mcqa" else [None]
        for mode in modes:
            for shape, text in choice_texts(rng, gold, options):
                task = dict(row)
                server_mode = None
                if mode == "lenient_answer_colon_md":
                    server_mode = mode  # only the server's config can name it
                    if index % 2:
                        task["template_metadata"] = {"answer_prefix": "Final choice:"}
                        text = text.replace("Answer:", "Final choice:")
                elif mode is not None and index % 3 == 2:
                    server_mode = mode  # the server's config names it, over another mode in the row
                    task["grading_mode"] = "lenient_answer_colon" if mode != "lenient_answer_colon" else "lenient_boxed"
                elif mode is not None:
                    task["grading_mode"] = mode
                cases.append({"server": server, "server_mode": server_mode, "row": task, "text": text, "shape": shape})
    return cases


def reasoning_gym_texts(rng: random.Random, gold: str, wrong: str) -> list[tuple[str, str]]:
    return [
        ("answer_tag", f"<answer>{gold}</answer>"),
        ("answer_tag_wrong", f"<answer>{wrong}</answer>"),
        ("think_then_tag", f"<think>first try <answer>{wrong}</answer></think>\n<answer>{gold}</answer>"),
        ("tag_in_think_only", f"<think><answer>{gold}</answer></think> so that is it"),
        ("boxed", f"The result is \\boxed{{{gold}}}"),
        ("raw", gold),
        ("prose_around", f"After working it out, the answer is {gold}."),
        ("unclosed_tag", f"<answer>{gold}"),
        ("two_tags", f"<answer>{wrong}</answer> no wait <answer>{gold}</answer>"),
        ("one_more_digit", f"<answer>{gold}1</answer>"),
        ("empty", ""),
    ]


def reasoning_gym_cases(rng: random.Random, per_family: int) -> list[dict[str, Any]]:
    import json

    import reasoning_gym

    cases = []
    for family, config in [*((f, {}) for f in RG_FAMILIES), *RG_CONFIGURED.items()]:
        entries = reasoning_gym.create_dataset(family, size=per_family + 1, seed=rng.randrange(10**6), **config)
        items = [entries[i] for i in range(per_family + 1)]
        for index, entry in enumerate(items[:per_family]):
            entry = json.loads(json.dumps(entry))  # NeMo-Gym's rows are JSON lines
            gold = entry["answer"] or ""
            wrong = items[index + 1]["answer"] or "0"
            row = {"question": entry["question"], "answer": entry["answer"], "metadata": entry["metadata"]}
            for shape, text in reasoning_gym_texts(rng, gold, wrong):
                cases.append({"server": "reasoning_gym", "server_mode": None, "row": row, "text": text, "shape": shape})
    return cases


def corpus() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    return [*mcqa_cases(rng, "mcqa", 6), *mcqa_cases(rng, "gpqa_diamond", 8), *reasoning_gym_cases(rng, 2)]


# -- math_with_judge -------------------------------------------------------------------------------


def math_golds(rng: random.Random) -> list[tuple[str, str, list[str], list[str]]]:
    """``(family, gold, right spellings, wrong answers)``: golds of the shapes datasets hold, each with
    the ways a model writes it right and a few near misses."""
    a, b, c = rng.randint(2, 9), rng.randint(11, 97), rng.randint(2, 7)
    n = rng.randint(12, 999)
    p, q = rng.choice([(1, 3), (2, 7), (3, 8), (5, 6), (4, 9)])
    root = rng.choice([2, 3, 5, 7])
    lo, hi = -rng.randint(1, 9), rng.randint(1, 9)
    pct = rng.choice([12, 25, 40, 75])
    day = rng.choice(["Monday", "Tuesday", "Friday"])
    return [
        ("integer", str(n), [str(n), f"{n}.0", f"n = {n}"], [str(n + 1), str(-n)]),
        ("negative", str(-b), [str(-b), f"-{b}.0", f"x = -{b}"], [str(b), str(-b - 1)]),
        ("thousands", f"{n}{b:03d}", [f"{n},{b:03d}", f"{n}{b:03d}", f"{n}\\,{b:03d}"], [f"{n}{b + 1:03d}", str(n)]),
        ("fraction", f"\\frac{{{p}}}{{{q}}}", [f"\\dfrac{{{p}}}{{{q}}}", f"{p}/{q}", f"\\frac{{{2 * p}}}{{{2 * q}}}"],
         [f"\\frac{{{q}}}{{{p}}}", f"{p / q:.2f}"]),
        ("decimal", f"{p / 8:g}", [f"{p / 8:g}", f"\\frac{{{p}}}{{8}}", f"{p / 8:.4f}"], [f"{p / 8 + 0.1:g}", str(p)]),
        ("radical", f"{c}\\sqrt{{{root}}}", [f"{c}\\sqrt{{{root}}}", f"\\sqrt{{{c * c * root}}}", f"{c} \\sqrt {root}"],
         [f"{c}\\sqrt{{{root + 1}}}", f"{c * root}", f"{c + 1}\\sqrt{{{root}}}"]),
        ("pi", f"{c}\\pi", [f"{c}\\pi", f"\\pi \\cdot {c}", f"{c} \\pi"], [f"{c + 1}\\pi", f"{c}"]),
        ("expression", f"x^2 + {2 * a}x + {a * a}", [f"(x+{a})^2", f"x^{{2}}+{2 * a} x+{a * a}"], [f"(x-{a})^2", f"x^2+{a * a}"]),
        ("interval", f"({lo}, {hi}]", [f"({lo},{hi}]", f"\\left({lo}, {hi}\\right]", f"{lo} < x \\le {hi}"],
         [f"[{lo}, {hi}]", f"({lo}, {hi})", f"({lo}, {hi + 1}]"]),
        ("infinite_interval", f"[{hi}, \\infty)", [f"[{hi},\\infty)", f"x \\ge {hi}", f"[{hi}, +\\infty)"],
         [f"({hi}, \\infty)", f"(-\\infty, {hi}]"]),
        ("set", f"\\{{{lo}, {hi}\\}}", [f"\\{{{hi}, {lo}\\}}", f"{lo}, {hi}", f"x = {lo}, x = {hi}"], [f"\\{{{lo}\\}}", f"{lo}, {hi}, 0"]),
        ("roots", f"{lo}, {hi}", [f"{hi}, {lo}", f"x={lo} \\text{{ or }} x={hi}", f"\\{{{lo},{hi}\\}}"], [str(hi), f"{lo}, {hi + 1}"]),
        ("tuple", f"({a}, {b})", [f"({a},{b})", f"\\left( {a}, {b} \\right)", f"x={a}, y={b}"], [f"({b}, {a})", f"({a}, {b + 1})"]),
        ("multi_part_boxes", f"(a) \\boxed{{{a}}}; (b) \\boxed{{{b}}}", [f"{a}, {b}", f"{a}}}$ for (a), and for (b) $\\boxed{{{b}"],
         [str(b), str(a), f"{b}, {a}"]),
        ("multi_part_list", f"{a}, {b}, {c}", [f"{a}, {b}, {c}", f"{c}, {b}, {a}"], [f"{a}, {b}", str(c)]),
        ("text", "\\text{even}", ["\\text{even}", "even", "\\text{Even}"], ["\\text{odd}", "0"]),
        ("word", day, [f"\\text{{{day}}}", day, day.lower()], ["\\text{Sunday}", "1"]),
        ("units", f"{b} \\text{{ cm}}", [f"{b}", f"{b}\\text{{ cm}}", f"{b} \\mbox{{cm}}"], [f"{b + 1}\\text{{ cm}}", f"{b * 10}"]),
        ("money", f"\\${b}.50", [f"{b}.50", f"\\${b}.50", f"{b}.5"], [f"{b}", f"{b}.05"]),
        ("percent", f"{pct}\\%", [f"{pct}\\%", f"{pct}", f"{pct / 100:g}"], [f"{pct + 5}\\%", f"{pct / 10:g}"]),
        ("degrees", f"{a * 10}^\\circ", [f"{a * 10}^\\circ", f"{a * 10}", f"{a * 10}^{{\\circ}}"], [f"{a * 10 + 10}^\\circ"]),
        ("equation", f"y = {a}x + {c}", [f"y={a}x+{c}", f"y = {c} + {a}x"], [f"y = {c}x + {a}", f"{a}x + {c}"]),
        ("choice_sentence", f"\\text{{The final answer is (B) }} {b}", [f"{b}", "B", "(B)"], [f"{b + 1}", "C"]),
        ("choice_label", f"\\textbf{{(C) }}\\frac{{{p}}}{{{q}}}", [f"\\frac{{{p}}}{{{q}}}", "C", "\\text{(C)}"],
         [f"\\frac{{{q}}}{{{p}}}", "A"]),
        ("dollar_wrapped", f"${a}\\sqrt{{{root}}}$", [f"{a}\\sqrt{{{root}}}", f"\\sqrt{{{a * a * root}}}"], [f"{a}\\sqrt{{{root + 1}}}"]),
    ]  # fmt: skip


def math_texts(rng: random.Random, rights: list[str], wrongs: list[str]) -> list[tuple[str, str]]:
    """The ways a model writes a final answer, right and wrong: each right spelling boxed, then the
    shapes around one right and one wrong answer."""
    right, wrong = rights[0], rng.choice(wrongs)
    texts = [(f"boxed_right_{k}", f"So the answer is $\\boxed{{{r}}}$.") for k, r in enumerate(rights)]
    texts += [(f"boxed_wrong_{k}", f"Therefore \\boxed{{{w}}}") for k, w in enumerate(wrongs)]
    return texts + [
        ("answer_is_no_box", f"The answer is {right}."),
        ("think_then_box", f"<think>Maybe \\boxed{{{wrong}}}? No.</think>\nThe answer is $\\boxed{{{right}}}$."),
        ("box_in_think_only", f"<think>It is \\boxed{{{right}}}.</think>\nSo the answer is {right}."),
        ("think_right_then_wrong", f"<think>\\boxed{{{right}}}</think>\nFinal: \\boxed{{{wrong}}}"),
        ("revised", f"First \\boxed{{{wrong}}}. Wait, that is wrong; correcting it: \\boxed{{{right}}}."),
        ("revised_away", f"First \\boxed{{{right}}}. Wait, that is wrong; correcting it: \\boxed{{{wrong}}}."),
        ("hedge_two_boxes", f"Either \\boxed{{{right}}} or \\boxed{{{wrong}}}."),
        ("hedge_one_box", f"\\boxed{{{right} \\text{{ or }} {wrong}}}"),
        ("display_box", f"Thus\n\\[\n\\boxed{{{right}}}\n\\]"),
        ("final_answer_line", f"**Final Answer**\n\n$\\boxed{{{right}}}$"),
        ("unclosed_box", f"\\boxed{{{right}"),
        ("empty_box", "\\boxed{}"),
        ("labelled_box", f"\\boxed{{\\text{{Answer: }} {right}}}"),
    ]


def math_cases(rng: random.Random, rows: int) -> list[dict[str, Any]]:
    cases = []
    for _ in range(rows):
        for family, gold, rights, wrongs in math_golds(rng):
            row = {"question": f"A {family} problem.", "expected_answer": gold}
            for shape, text in math_texts(rng, rights, wrongs):
                cases.append({"server": "math_with_judge", "server_mode": None, "row": row, "text": text,
                              "shape": f"{family}/{shape}"})  # fmt: skip
    return cases


def math_corpus() -> list[dict[str, Any]]:
    return math_cases(random.Random(SEED + 1), 2)
