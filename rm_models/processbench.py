"""ProcessBench evaluation of any ``prm`` verifier, in process or through a running service.

ProcessBench (Zheng et al., 2024, arXiv 2412.06559) asks a PRM for the earliest erroneous step of
each solution (-1 when every step is right). Its metric is the harmonic mean of the accuracy on
erroneous solutions (predicted index == labelled index) and on correct ones (predicted -1):

    F1 = 2 · acc_err · acc_ok / (acc_err + acc_ok)

A PRM's prediction is the first step whose reward is below ``threshold``. Each JSONL line needs
``problem``, ``steps`` (list of str) and ``label`` (int); ``id`` is kept when present. A sample
the PRM could not score counts as a wrong prediction and is reported in ``n_failed``.

Run it against a service::

    python -m rewardhub.models.processbench gsm8k.jsonl --url http://localhost:8000 --verifier prm \\
        --config '{"model": "Qwen/Qwen2.5-Math-PRM-7B"}'

or without ``--url`` to score in this process through the installed verifier.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .scoring import first_below

__all__ = [
    "ProcessBenchItem",
    "ProcessBenchReport",
    "Scorer",
    "evaluate",
    "evaluate_file",
    "http_scorer",
    "local_scorer",
    "main",
    "processbench_f1",
]

Scorer = Callable[[list[Sample]], list[Result]]
"""Scores a batch of samples, results in the same order."""


class ProcessBenchItem(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str | None = None
    problem: str
    steps: list[str]
    label: int

    def sample(self) -> Sample:
        return Sample(id=self.id, prompt=self.problem, response="\n\n".join(self.steps), metadata={"steps": self.steps})


@dataclass(frozen=True)
class ProcessBenchReport:
    f1: float
    error_accuracy: float
    correct_accuracy: float
    n: int
    n_error: int
    n_correct: int
    n_failed: int


def processbench_f1(predictions: Sequence[int], labels: Sequence[int]) -> tuple[float, float, float]:
    """(F1, accuracy on erroneous, accuracy on correct) of earliest-error predictions."""
    err = [p == y for p, y in zip(predictions, labels, strict=True) if y != -1]
    ok = [p == -1 for p, y in zip(predictions, labels, strict=True) if y == -1]
    acc_err = sum(err) / len(err) if err else 0.0
    acc_ok = sum(ok) / len(ok) if ok else 0.0
    f1 = 2 * acc_err * acc_ok / (acc_err + acc_ok) if acc_err + acc_ok > 0 else 0.0
    return f1, acc_err, acc_ok


def evaluate(
    items: Iterable[ProcessBenchItem], scorer: Scorer, threshold: float = 0.5, batch_size: int = 64
) -> ProcessBenchReport:
    items = list(items)
    predictions: list[int] = []
    failed = 0
    for start in range(0, len(items), batch_size):
        chunk = items[start : start + batch_size]
        for item, result in zip(chunk, scorer([i.sample() for i in chunk]), strict=True):
            if result.status != "ok" or result.steps is None or len(result.steps) != len(item.steps):
                failed += 1
                predictions.append(-2)  # matches no label: a wrong prediction
            else:
                predictions.append(first_below(result.steps, threshold))
    labels = [i.label for i in items]
    f1, acc_err, acc_ok = processbench_f1(predictions, labels)
    n_error = sum(1 for y in labels if y != -1)
    return ProcessBenchReport(f1, acc_err, acc_ok, len(items), n_error, len(items) - n_error, failed)


def evaluate_file(path: str | Path, scorer: Scorer, threshold: float = 0.5, batch_size: int = 64) -> ProcessBenchReport:
    with open(path, encoding="utf-8") as handle:
        items = [ProcessBenchItem.model_validate_json(line) for line in handle if line.strip()]
    return evaluate(items, scorer, threshold, batch_size)


def local_scorer(verifier: Verifier, config: VerifierConfig) -> Scorer:
    """Score in this process: the verifier's own batching, errors as in the service (the same
    :func:`~rewardhub.calls.run_call`, on a registry of this verifier's class)."""
    from rewardhub.calls import Call, run_call
    from rewardhub.registry import Registry

    registry = Registry([type(verifier)])
    return lambda samples: run_call(registry, Call(verifier.name, config, tuple(samples), verifier.kind, math.inf))


def http_scorer(
    url: str,
    verifier: str,
    config: dict[str, Any] | None = None,
    transport: httpx.BaseTransport | None = None,
    timeout_s: float = 600.0,
    api_key: str | None = None,
) -> Scorer:
    """Score through a running service's ``POST /v1/score``."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    client = httpx.Client(base_url=url, transport=transport, timeout=timeout_s, headers=headers)
    spec = {"name": verifier, "config": config or {}}

    def score(samples: list[Sample]) -> list[Result]:
        body = {"verifier": spec, "samples": [s.model_dump(exclude_none=True, mode="json") for s in samples]}
        response = client.post("/v1/score", json=body)
        response.raise_for_status()
        return [Result.model_validate(r) for r in response.json()["results"]]

    return score


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rewardhub.models.processbench", description="ProcessBench F1 of a prm verifier."
    )
    parser.add_argument("file", help="ProcessBench JSONL: problem, steps, label per line")
    parser.add_argument("--url", help="base URL of a running rewardhub service; in-process when omitted")
    parser.add_argument("--verifier", default="prm", help="name of the prm verifier (default: prm)")
    parser.add_argument("--config", default="{}", help="verifier config as JSON")
    parser.add_argument("--threshold", type=float, default=0.5, help="a step below this is an error (default 0.5)")
    parser.add_argument("--batch-size", type=int, default=64, help="samples per request (default 64)")
    args = parser.parse_args(argv)
    config = json.loads(args.config)
    if args.url:
        scorer = http_scorer(args.url, args.verifier, config)
    else:
        from .base import installed_verifier

        verifier = installed_verifier(args.verifier)
        scorer = local_scorer(verifier, verifier.Config.model_validate(config))
    report = evaluate_file(args.file, scorer, args.threshold, args.batch_size)
    json.dump(asdict(report), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
