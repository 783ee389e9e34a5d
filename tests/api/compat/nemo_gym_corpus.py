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
