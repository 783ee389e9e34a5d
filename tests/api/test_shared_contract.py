"""The shared API contract's added rows, each sent as the contract writes it to one real service.

One ``rewardhub serve`` (started as a user starts it, one worker per pool) answers every test; each test is
one row (or a few rows) of the contract's tables "Additions requested next" and "Additions requested
in the third round", and asserts the fields and statuses the contract names, under those names.
Foreign protocols are read with their released packages where that costs little (SandboxFusion's
``sandbox_fusion`` models); the judge that ``pairwise_judge`` asks is a scripted OpenAI-compatible
endpoint (no model can run here), so that row proves the route and the per-sample rewards, not a judge.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sandbox_fusion
from serve_support import api_workers, needs_bubblewrap

from rewardhub.cli import main

KEYS = ["key-a", "key-b", "key-c"]
PER_KEY = 3
"""Live sessions per key here, so that the limit's 429 costs three sessions."""
SANDBOX_RUN_FIELDS = {"status", "exit_code", "stdout", "stderr", "elapsed_ms"}
VERDICT_KEY_FIELDS = {"verifier", "version", "config_hash"}


def _fake_judge() -> Any:
    """tests/models' scripted OpenAI-compatible chat endpoint (a module of that folder, not a package)."""
    path = Path(__file__).parents[1] / "models" / "rm_fake_judge.py"
    spec = importlib.util.spec_from_file_location("rm_fake_judge", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FakeJudge()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SQL data directory: ``shop.sqlite``, which the contract's ``{"database": "shop"}`` names."""
    folder = tmp_path_factory.mktemp("sql-data")
    with sqlite3.connect(folder / "shop.sqlite") as db:
        db.executescript("CREATE TABLE item (name TEXT, price INT); INSERT INTO item VALUES ('pen', 2), ('ink', 5);")
    return folder


@pytest.fixture(scope="module")
def url(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``rewardhub serve`` as a user starts it, with the settings in its environment: a pool's workers
    fork from a fork server that keeps the environment it started with, so a setting such as the
    SQL data directory reaches them only in a process of its own."""
    needs_bubblewrap()
    env = {
        "REWARDHUB_API_KEYS": ",".join(KEYS),
        "REWARDHUB_SESSION_MAX_PER_KEY": str(PER_KEY),
        "REWARDHUB_SQL_DATA_DIR": str(data_dir),
    }
    with api_workers(tmp_path_factory.mktemp("serve"), 1, "--workers", "1", env=env) as served:
        yield served


@pytest.fixture(scope="module")
def http(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, headers={"Authorization": "Bearer key-a"}, timeout=120) as client:
        yield client


def score(http: httpx.Client, verifier: Any, samples: list[dict[str, Any]], **body: Any) -> list[dict[str, Any]]:
    answer = http.post("/v1/score", json={"verifier": verifier, "samples": samples, **body})
    assert answer.status_code == 200, answer.text
    return answer.json()["results"]


# --- Additions requested next ---------------------------------------------------------------------


def test_sample_field_messages_text_verifiers_read_the_last_assistant_turn(http: httpx.Client) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "capital"}'}}
    messages = [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "Paris"},
        {"role": "assistant", "content": "Paris"},
    ]
    instead, beside = score(
        http,
        "exact",
        [
            {"messages": messages, "reference": "Paris"},
            {"messages": messages, "response": "Lyon", "reference": "Paris"},  # response given: it is the text
        ],
    )
    assert (instead["status"], instead["score"]) == ("ok", 1.0)
    assert (beside["status"], beside["score"]) == ("ok", 0.0)


def test_run_code_and_ping_are_sandbox_fusions_own(http: httpx.Client) -> None:
    assert http.get("/v1/ping").json() == "pong"
    request = sandbox_fusion.RunCodeRequest(code="print(input()[::-1])", stdin="abc", language="python")
    answer = http.post("/run_code", json=request.dict())
    parsed = sandbox_fusion.RunCodeResponse.parse_obj(answer.json())
    assert parsed.status == sandbox_fusion.RunStatus.Success
    assert (parsed.run_result.return_code, parsed.run_result.stdout) == (0, "cba\n")
    failed = sandbox_fusion.RunCodeResponse.parse_obj(
        http.post("/run_code", json={"code": "raise SystemExit(3)", "language": "python"}).json()
    )
    assert (failed.status, failed.run_result.return_code) == (sandbox_fusion.RunStatus.Failed, 3)


def test_nemo_gym_verify_echoes_the_request_with_reward_and_components(http: httpx.Client) -> None:
    output = [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "\\boxed{4}"}]}]
    body = {"responses_create_params": {"input": "2+2?"}, "response": {"output": output}, "expected_answer": "4"}
    answer = http.post("/v1/compat/nemo-gym/math/verify", json=body)
    assert answer.status_code == 200, answer.text
    echoed = answer.json()
    assert {key: echoed[key] for key in body} == body
    assert echoed["reward"] == 1.0
    weighted = {"sum": [{"verifier": "math", "weight": 0.5}, {"verifier": "format", "weight": 0.5}]}
    composite = http.post("/v1/compat/nemo-gym/math/verify", json={**body, "verifier": weighted}).json()
    assert composite["reward"] == 0.5 and composite["reward_components"] == {"math": 1.0, "format": 0.0}


def test_audit_answers_the_contracts_keys(http: httpx.Client) -> None:
    cases = [
        {"response": "yes", "reference": "yes", "expected": 1},
        {"messages": [{"role": "assistant", "content": "no"}], "reference": "yes", "expected": 0},
        {"response": "YES", "reference": "yes", "expected": 0},  # exact ignores case: a false positive
    ]
    report = http.post("/v1/audit", json={"verifier": "exact", "cases": cases}).json()
    keys = {"verifier", "n", "precision", "recall", "accuracy", "false_positives", "false_negatives", "exploits"}
    assert keys <= set(report)
    assert (report["verifier"], report["n"], report["recall"]) == ("exact", 3, 1.0)
    assert report["precision"] == pytest.approx(0.5) and report["accuracy"] == pytest.approx(2 / 3)
    assert len(report["false_positives"]) == 1 and report["false_negatives"] == []
    assert {"tried", "rewarded", "cases"} <= set(report["exploits"])


def test_ui_is_the_live_operator_page_with_no_external_assets(http: httpx.Client) -> None:
    page = http.get("/ui")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text.lower()
    assert "<html" in html
    for external in ('src="http', "src='http", 'href="http', "href='http", "url(http", "@import"):
        assert external not in html


CHECKER = """import sys
output, answer = open(sys.argv[2]).read().split(), open(sys.argv[3]).read().split()
sys.exit(0 if sorted(output) == sorted(answer) else 1)
"""


def test_code_reference_checker_testlib_convention(http: httpx.Client) -> None:
    program = "```python\nprint('2 1')\n```"
    reference = {"inputs": ["\n"], "outputs": ["1 2\n"], "checker": {"language": "python", "code": CHECKER}}
    broken = {**reference, "checker": {"language": "python", "code": "raise SystemExit(7)"}}
    accepted, unjudged = score(
        http,
        {"name": "code", "config": {"batch": False}},
        [{"response": program, "reference": ref} for ref in (reference, broken)],
    )
    assert (accepted["status"], accepted["score"]) == ("ok", 1.0)  # another right answer than the gold's
    assert unjudged["status"] == "error" and unjudged["details"]["verdict"] == "checker_error"  # exit 7: no judgement


# --- Additions requested in the third round: the cache, verdict keys, reverify ------------------------


def test_request_field_cache_marks_results_served_from_the_reward_cache(http: httpx.Client) -> None:
    sample = {"response": "cache me", "reference": "cache me"}
    first, second = (score(http, "exact", [sample], cache=True)[0] for _ in range(2))
    assert (first["cached"], second["cached"]) == (False, True)
    assert second["score"] == first["score"] == 1.0
    job = http.post("/v1/jobs", json={"verifier": "exact", "samples": [sample], "cache": True}).json()["job_id"]
    deadline = time.monotonic() + 30
    while (state := http.get(f"/v1/jobs/{job}").json())["status"] != "done" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [r["cached"] for r in state["results"]] == [True]
    reward = {"query": ["Q: 7"], "prompts": ["Q: "], "labels": ["7"], "cache": True}
    once, again = (http.post("/get_reward", json=reward).json() for _ in range(2))
    assert (once["cached"], again["cached"]) == ([False], [True])


def test_every_result_carries_its_verdict_key(http: httpx.Client) -> None:
    results = score(
        http,
        "exact",
        [
            {"response": "a", "reference": "a"},
            {"response": "a", "reference": "b", "verifier": "math"},
            {"response": "a", "verifier": {"name": "sql"}, "reference": "not an object"},  # an error still says who
        ],
    )
    assert [r["status"] for r in results] == ["ok", "ok", "error"]
    keys = [r["details"]["verdict_key"] for r in results]
    assert all(set(key) == VERDICT_KEY_FIELDS and all(isinstance(v, str) for v in key.values()) for key in keys)
    assert [key["verifier"] for key in keys] == ["exact", "math", "sql"]


def test_reverify_counts_the_flips_of_stored_verdicts(http: httpx.Client) -> None:
    samples = [
        {"response": "a", "reference": "a", "result": {"score": 0.0, "status": "ok"}},  # 0->1
        {"response": "a", "reference": "b", "result": {"score": 1.0, "status": "ok"}},  # 1->0
        {"response": "a", "reference": "a", "result": {"score": 0.0, "status": "error", "error": "x"}},  # error->ok
        {"response": "a", "reference": "a", "result": {"score": 1.0, "status": "ok"}},  # unchanged
    ]
    report = http.post("/v1/reverify", json={"verifier": "exact", "samples": samples}).json()
    assert {"n", "flips", "by_class", "changed"} <= set(report)
    assert report["n"] == 4
    assert report["flips"] == {"0->1": 1, "1->0": 1, "ok->error": 0, "error->ok": 1}
    assert isinstance(report["by_class"], dict) and len(report["changed"]) == 3


def test_cli_reverify_and_audit_through_the_service(url: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    stored = tmp_path / "stored.jsonl"
    stored.write_text(json.dumps({"response": "a", "reference": "a", "result": {"score": 0.0, "status": "ok"}}) + "\n")
    auth = ["--url", url, "--api-key", "key-a", "--json"]
    assert main(["reverify", str(stored), "--verifier", "exact", *auth]) == 0
    assert json.loads(capsys.readouterr().out)["flips"]["0->1"] == 1
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"response": "a", "reference": "a", "expected": 1}) + "\n")
    assert main(["audit", "exact", "--cases", str(cases), *auth]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 1
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "--api-workers" in capsys.readouterr().out


def test_cli_plots_are_png_files(url: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("matplotlib")  # the audit extra's
    stored = tmp_path / "stored.jsonl"
    stored.write_text(json.dumps({"response": "a", "reference": "b", "result": {"score": 1.0, "status": "ok"}}) + "\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"response": "a", "reference": "a", "expected": 1}) + "\n")
    auth = ["--url", url, "--api-key", "key-a"]
    assert main(["reverify", str(stored), "--verifier", "exact", "--plot", str(tmp_path / "flips.png"), *auth]) == 0
    assert main(["audit", "exact", "--cases", str(cases), "--plot", str(tmp_path / "audit.png"), *auth]) == 0
    capsys.readouterr()
    for name in ("flips.png", "audit.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- Additions requested in the third round: verifiers ---------------------------------------------


def test_sql_both_reference_shapes(http: httpx.Client) -> None:
    setup = "CREATE TABLE item (name TEXT, price INT); INSERT INTO item VALUES ('pen', 2), ('ink', 5);"
    inline = {"setup_sql": setup, "gold_sql": "SELECT name FROM item WHERE price > 3"}
    named = {"database": "shop", "gold_sql": "SELECT name FROM item ORDER BY price"}
    results = score(
        http,
        "sql",
        [
            {"response": "```sql\nSELECT name FROM item WHERE price = 5\n```", "reference": inline},
            {"response": "SELECT name FROM item WHERE price = 2", "reference": inline},
            {"response": "SELECT name FROM item ORDER BY price DESC", "reference": named},
            {"response": "SELECT name FROM item ORDER BY price DESC", "reference": {**named, "order_matters": True}},
            {"response": "SELECT 1", "reference": {"database": "nowhere", "gold_sql": "SELECT 1"}},
        ],
    )
    assert [(r["status"], r["score"]) for r in results[:4]] == [("ok", 1.0), ("ok", 0.0), ("ok", 1.0), ("ok", 0.0)]
    assert results[4]["status"] == "error" and "reference.database" in results[4]["error"]


def test_grounding_box_boxes_and_image_size(http: httpx.Client) -> None:
    cat = [{"bbox_2d": [10, 10, 50, 50], "label": "cat"}]
    results = score(
        http,
        "grounding",
        [
            {"response": "(300, 200)", "reference": {"box": [200, 100, 400, 300], "image_size": [800, 600]}},
            {"response": "(700, 500)", "reference": {"box": [200, 100, 400, 300], "image_size": [800, 600]}},
            {"response": "[0.1, 0.1, 0.3, 0.5]", "reference": {"box": [0.1, 0.1, 0.5, 0.5]}},
            {"response": json.dumps(cat), "reference": {"boxes": cat, "image_size": [100, 100]}},
        ],
    )
    assert [r["status"] for r in results] == ["ok"] * 4
    assert [r["score"] for r in results[:2]] == [1.0, 0.0]  # point in box
    assert results[2]["score"] == pytest.approx(0.5)  # IoU: half the gold box
    assert results[3]["score"] == pytest.approx(1.0)  # mAP of a perfect detection


def test_reasoning_gym_task_and_entry(http: httpx.Client) -> None:
    entry = {"question": "What is 2 + 2?", "answer": "4", "metadata": {"source_dataset": "basic_arithmetic"}}
    reference = {"task": "basic_arithmetic", "entry": entry}
    right, wrong = score(
        http, "reasoning_gym", [{"response": f"<answer>{n}</answer>", "reference": reference} for n in (4, 5)]
    )
    assert (right["status"], right["score"]) == ("ok", 1.0)
    assert wrong["status"] == "ok" and wrong["score"] < 1.0


def test_pairwise_judge_and_self_certainty_give_per_sample_rewards(http: httpx.Client) -> None:
    judge = _fake_judge()
    judge.responder = lambda body: (
        "Verdict: A" if "<response_a>good" in body["messages"][-1]["content"] else "Verdict: B"
    )
    try:
        config = {"model": "judge", "base_url": judge.url, "api_key_env": None, "max_retries": 0}
        samples = [{"prompt": "Q", "response": text, "group": "g"} for text in ("good", "bad")]
        judged = score(http, {"name": "pairwise_judge", "config": config}, samples)
    finally:
        judge.close()
    assert [r["status"] for r in judged] == ["ok", "ok"]
    assert judged[0]["score"] > judged[1]["score"]
    sure, unsure = [math.log(0.98), math.log(0.01), math.log(0.01)], [math.log(1 / 3)] * 3
    certainty = score(
        http,
        "self_certainty",
        [{"response": "x", "group": "h", "metadata": {"logprobs": [tokens] * 4}} for tokens in (sure, unsure)],
    )
    assert [r["status"] for r in certainty] == ["ok", "ok"]
    assert certainty[0]["score"] > certainty[1]["score"]


# --- Additions requested in the third round: sessions ----------------------------------------------


def test_session_create_run_get_delete_as_the_contract_writes_them(http: httpx.Client) -> None:
    before = time.time()
    made = http.post(
        "/v1/sessions",
        json={"runtime": "python", "files": {"n.txt": "5\n"}, "ttl_s": 60, "timeout_s": 1, "memory_mb": 256},
    )
    assert made.status_code == 201, made.text
    session = made.json()
    assert {"session_id", "runtime", "expires_at"} <= set(session) and session["runtime"] == "python"
    assert before + 59 <= session["expires_at"] <= time.time() + 61  # epoch seconds: the idle TTL's end
    sid = session["session_id"]
    path = f"/v1/sessions/{sid}"
    ran = http.post(
        f"{path}/run", json={"code": "total = int(open('n.txt').read()) + int(input())\ntotal", "stdin": "37"}
    )
    sandboxed = http.post("/v1/sandbox/run", json={"language": "python", "code": "print(1)"}).json()
    assert set(sandboxed) <= set(ran.json())  # the /v1/sandbox/run answer, field for field
    assert SANDBOX_RUN_FIELDS <= set(ran.json())
    assert (ran.json()["status"], ran.json()["exit_code"], ran.json()["stdout"]) == ("ok", 0, "42\n")
    kept = http.post(f"{path}/run", json={"code": "print(total * 2)", "timeout_s": 2}).json()
    assert kept["stdout"] == "84\n"  # python keeps its globals between runs
    slow = http.post(f"{path}/run", json={"code": "import time; time.sleep(30)"}).json()
    assert slow["status"] == "timeout" and slow["elapsed_ms"] < 5_000  # the session's timeout_s, 1 s (not 10)
    described = http.get(path).json()
    assert {"session_id", "runtime", "created_at", "expires_at", "calls"} <= set(described)
    assert (described["session_id"], described["calls"]) == (sid, 3)
    assert before <= described["created_at"] <= time.time()
    deleted = http.delete(path)
    assert (deleted.status_code, deleted.content) == (204, b"")
    for later in (http.get(path), http.post(f"{path}/run", json={"code": "1"}), http.delete(path)):
        assert later.status_code == 404 and "deleted" in later.json()["error"]["message"]
    assert http.get("/v1/sessions/s-nope").status_code == 404  # never existed


def test_bash_session_keeps_its_files_and_reads_stdin(http: httpx.Client) -> None:
    sid = http.post("/v1/sessions", json={"runtime": "bash"}).json()["session_id"]
    try:
        wrote = http.post(
            f"/v1/sessions/{sid}/run", json={"code": 'read word; echo "$word" > kept.txt', "stdin": "hello\n"}
        )
        assert wrote.json()["status"] == "ok", wrote.text
        assert http.post(f"/v1/sessions/{sid}/run", json={"code": "cat kept.txt"}).json()["stdout"] == "hello\n"
    finally:
        http.delete(f"/v1/sessions/{sid}")


def test_an_expired_session_is_410_with_the_reason(http: httpx.Client) -> None:
    sid = http.post("/v1/sessions", json={"runtime": "python", "ttl_s": 0.2}).json()["session_id"]
    deadline = time.monotonic() + 10
    while (answer := http.get(f"/v1/sessions/{sid}")).status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert answer.status_code == 410 and answer.json()["error"]["type"] == "session_expired"
    assert "idle" in answer.json()["error"]["message"]


def test_past_the_limit_creating_is_429_with_retry_after(url: str) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": "Bearer key-c"}, timeout=60) as other:
        made = [other.post("/v1/sessions", json={"runtime": "python"}) for _ in range(PER_KEY + 1)]
        try:
            assert [answer.status_code for answer in made] == [201] * PER_KEY + [429]
            assert float(made[-1].headers["Retry-After"]) > 0
        finally:
            for answer in made[:PER_KEY]:
                other.delete(f"/v1/sessions/{answer.json()['session_id']}")


DEFINES_ADD = (
    "import time\n\ndef add(a, b):\n    return a + b\n\ndef nap(s):\n    time.sleep(s)\n    return s\n\n"
    "open('numbers.txt', 'w').write('3 4\\n')\nscale = 10"
)


def test_sample_session_id_runs_the_code_tests_inside_the_session(http: httpx.Client, url: str) -> None:
    sid = http.post("/v1/sessions", json={"runtime": "python"}).json()["session_id"]
    try:
        assert http.post(f"/v1/sessions/{sid}/run", json={"code": DEFINES_ADD}).json()["status"] == "ok"
        reads_file = "```python\na, b = map(int, open('numbers.txt').read().split())\nprint(add(a, b) * scale)\n```"
        calls = {"fn_name": "add", "inputs": [[1, 2], [20, 22]], "outputs": [3, 42]}
        mutates = "```python\nscale = 0\ndef add(a, b):\n    return 0\n```"
        results = score(
            http,
            "code",
            [
                {"response": "The function is defined.", "reference": calls, "session_id": sid},  # state alone
                {"response": reads_file, "reference": {"inputs": [""], "outputs": ["70"]}, "session_id": sid},
                {"response": "done", "reference": {"test": "assert add(2, 2) == 5"}, "session_id": sid},
                {"response": mutates, "reference": calls, "session_id": sid},
                {"response": "done", "reference": calls},  # no session: no add anywhere
            ],
        )
        assert [(r["status"], r["score"]) for r in results] == [
            ("ok", 1.0),
            ("ok", 1.0),
            ("ok", 0.0),
            ("ok", 0.0),
            ("ok", 0.0),
        ]
        assert results[0]["cached"] is False
        naps = {"fn_name": "nap", "inputs": [[0.2]], "outputs": [0.2]}
        group = score(http, "code", [{"response": "x", "reference": naps, "session_id": sid, "group": "g"}] * 4)
        assert [(r["status"], r["score"]) for r in group] == [("ok", 1.0)] * 4  # one session's samples take turns
        after = http.post(f"/v1/sessions/{sid}/run", json={"code": "print(add(1, 1) * scale)"}).json()
        assert after["stdout"] == "20\n"  # what a test changed went with its fork
        with httpx.Client(base_url=url, headers={"Authorization": "Bearer key-b"}, timeout=60) as other:
            body = {"verifier": "code", "samples": [{"response": "x", "reference": calls, "session_id": sid}]}
            [theirs] = other.post("/v1/score", json=body).json()["results"]
        assert theirs["status"] == "error" and sid in theirs["error"] and "404" in theirs["error"]
    finally:
        http.delete(f"/v1/sessions/{sid}")
    unknown = "s-00000000-0123456789abcdef"
    gone, earlier = score(
        http, "code", [{"response": "x", "reference": calls, "session_id": s} for s in (sid, unknown)]
    )
    assert gone["status"] == "error" and sid in gone["error"] and "404" in gone["error"] and "deleted" in gone["error"]
    assert earlier["status"] == "error" and "410" in earlier["error"] and "session_lost" in earlier["error"]
    assert http.get("/healthz").json()["status"] == "ok"


def test_bad_session_bodies_are_4xx_and_the_service_keeps_serving(http: httpx.Client) -> None:
    assert http.post("/v1/sessions", json={"runtime": "cobol"}).status_code == 422
    assert (
        http.post("/v1/sessions", json={"runtime": "python", "memory_mb": 64, "limits": {"memory_mb": 128}}).status_code
        == 422
    )
    assert http.post("/v1/sessions", content=b"{nope", headers={"content-type": "application/json"}).status_code == 400
    sid = http.post("/v1/sessions", json={"runtime": "python"}).json()["session_id"]
    try:
        assert http.post(f"/v1/sessions/{sid}/run", json={"stdin": "x"}).status_code == 422  # no code
        assert http.post(f"/v1/sessions/{sid}/run", json={"code": "1", "timeout_s": -1}).status_code == 422
        assert http.post(f"/v1/sessions/{sid}/run", json={"code": "print(7)"}).json()["stdout"] == "7\n"
    finally:
        http.delete(f"/v1/sessions/{sid}")
