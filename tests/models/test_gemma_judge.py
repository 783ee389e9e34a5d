"""A judge of another family than the policy: the kit's Gemma 3 270M (a base model) through plain prompts.

The policy of the real-model recipe is SmolLM2; Gemma is the second family, and a base model: its
GGUF has no chat template, so it judges with ``chat_template: false`` (rewardhub.models.judging.ask).
The folder comes from ``rewardhub models install gemma3-270m``; .ci/run does not install it (the
conversion takes 1-5 minutes of the CI's two cores, over the suite's time goal), so without it these
tests skip and say which command installs it. One load of the model serves the module.

A 270M base model is a weak judge (bench/judge_families.py measures it: chance on clear-cut cases),
so the assertions are about what the verdict is: the base model's own next-token distribution after
its BOS and the plain prompt, named by its weights, or an error; never a chat it cannot read.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from rewardhub.models import Judge, PairwiseJudge, RubricJudge, kit
from rewardhub.models.backends import get_backend
from rewardhub.models.base import model_precision
from rewardhub.models.config import backend_spec
from rewardhub.types import Sample

pytestmark = pytest.mark.slow

NAME = "gemma3-270m"
RIGHT = Sample(prompt="What is 7 + 5?", reference="12", response="7 + 5 = 12. The answer is 12.")
WRONG = Sample(prompt="What is 7 + 5?", reference="12", response="7 + 5 = 13. The answer is 13.")


def plain(cls: type = Judge, **overrides: object) -> Judge.Config:
    options = {"model": NAME, "backend": "transformers", "verdict": "logprobs", "chat_template": False}
    return cls.Config(**{**options, **overrides})  # type: ignore[attr-defined, no-any-return]


@pytest.fixture(scope="module")
def folder() -> Path:
    if kit.installed_manifest(NAME) is None:
        pytest.skip(
            f"{NAME} is not installed: run `rewardhub models install {NAME}` (.ci/run does not: its conversion"
            " takes minutes)"
        )
    return kit.model_folder(NAME)


def test_the_verdict_is_the_base_models_next_token_after_its_bos_and_the_plain_prompt(folder: Path) -> None:
    config = plain()
    [right, wrong] = Judge().score_batch([RIGHT, WRONG], config)
    backend = get_backend(backend_spec(config))
    model, tokenizer = backend.model("causal"), backend.tokenizer
    for sample, result in ((RIGHT, right), (WRONG, wrong)):
        print(f"gemma judge verify (plain, logprobs): P(True) = {result.score:.4f}")
        assert result.status == "ok"
        request = Judge()._prepare_verify(sample, config)
        assert request.prompt is not None and request.prompt.endswith("\n\nAnswer:")  # type: ignore[union-attr]
        ids = tokenizer(request.prompt).input_ids  # type: ignore[union-attr]
        assert ids[0] == tokenizer.bos_token_id  # what a base model saw in training before any text
        with torch.inference_mode():
            logits = model(torch.tensor([ids], device=model.device)).logits[0, -1].float()
        top = torch.log_softmax(logits, -1).topk(config.top_logprobs)
        tokens = tokenizer.convert_ids_to_tokens(top.indices)
        words = [tokenizer.convert_tokens_to_string([token]).strip().lower() for token in tokens]  # "True", " true"
        mass = {
            w: sum(math.exp(lp) for word, lp in zip(words, top.values.tolist(), strict=True) if word == w.lower())
            for w in ("True", "False")
        }
        assert mass["True"] + mass["False"] > 0
        # float32 (a CPU): the batch's left padding changes nothing; bfloat16 (a GPU) rounds a padded
        # batch and a lone sequence differently
        tolerance = 1e-4 if model.dtype == torch.float32 else 2e-2
        assert result.score == pytest.approx(mass["True"] / (mass["True"] + mass["False"]), abs=tolerance)


def test_the_verdict_names_gemmas_weights_and_the_plain_prompt(folder: Path) -> None:
    config = plain()
    [result] = Judge().score_batch([RIGHT], config)
    model = result.details["model"]
    assert model["name"] == NAME and model["model"] == str(folder)
    assert model["weights"] == kit.installed_manifest(NAME)["weights_sha256"][:16]  # type: ignore[index]
    assert model["dtype"] == model_precision(config)
    assert model["decoding"]["prompt"] == "plain"
    key = Judge.verdict_key(config)
    assert key["weights"] == model["weights"]
    assert key["config_hash"] != Judge.verdict_key(plain(chat_template=True))["config_hash"]  # asked another way


def test_asked_through_a_chat_template_it_has_not_got_gemma_gives_an_error_never_a_verdict(folder: Path) -> None:
    [result] = Judge().score_batch([RIGHT], plain(chat_template=True))
    assert result.status == "error" and result.score == 0.0
    assert "has no chat template; set chat_template=false" in (result.error or "")


def test_pairwise_and_rubric_judge_with_gemma(folder: Path) -> None:
    results = PairwiseJudge().score_group([RIGHT, WRONG], plain(PairwiseJudge, ties=False))
    print("gemma pairwise (plain, logprobs, both orders):", [round(r.score, 4) for r in results])
    assert [r.status for r in results] == ["ok", "ok"]
    assert results[0].score + results[1].score == pytest.approx(1.0)
    rubric = [{"criterion": "States that 7 + 5 is 12", "weight": 2}, {"criterion": "Claims 7 + 5 is 13", "weight": -1}]
    [result] = RubricJudge().score_batch([RIGHT.model_copy(update={"reference": rubric})], plain(RubricJudge))
    print("gemma rubric (plain, logprobs):", result.details.get("criteria"))
    assert result.status == "ok"
    satisfied = [c["satisfied"] for c in result.details["criteria"]]
    assert result.score == pytest.approx((2 * satisfied[0] - satisfied[1]) / 3)


def test_a_grade_by_log_probabilities_reads_the_digit_after_the_space(folder: Path) -> None:
    [result] = Judge().score_batch([RIGHT], plain(mode="grade", scale=(0, 9)))
    print(f"gemma grade (plain, logprobs): {result.details.get('grade')}")
    assert result.status == "ok" and 0.0 <= result.details["grade"] <= 9.0
    assert result.score == pytest.approx(result.details["grade"] / 9)
