"""Prompts for the addition examples: the toy task (``a+b=``, single digits) and two-digit chat prompts.

Toy: all 100 single-digit pairs, split once with a fixed seed into 90 training prompts and 10
held-out prompts, so the evaluation measures addition the policy has never been rewarded for. The
reference is the sum as a string, judged by the service's ``exact`` verifier.

Two-digit (``examples/smollm2_addition.yaml``): chat prompts "What is a + b? Reply with only the
number." for a, b in 10..99. The 8100 pairs are shuffled once with a fixed seed; the first
``--chat-held-out`` (64) are the held-out split and are never written to the training file, the next
``--chat-train`` (1000) are the training prompts (a sample keeps the committed file small). The
reference is the sum, judged by ``math`` on the response's final number.

    python examples/make_addition_data.py            # writes examples/data/addition_{train,eval}.jsonl
                                                     # and examples/data/smollm2_addition_{train,eval}.jsonl
    python examples/make_addition_data.py --out DIR --held-out 10 --seed 1234
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

__all__ = ["CHAT_QUESTION", "addition_records", "chat_addition_records", "main", "split_pairs", "split_two_digit"]

CHAT_QUESTION = "What is {a} + {b}? Reply with only the number."


def split_pairs(held_out: int = 10, seed: int = 1234) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(training pairs, held-out pairs) of single digits."""
    pairs = [(a, b) for a in range(10) for b in range(10)]
    random.Random(seed).shuffle(pairs)
    return sorted(pairs[held_out:]), sorted(pairs[:held_out])


def addition_records(pairs: list[tuple[int, int]]) -> list[dict[str, str]]:
    return [{"id": f"{a}+{b}", "prompt": f"{a}+{b}=", "reference": str(a + b)} for a, b in pairs]


def split_two_digit(
    held_out: int = 64, train: int = 1000, seed: int = 1234
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(training pairs, held-out pairs) of two-digit numbers; the two never share a pair."""
    pairs = [(a, b) for a in range(10, 100) for b in range(10, 100)]
    random.Random(seed).shuffle(pairs)
    return pairs[held_out : held_out + train], sorted(pairs[:held_out])


def chat_addition_records(pairs: list[tuple[int, int]]) -> list[dict]:
    return [
        {
            "id": f"{a}+{b}",
            "prompt": [{"role": "user", "content": CHAT_QUESTION.format(a=a, b=b)}],
            "reference": str(a + b),
        }
        for a, b in pairs
    ]


def _write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    print(f"wrote {len(records)} prompts to {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    parser.add_argument("--held-out", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--chat-held-out", type=int, default=64)
    parser.add_argument("--chat-train", type=int, default=1000)
    args = parser.parse_args(argv)
    train, held_out = split_pairs(args.held_out, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    _write(args.out / "addition_train.jsonl", addition_records(train))
    _write(args.out / "addition_eval.jsonl", addition_records(held_out))
    chat_train, chat_held_out = split_two_digit(args.chat_held_out, args.chat_train, args.seed)
    _write(args.out / "smollm2_addition_train.jsonl", chat_addition_records(chat_train))
    _write(args.out / "smollm2_addition_eval.jsonl", chat_addition_records(chat_held_out))


if __name__ == "__main__":
    main()
