"""Every model verifier on a real pretrained model: SmolLM2-135M-Instruct from the model kit.

The folder comes from ``rewardhub models install smollm2-135m-instruct`` (.ci/run runs it before
pytest); without it these tests skip, except under CI, where a missing model is a failure. One
load of the model serves the whole module (the backends keep it per process); prompts are small
arithmetic questions with right and wrong answers, decoding is greedy and short. The verdicts
are printed: a 135M model is a weak judge, so the assertions are about what a verdict must be
(readable or an error with the raw reply, in range, named by its weights), not about its taste.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import sys
import types
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
import torch

from rewardhub.calls import Call, run_call
from rewardhub.cli import main
from rewardhub.models import ImplicitPRM, Judge, PairwiseJudge, ProcessRM, RubricJudge, kit
from rewardhub.models.backends import get_backend
from rewardhub.models.base import model_precision
from rewardhub.models.config import backend_spec
from rewardhub.registry import Registry
from rewardhub.types import Sample
from rewardhub.verifiers.self_certainty import SelfCertaintyVerifier

pytestmark = pytest.mark.slow

NAME = "smollm2-135m-instruct"
RIGHT = Sample(prompt="What is 7 + 5?", reference="12", response="7 + 5 = 12. The answer is 12.")
WRONG = Sample(prompt="What is 7 + 5?", reference="12", response="7 + 5 = 13. The answer is 13.")
STEPS = Sample(prompt="What is 9 * 3 + 1?", response="9 * 3 = 27.\n\n27 + 1 = 28.\n\nThe answer is 28.")


def judge_config(**overrides: object) -> Judge.Config:
    return Judge.Config(**{"model": NAME, "backend": "transformers", **overrides})


def show(label: str, results: list) -> None:
    for r in results:
        print(f"{label}: status={r.status} score={r.score:.4f} error={r.error!r} details={_short(r.details)}")


def _short(details: dict) -> str:
    return json.dumps({k: v for k, v in details.items() if k != "model"}, default=str)[:300]


@pytest.fixture(scope="module")
def folder() -> Path:
    if kit.installed_manifest(NAME) is None:
        message = f"{NAME} is not installed: run `rewardhub models install {NAME}` (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return kit.model_folder(NAME)


@pytest.fixture(scope="module")
def perturbed(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A policy that is SmolLM2 with every weight nudged (seeded), saved as a plain folder."""
    model = get_backend(backend_spec(judge_config())).model("causal")
    out = tmp_path_factory.mktemp("perturbed")
    generator = torch.Generator().manual_seed(0)
    state = {
        name: t + 0.02 * t.float().std().item() * torch.randn(t.shape, generator=generator).to(t.device, t.dtype)
        for name, t in model.state_dict().items()
    }
    model.save_pretrained(out, state_dict=state)
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        (out / name).write_bytes((folder / name).read_bytes())
    return out


# ---- the kit ---------------------------------------------------------------------------------


def test_installed_folder_is_what_the_manifest_says(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = json.loads((folder / kit.MANIFEST).read_text())
    assert manifest["source_sha256"] == kit.KNOWN_MODELS[NAME].sha256
    weights = hashlib.sha256(b"model.safetensors\0")  # each weight file's name, a NUL, its bytes
    with (folder / "model.safetensors").open("rb") as handle:
        while block := handle.read(1 << 20):
            weights.update(block)
    assert manifest["weights_sha256"] == weights.hexdigest()

    def no_pip(requirements: list[str]) -> None:
        raise AssertionError(f"an installed model must not reach pip: {requirements}")

    assert kit.install(NAME, pip=no_pip) == (folder, manifest)  # a second install is the folder as it is
    assert main(["models", "list"]) == 0
    assert f"{NAME:<24} installed  {folder}" in capsys.readouterr().out


def test_a_gguf_that_does_not_match_its_pinned_hash_is_refused(folder: Path, tmp_path: Path) -> None:
    # a file of a distribution that every test environment has stands in for the GGUF: the kit's
    # models folder may be cached from an earlier run while its weights package is not installed
    forged = kit.KnownModel("forged", ("pytest",), (("pytest", "__init__.py"),), "0" * 64, "a pin that does not match")
    with pytest.raises(kit.BackendError, match="not the pinned"):
        kit.gguf_file(forged, tmp_path)


def test_a_model_that_is_not_installed_is_an_error_status_never_another_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REWARDHUB_MODELS_DIR", str(tmp_path))
    (tmp_path / NAME).mkdir()  # an interrupted install: a folder without its manifest is no model
    config = judge_config(verdict="logprobs")
    [result] = run_call(Registry([Judge]), Call("judge", config, (RIGHT,), "judge", 60))
    print(result)
    assert result.status == "error"
    assert f"model {NAME} is not installed: run `rewardhub models install {NAME}`" in (result.error or "")
    assert Judge.verdict_key(config)["weights"] == "not-installed"


def test_the_verdict_key_changes_with_the_weights_under_one_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REWARDHUB_MODELS_DIR", str(tmp_path / "kit"))
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights one")
    config = judge_config(model=str(folder))
    before = Judge.verdict_key(config)
    (folder / "model.safetensors").write_bytes(b"weights two, retrained in place")
    after = Judge.verdict_key(config)
    assert before["config_hash"] != after["config_hash"]  # the reward cache addresses by config_hash
    assert before["weights"] != after["weights"]


def test_the_verdict_key_names_the_precision_auto_resolves_to_on_this_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``dtype: auto`` is float32 on a CPU and bfloat16 on a GPU: one shared cache must not serve one
    as the other, so the key carries the resolved precision (the GPU is this host's torch, patched)."""
    monkeypatch.setenv("REWARDHUB_MODELS_DIR", str(tmp_path / "kit"))
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "config.json").write_text('{"torch_dtype": "bfloat16"}')

    from rewardhub.models import base

    def keys_on(cuda_devices: int) -> tuple[dict[str, str], dict[str, str]]:
        """The transformers and vLLM keys on a host with this many GPUs (this host's torch, patched)."""
        monkeypatch.setattr(torch.cuda, "device_count", lambda: cuda_devices)
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
        base._auto_precision.cache_clear()
        try:
            return (
                Judge.verdict_key(judge_config(model=str(folder))),
                Judge.verdict_key(judge_config(model=str(folder), backend="vllm")),
            )
        finally:
            base._auto_precision.cache_clear()

    on_cpu, vllm_on_cpu = keys_on(0)
    assert on_cpu["precision"] == "float32"
    assert Judge.verdict_key(judge_config(model=str(folder), dtype="bfloat16"))["precision"] == "bfloat16"
    assert vllm_on_cpu["precision"] == "auto(bfloat16,cpu)"
    on_gpu, vllm_on_gpu = keys_on(1)
    assert vllm_on_gpu["precision"] == "auto(bfloat16,cuda)"
    assert on_gpu["precision"] == "bfloat16"
    assert on_gpu["config_hash"] != on_cpu["config_hash"]  # the reward cache addresses by config_hash


def test_a_plain_folder_is_hashed_once_per_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process (here: this one with its memory cleared) reads the stored hash, not the files."""
    monkeypatch.setenv("REWARDHUB_MODELS_DIR", str(tmp_path / "kit"))
    (tmp_path / "model.bin").write_bytes(b"some weights")
    first = kit.weights_hash(tmp_path)
    monkeypatch.setattr(kit, "_hashes", {})
    monkeypatch.setattr(kit, "_hash_files", lambda files: pytest.fail("the weight files were read again"))
    assert kit.weights_hash(tmp_path) == first


# ---- the verifiers on the real model ---------------------------------------------------------


def test_judge_verify_reads_p_true_and_names_the_model(folder: Path) -> None:
    results = Judge().score_batch([RIGHT, WRONG], judge_config(verdict="logprobs"))
    show("judge verify (logprobs)", results)
    manifest = kit.installed_manifest(NAME)
    for result in results:
        assert result.status == "ok" and 0.0 <= result.score <= 1.0
        model = result.details["model"]
        assert model["name"] == NAME and model["model"] == str(folder)
        assert model["weights"] == manifest["weights_sha256"][:16]
        on_this_host = ("transformers", model_precision(judge_config()), "cuda" if torch.cuda.is_available() else "cpu")
        assert (model["backend"], model["dtype"], model["device"]) == on_this_host  # float32 on a CPU, bf16 on a GPU
        assert model["decoding"] == {"verdict": "logprobs", "temperature": 0.0, "max_tokens": 1, "top_logprobs": 20}
    assert Judge.verdict_key(judge_config(verdict="logprobs"))["weights"] == manifest["weights_sha256"][:16]


def test_judge_grade_with_an_unparseable_reply_is_an_error_with_the_raw_reply(folder: Path) -> None:
    """Asked for a lone grade on its last line, SmolLM2 answers in prose: an error, never a score."""
    [result] = Judge().score_batch([RIGHT], judge_config(mode="grade", verdict="last_line", max_tokens=12))
    show("judge grade (last_line)", [result])
    assert result.status == "error" and result.score == 0.0
    assert "not a lone number on the last line" in (result.error or "")
    raw = result.details["judge_output"]
    assert raw.strip() and raw.strip().splitlines()[-1][:100] in (result.error or "")
    assert result.details["model"]["decoding"]["max_tokens"] == 12


def test_judge_grade_by_logprobs_is_an_expected_grade(folder: Path) -> None:
    results = Judge().score_batch([RIGHT, WRONG], judge_config(mode="grade", verdict="logprobs", scale=(0, 9)))
    show("judge grade (logprobs)", results)
    for result in results:
        assert result.status == "ok" and 0.0 <= result.details["grade"] <= 9.0
        assert result.score == pytest.approx(result.details["grade"] / 9)


def test_pairwise_judge_in_both_orders(folder: Path) -> None:
    group = [RIGHT, WRONG]
    config = PairwiseJudge.Config(model=NAME, backend="transformers", verdict="logprobs", ties=False)
    results = PairwiseJudge().score_group(group, config)
    show("pairwise_judge (logprobs, both orders)", results)
    assert [r.status for r in results] == ["ok", "ok"]
    assert results[0].score + results[1].score == pytest.approx(1.0)  # each comparison's share, split
    assert results[0].details["model"]["weights"] == kit.installed_manifest(NAME)["weights_sha256"][:16]


def test_rubric_explicit_per_criterion(folder: Path) -> None:
    rubric = [{"criterion": "States that 7 + 5 is 12", "weight": 2}, {"criterion": "Claims 7 + 5 is 13", "weight": -1}]
    sample = RIGHT.model_copy(update={"reference": rubric})
    config = RubricJudge.Config(model=NAME, backend="transformers", verdict="logprobs")
    [result] = RubricJudge().score_batch([sample], config)
    show("rubric explicit (logprobs)", [result])
    assert result.status == "ok"
    satisfied = [c["satisfied"] for c in result.details["criteria"]]
    assert all(0.0 <= p <= 1.0 for p in satisfied)
    assert result.score == pytest.approx((2 * satisfied[0] - satisfied[1]) / 3)


def test_prm_math_shepherd_mode_on_a_causal_lm(folder: Path) -> None:
    """SmolLM2 is no PRM, but Math-Shepherd's mode reads any causal LM: P('+') over P('+') + P('-')
    after each step's tag (Math-Shepherd's "ки" is two tokens for this tokenizer; " Step" is one)."""
    config = ProcessRM.Config(model=NAME, backend="transformers", style="math_shepherd", step_tag=" Step")
    [result] = ProcessRM().score_batch([STEPS], config)
    show("prm math_shepherd", [result])
    assert result.status == "ok" and result.details["n_steps"] == 3
    assert len(result.steps) == 3 and all(0.0 < p < 1.0 for p in result.steps)
    assert result.score == pytest.approx(min(result.steps))
    assert result.details["model"]["decoding"] == "teacher-forced"


def test_implicit_prm_policy_equal_to_reference_is_exactly_zero(folder: Path) -> None:
    [result] = ImplicitPRM().score_batch([STEPS], ImplicitPRM.Config(model=NAME, ref_model=NAME))
    show("implicit_prm policy == ref", [result])
    assert result.status == "ok" and result.score == 0.0 and set(result.steps) == {0.0}


def test_implicit_prm_is_beta_log_ratio_per_token(folder: Path, perturbed: Path) -> None:
    beta = 0.05
    # float32 on any device: compared with a direct forward pass to 1e-5, which bfloat16 would not keep
    config = ImplicitPRM.Config(model=str(perturbed), ref_model=NAME, beta=beta, dtype="float32")
    [result] = ImplicitPRM().score_batch([STEPS], config)
    show("implicit_prm perturbed policy", [result])
    policy = get_backend(backend_spec(config))
    ref = get_backend(backend_spec(config, model=config.ref_model))
    by_hand = [
        beta * (p - r) for p, r in zip(_response_logprobs(policy, STEPS), _response_logprobs(ref, STEPS), strict=True)
    ]
    print(
        f"implicit_prm: {len(by_hand)} tokens, max |ours - direct| = "
        f"{max(abs(a - b) for a, b in zip(result.steps, by_hand, strict=True)):.2e}"
    )
    assert result.status == "ok" and any(r != 0.0 for r in result.steps)
    assert result.steps == pytest.approx(by_hand, abs=1e-5)
    assert result.details["model"]["weights"] != result.details["model"]["reference"]["weights"]
    assert result.details["model"]["reference"]["name"] == NAME


def _response_logprobs(backend, sample: Sample) -> list[float]:
    """log π(y_t | y_<t) of the response tokens: one plain forward pass over the whole sequence."""
    tokenizer = backend.tokenizer
    head = tokenizer.apply_chat_template(
        [{"role": "user", "content": sample.prompt}], tokenize=False, add_generation_prompt=True
    )
    prompt_ids = tokenizer(head, add_special_tokens=False).input_ids
    model = backend.model("causal")
    ids = torch.tensor(
        [prompt_ids + tokenizer(sample.response, add_special_tokens=False).input_ids], device=model.device
    )
    with torch.inference_mode():
        logits = model(ids).logits[0, :-1].float()
    return logits.log_softmax(-1).gather(-1, ids[0, 1:, None])[len(prompt_ids) - 1 :, 0].tolist()


# ---- self_certainty against lm-polygraph on the real model's distributions -----------------------


@pytest.fixture
def polygraph_self_certainty(monkeypatch: pytest.MonkeyPatch):
    """lm-polygraph 0.7.0's ``SelfCertainty``, its two modules loaded as released (installed --no-deps;
    tests/verifiers/test_self_certainty.py loads it the same way)."""
    try:
        dist = distribution("lm-polygraph")
    except PackageNotFoundError:
        pytest.skip("lm-polygraph is not installed (.ci/run installs it --no-deps)")
    assert dist.version == "0.7.0"
    common = types.ModuleType("lm_polygraph.utils.common")
    common.polygraph_module_init = lambda init: init  # type: ignore[attr-defined]
    for name in ("lm_polygraph", "lm_polygraph.utils", "lm_polygraph.estimators"):
        package = types.ModuleType(name)
        package.__path__ = []  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, name, package)
    monkeypatch.setitem(sys.modules, "lm_polygraph.utils.common", common)
    for module in ("estimator", "self_certainty"):
        name = f"lm_polygraph.estimators.{module}"
        spec = importlib.util.spec_from_file_location(name, dist.locate_file(f"lm_polygraph/estimators/{module}.py"))
        loaded = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, loaded)
        spec.loader.exec_module(loaded)
    return sys.modules["lm_polygraph.estimators.self_certainty"].SelfCertainty()


def test_self_certainty_agrees_with_lm_polygraph_on_smollm2(folder: Path, polygraph_self_certainty) -> None:
    """SmolLM2 answers two questions greedily; each generated token's full-vocabulary log-probs go
    to self_certainty (k = |V|: renormalised is exact) and to lm-polygraph's estimator."""
    backend = get_backend(backend_spec(judge_config()))
    model, tokenizer = backend.model("causal"), backend.tokenizer
    per_response = []
    for question in ("What is 7 + 5?", "What is 9 * 3?"):
        ids = tokenizer.apply_chat_template(
            [{"role": "user", "content": question}], add_generation_prompt=True, return_tensors="pt", return_dict=True
        ).to(model.device)
        with torch.inference_mode():
            out = model.generate(
                **ids, max_new_tokens=6, do_sample=False, output_logits=True, return_dict_in_generate=True
            )
        per_response.append([step[0].float().log_softmax(-1).cpu().numpy() for step in out.logits])
        print(f"self_certainty: {question!r} -> {tokenizer.decode(out.sequences[0, ids['input_ids'].shape[1] :])!r}")
    theirs = polygraph_self_certainty({"greedy_log_probs": per_response})
    verifier, config = SelfCertaintyVerifier(), SelfCertaintyVerifier.Config()
    ours = [
        verifier.score(Sample(response="x", metadata={"logprobs": [t.tolist() for t in tokens]}), config)
        for tokens in per_response
    ]
    for o, t in zip(ours, theirs, strict=True):
        print(f"self_certainty {o.score:.6f} vs lm-polygraph -SelfCertainty {-t:.6f} (|V| = {o.details['top_k']})")
        assert o.status == "ok" and o.details["top_k"] == len(tokenizer)
        assert math.isclose(o.score, -float(t), rel_tol=1e-6, abs_tol=1e-6)
