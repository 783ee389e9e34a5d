"""Prompts for the toy addition task: ``a+b=`` with single digits, answered by the sum.

All 100 pairs, split once with a fixed seed into 90 training prompts and 10 held-out prompts,
so the evaluation measures addition the policy has never been rewarded for. The reference is the
sum as a string, judged by the service's ``exact`` verifier.

    python examples/make_addition_data.py            # writes examples/data/addition_{train,eval}.jsonl
    python examples/make_addition_data.py --out DIR --held-out 10 --seed 1234
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

__all__ = ["addition_records", "main", "split_pairs"]


def split_pairs(held_out: int = 10, seed: int = 1234) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(training pairs, held-out pairs) of single digits."""
    pairs = [(a, b) for a in range(10) for b in range(10)]
    random.Random(seed).shuffle(pairs)
    return sorted(pairs[held_out:]), sorted(pairs[:held_out])


def addition_records(pairs: list[tuple[int, int]]) -> list[dict[str, str]]:
    return [{"id": f"{a}+{b}", "prompt": f"{a}+{b}=", "reference": str(a + b)} for a, b in pairs]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    parser.add_argument("--held-out", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args(argv)
    train, held_out = split_pairs(args.held_out, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, pairs in (("addition_train.jsonl", train), ("addition_eval.jsonl", held_out)):
        path = args.out / name
        path.write_text("".join(json.dumps(r) + "\n" for r in addition_records(pairs)))
        print(f"wrote {len(pairs)} prompts to {path}")


if __name__ == "__main__":
    main()
