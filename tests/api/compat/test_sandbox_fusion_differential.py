"""POST /run_code against SandboxFusion's released server on a generated corpus
(bench/sandbox_fusion_differential.py): every field a client reads agrees at 0.99 or more outside
the named conventions, and the conventions are counted, never silent.

The server is not on a package index: bench/peers/setup_sandbox_fusion.sh unpacks it into a
git-ignored folder. Where it is not set up, the comparison skips and says so; how a reading is
taken and compared is tested everywhere.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
import sandbox_fusion_differential as bench  # noqa: E402

THRESHOLD = 0.99
PEER = ROOT / "bench" / "peers" / "sandbox_fusion" / "run_server.sh"


# --- how an answer is read and compared --------------------------------------------------------


def answer(stdout="1\n", stderr="", code=0, build=None, status="Success", files=None):
    ran = {"status": "Finished", "return_code": code, "stdout": stdout, "stderr": stderr, "execution_time": 0.1}
    return {"status": status, "message": "", "compile_result": build, "run_result": ran, "files": files or {}}


def test_each_sides_name_for_the_source_file_is_the_same_once_normalised():
    peer = 'Traceback (most recent call last):\n  File "/tmp/tmpumz908i1/tmpfs52oi7s.py", line 2, in <module>\n'
    ours = 'Traceback (most recent call last):\n  File "/tmp/main.py", line 2, in <module>\n'
    assert bench.normalise_stderr(peer) == bench.normalise_stderr(ours)
    assert bench.normalise_stderr("/tmp/tmpa2y7qox3/tmp66q7zwp7.cpp:1:21: error") == bench.normalise_stderr(
        "main.cpp:1:21: error"
    )


def test_normalising_keeps_what_the_program_wrote():
    assert bench.normalise_stderr("tmp file main.pyc not found\n") == "tmp file main.pyc not found\n"
    assert bench.normalise_stderr("ValueError: x\n") != bench.normalise_stderr("ValueError: y\n")


@pytest.mark.parametrize(
    ("ours", "differs"),
    [
        (answer(), []),
        (answer(stdout="2\n"), ["stdout"]),
        (answer(code=1, status="Failed"), ["status", "return_code"]),
        (answer(files={"out.txt": "eA=="}), ["files"]),
        (answer(build={"status": "Finished", "return_code": 0, "stdout": "", "stderr": ""}), ["compile_status"]),
    ],
)
def test_a_difference_in_any_field_a_client_reads_is_found(ours, differs):
    assert bench.compare(bench.reading(200, answer()), bench.reading(200, ours)) == differs


def test_a_refusal_is_compared_by_its_http_status():
    assert bench.compare(bench.reading(200, answer()), bench.reading(422, {"detail": []})) == [
        "http", "status", "run_status", "return_code", "stdout", "stderr", "files",
    ]  # fmt: skip


def test_the_corpus_covers_the_behaviour_space_and_is_the_same_for_a_seed():
    cases = bench.corpus(seed=0, variants=3)
    assert [c.request for c in cases] == [c.request for c in bench.corpus(seed=0, variants=3)]
    assert [c.request for c in cases] != [c.request for c in bench.corpus(seed=1, variants=3)]
    behaviours = Counter(c.behaviour for c in cases if c.convention is None)
    for behaviour in ("stdin_sum", "exit_code", "stderr", "runtime_error", "compile_error", "large_stdout",
                      "file_in", "file_out", "empty", "unicode_code"):  # fmt: skip
        assert behaviours[behaviour] >= 3, behaviour
    languages = {c.language for c in cases if c.convention is None}
    assert {"python", "cpp", "bash", "nodejs", "java"} <= languages
    assert {c.convention for c in cases} - {None} == set(bench.CONVENTIONS)


def test_a_convention_is_counted_apart_and_a_disagreement_is_not():
    cases = bench.corpus(seed=0, variants=1)
    plain = next(c for c in cases if c.convention is None)
    named = next(c for c in cases if c.convention == "isolation")
    peer, ours = bench.reading(200, answer()), bench.reading(200, answer(stdout="/tmp\n"))
    rows = [
        {"case": plain, "peer": peer, "ours": ours, "differs": bench.compare(peer, ours)},
        {"case": named, "peer": peer, "ours": ours, "differs": bench.compare(peer, ours)},
    ]
    report = bench.tally(rows, log=lambda line: None)
    assert report["per_field"]["stdout"] == 0.0 and report["per_field"]["status"] == 1.0
    assert report["conventions"]["isolation"]["requests"] == 1
    kinds = {(c["kind"], c["field"]) for c in report["classes"]}
    assert kinds == {("disagreement", "stdout"), ("convention:isolation", "stdout")}


# --- against SandboxFusion's own server --------------------------------------------------------


@pytest.mark.skipif(
    not PEER.exists(),
    reason="SandboxFusion's server is not set up: bench/peers/setup_sandbox_fusion.sh [SOURCE] sets it up",
)
def test_run_code_agrees_with_sandbox_fusions_server_outside_the_named_conventions(capsys):
    from _serve import start_service
    from code_verifier_speed import FusionServer

    peer = FusionServer()
    if peer.url is None:
        pytest.skip(f"SandboxFusion's server: {peer.why_not}")
    process, ours = start_service()
    lines: list[str] = []
    try:
        cases = bench.corpus(seed=0, variants=2, peer_port=int(peer.url.rsplit(":", 1)[1]))
        report = bench.differential(peer.url, ours, cases, log=lines.append)
    finally:
        process.terminate()
        process.wait(30)
        peer.close()
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert report["compared"] >= 100
    assert all(report["conventions"][name]["requests"] > 0 for name in bench.CONVENTIONS)
    low = {name: share for name, share in report["per_field"].items() if share < THRESHOLD}
    assert not low, [c for c in report["classes"] if c["kind"] == "disagreement"]
