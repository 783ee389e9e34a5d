"""POST /run_code and GET /v1/ping: a SandboxFusion drop-in, proven with SandboxFusion's own client,
its own runner tests and verl's own scorer, unchanged, against a real service.

- the ``sandbox-fusion`` client (PyPI, pinned in the dev extra) is imported as installed;
- SandboxFusion's runner tests are data (``data/sandbox_fusion_runner_cases.json``): the request each
  of its tests posts and what that test asserts, for every language this server runs (its
  ``sandbox/tests/runners/test_{python,bash,cpp,nodejs,go,java,rust,typescript,isolation}.py``) and
  its anti-hack headers (``sandbox/tests/datasets/test_antihack.py``), at the commit the file names;
- verl's ``sandbox_fusion`` scorer is the folder ``verl/utils/reward_score/sandbox_fusion/`` of verl's
  released wheel (``VERL``), downloaded with ``--no-deps`` and loaded alone: nothing else of verl
  (nor torch) is needed, and not a line of it is changed.
"""

from __future__ import annotations

import base64
import concurrent.futures
import importlib.util
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import sandbox_fusion
from sandbox_fusion import RunCodeRequest, RunStatus, SummaryMapping, summary_run_code_result

from rewardhub.api.compat.sandbox_fusion import CommandRunResult, command_result, run_status
from rewardhub.sandbox import RunResult, SandboxUnavailable, UnsupportedLanguage, default_pool, language
from rewardhub.server import EmbeddedServer

VERL = "verl==0.9.1"
SCORER = "verl/utils/reward_score/sandbox_fusion/"
BODY_LIMIT = 16 << 20

PROGRAMS = {
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "cpp": '#include <iostream>\nint main(){long long a,b; std::cin>>a>>b; std::cout<<a+b<<"\\n";}\n',
    "nodejs": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    "typescript": "const t: string = require('fs').readFileSync(0, 'utf8');\nconst [a, b] = t.trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    "go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar a, b int\n\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n',
    "java": "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }\n",
    "rust": 'use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); println!("{}", v[0] + v[1]); }\n',
    "bash": "read -r a b\necho $((a + b))\n",
}
OURS = {"nodejs": "javascript"}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    try:
        default_pool()
    except SandboxUnavailable as exc:
        pytest.skip(f"no sandbox on this machine: {exc.message}")
    with EmbeddedServer(workers=1, max_request_bytes=BODY_LIMIT) as served:
        yield served


@pytest.fixture(scope="module")
def verl_scorer(tmp_path_factory) -> ModuleType:
    """verl's scorer package, from its released wheel, loaded on its own."""
    out = tmp_path_factory.mktemp("verl")
    download = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(out), VERL]
    subprocess.run(download, check=True, timeout=600)
    [wheel] = out.glob("verl-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        members = [name for name in archive.namelist() if name.startswith(SCORER) and name.endswith(".py")]
        archive.extractall(out, members)
    folder = out / SCORER
    spec = importlib.util.spec_from_file_location(
        "verl_sandbox_fusion", folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["verl_sandbox_fusion"] = module
    spec.loader.exec_module(module)
    return module


def run(url: str, max_attempts: int = 1, **fields):
    return sandbox_fusion.run_code(RunCodeRequest(**fields), endpoint=url, max_attempts=max_attempts)


# --- SandboxFusion's rules, as pure functions ---------------------------------------------------


def step(status: str, code: int | None = 0, stderr: str = "") -> CommandRunResult:
    return CommandRunResult(status=status, return_code=code, stderr=stderr)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        ([step("Finished")], ("Success", "")),
        ([step("Finished"), step("Finished")], ("Success", "")),
        ([step("Finished", 1)], ("Failed", "")),
        ([step("Finished", 1), None], ("Failed", "")),
        ([step("Finished"), step("TimeLimitExceeded", None)], ("Failed", "")),
        ([step("TimeLimitExceeded", None)], ("Failed", "")),
        ([step("Finished", 0), step("Error", None, "lost the sandbox")], ("SandboxError", "lost the sandbox")),
        ([step("Error", None, "first"), step("TimeLimitExceeded", None)], ("SandboxError", "first")),
        ([step("Finished", -9)], ("Failed", "")),
    ],
)
def test_the_status_follows_sandbox_fusions_rules(steps, expected):
    assert run_status([s for s in steps if s is not None]) == expected


@pytest.mark.parametrize(
    ("verdict", "exit_code", "details", "expected"),
    [
        ("ok", 0, {}, ("Finished", 0)),
        ("runtime_error", 3, {}, ("Finished", 3)),
        ("runtime_error", None, {"signal": "SIGSEGV"}, ("Finished", -11)),
        ("memory", None, {"signal": "SIGKILL"}, ("Finished", -9)),
        ("output_limit", None, {"signal": "SIGKILL"}, ("Finished", -9)),
        ("timeout", None, {"signal": "SIGKILL"}, ("TimeLimitExceeded", None)),
        ("sandbox_error", None, {"message": "gone"}, ("Error", None)),
    ],
)
def test_each_verdict_maps_to_a_sandbox_fusion_step(verdict, exit_code, details, expected):
    mapped = command_result(RunResult(verdict, exit_code, "out", "err", 1500.0, None, details))
    assert (mapped.status, mapped.return_code) == expected
    assert mapped.execution_time == 1.5


def test_a_python_syntax_error_is_a_run_that_exits_1_as_python_does():
    mapped = command_result(RunResult("compile_error", 3, "", "SyntaxError", 1.0), interpreted=True)
    assert (mapped.status, mapped.return_code) == ("Finished", 1)


# --- the official client against a real service ----------------------------------------------


def test_ping_answers_pong(url):
    answer = httpx.get(f"{url}/v1/ping")
    assert (answer.status_code, answer.json()) == (200, "pong")


@pytest.mark.parametrize("lang", list(PROGRAMS))
def test_every_language_runs_through_the_official_client(url, lang):
    if not language(OURS.get(lang, lang)).available():
        pytest.skip(f"{lang} is not installed here")
    answer = run(url, code=PROGRAMS[lang], language=lang, stdin="20 22\n", run_timeout=20, compile_timeout=30)
    assert answer.status == RunStatus.Success, answer
    assert (answer.run_result.status, answer.run_result.return_code, answer.run_result.stdout) == (
        "Finished",
        0,
        "42\n",
    )
    compiled = lang in ("cpp", "typescript", "go", "java", "rust")
    assert (answer.compile_result is not None) == compiled
    assert summary_run_code_result(answer, SummaryMapping()) == "Success"
    assert answer.executor_pod_name


def test_a_compile_error_has_no_run_and_summarises_as_compile_failed(url):
    answer = run(url, code="int main( {", language="cpp")
    assert answer.status == RunStatus.Failed
    assert answer.run_result is None
    assert answer.compile_result.status == "Finished" and answer.compile_result.return_code != 0
    assert "error" in answer.compile_result.stderr
    mapping = SummaryMapping(CompileFailed="compile", RunFailed="run", RunTimeout="slow")
    assert summary_run_code_result(answer, mapping) == "compile"


def test_the_build_has_a_timeout_of_its_own_and_a_timed_out_build_is_not_kept(url):
    code = PROGRAMS["java"].replace("s.nextLong() + s.nextLong()", "s.nextLong() - s.nextLong()")
    mapping = SummaryMapping(CompileTimeout="compile timeout", RunTimeout="run timeout")
    hurried = run(url, code=code, language="java", stdin="50 8\n", compile_timeout=0.05, run_timeout=20)
    assert (hurried.status, hurried.compile_result.status, hurried.run_result) == ("Failed", "TimeLimitExceeded", None)
    assert summary_run_code_result(hurried, mapping) == "compile timeout"
    patient = run(url, code=code, language="java", stdin="50 8\n", compile_timeout=30, run_timeout=20)
    assert (patient.status, patient.run_result.stdout) == ("Success", "42\n")


def test_a_crash_and_a_timeout_summarise_as_sandbox_fusion_says(url):
    mapping = SummaryMapping(CompileFailed="compile", RunFailed="run", RunTimeout="slow")
    crashed = run(url, code="import sys\nprint('partial')\nsys.exit(3)", language="python")
    slow = run(url, code="while True: pass", language="python", run_timeout=0.5)
    assert (crashed.status, crashed.run_result.return_code, crashed.run_result.stdout) == ("Failed", 3, "partial\n")
    assert (slow.status, slow.run_result.status, slow.run_result.return_code) == ("Failed", "TimeLimitExceeded", None)
    assert (summary_run_code_result(crashed, mapping), summary_run_code_result(slow, mapping)) == ("run", "slow")


def test_memory_limit_mb_is_the_runs_memory(url):
    """verl sends ``memory_limit_MB`` (the 0.3.7 client has no such field, so this posts the body verl posts)."""

    def post_with(memory_mb: int, code: str) -> dict:
        body = {"code": code, "language": "python", "stdin": None, "memory_limit_MB": memory_mb}
        body |= {"compile_timeout": 10, "run_timeout": 10, "files": {}, "fetch_files": []}
        return httpx.post(f"{url}/run_code", json=body, timeout=60).json()

    hungry = post_with(128, "x = b'x' * (400 << 20)\nprint(len(x))")
    roomy = post_with(1024, "x = b'x' * (400 << 20)\nprint(len(x))")
    assert (hungry["status"], hungry["run_result"]["status"]) == ("Failed", "Finished")
    assert hungry["run_result"]["return_code"] != 0 and "memory" in hungry["message"]
    assert (roomy["status"], roomy["run_result"]["stdout"]) == ("Success", f"{400 << 20}\n")


def test_files_go_in_as_base64_and_fetch_files_come_back(url):
    blob = bytes(range(256)) * 4
    code = (
        "data = open('in/blob.bin', 'rb').read()\n"
        "open('out.txt', 'w').write(str(sum(data)))\n"
        "import os; os.makedirs('deep', exist_ok=True); open('deep/copy.bin', 'wb').write(data[::-1])\n"
    )
    answer = run(
        url,
        code=code,
        language="python",
        files={"in/blob.bin": base64.b64encode(blob).decode(), "skipped.txt": None},
        fetch_files=["out.txt", "deep/copy.bin", "never-written.txt", "deep"],
    )
    assert answer.status == RunStatus.Success, answer
    assert base64.b64decode(answer.files["out.txt"]) == str(sum(blob)).encode()
    assert base64.b64decode(answer.files["deep/copy.bin"]) == blob[::-1]
    assert answer.files.keys() == {"out.txt", "deep/copy.bin"}  # what does not exist, or is a folder, is left out


def test_absolute_paths_work_inside_the_jobs_folders_and_lead_nowhere_else(url):
    """SandboxFusion's programs write and fetch ``/mnt/b``; here /tmp, /dev/shm and /mnt are the job's
    own folders, and a link the program leaves pointing out of them brings nothing back."""
    code = (
        "import os\n"
        "print(open('/mnt/in/given.txt').read(), open('/tmp/given.txt').read(), open('given.txt').read())\n"
        "open('/dev/shm/made.txt', 'w').write('made')\n"
        "os.symlink('/etc/passwd', 'passwd'); os.symlink('/etc', '/mnt/etc')\n"
    )
    inputs = {"/mnt/in/given.txt": b"mnt", "/tmp/given.txt": b"tmp"}
    fetch = ["/dev/shm/made.txt", "/mnt/in/given.txt", "given.txt", "passwd", "/mnt/etc/passwd", "/mnt/etc", "/mnt"]
    answer = run(
        url,
        code=code,
        language="python",
        files={path: base64.b64encode(data).decode() for path, data in inputs.items()},
        fetch_files=fetch,
    )
    assert (answer.status, answer.run_result.stdout) == ("Success", "mnt tmp tmp\n"), answer
    assert {path: base64.b64decode(data) for path, data in answer.files.items()} == {
        "/dev/shm/made.txt": b"made",
        "/mnt/in/given.txt": b"mnt",
        "given.txt": b"tmp",
    }  # a folder (/mnt) brings nothing back, as in SandboxFusion


def test_a_compiled_program_reads_input_files_too(url):
    code = '#include <fstream>\n#include <iostream>\nint main(){ std::ifstream f("data.txt"); int x; f >> x; std::cout << x * 2 << "\\n"; }\n'
    answer = run(url, code=code, language="cpp", files={"data.txt": base64.b64encode(b"21").decode()})
    assert (answer.status, answer.run_result.stdout) == ("Success", "42\n")


def test_a_language_sandbox_fusion_knows_but_we_do_not_run_is_its_sandbox_error(url):
    body = httpx.post(f"{url}/run_code", json={"code": "<?php echo 1;", "language": "php"}).json()
    assert body["status"] == "SandboxError"
    assert "php" in body["message"] and "python" in body["message"]
    with pytest.raises(Exception, match="Sandbox responded with error"):
        run(url, code="<?php echo 1;", language="php")  # the client raises on SandboxError, as with SandboxFusion


def test_one_submission_sent_per_test_case_at_once_compiles_once(url):
    """verl posts the same program once per test case, all at once: one build serves them all."""
    code = PROGRAMS["go"].replace("a + b", "a*b + 1")
    builds = default_pool().builds
    misses = builds.misses
    with concurrent.futures.ThreadPoolExecutor(6) as workers:
        answers = list(workers.map(lambda i: run(url, code=code, language="go", stdin=f"{i} {i}\n"), range(6)))
    assert [a.run_result.stdout for a in answers] == [f"{i * i + 1}\n" for i in range(6)]
    assert all(a.compile_result.return_code == 0 for a in answers)
    assert builds.misses - misses == 1


# --- verl's scorer, unchanged -----------------------------------------------------------------


def test_verls_scorer_rewards_a_right_program_and_not_a_wrong_one(url, verl_scorer):
    tests = {"inputs": ["1 2\n", "5 7\n", "10 -3\n"], "outputs": ["3\n", "12\n", "7\n"]}
    right = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    half = "```python\na, b = map(int, input().split())\nprint(a + b if a < 5 else a - b)\n```"
    endpoint = f"{url}/run_code"
    right_score, right_meta = verl_scorer.compute_score(endpoint, None, 1024, right, tests, continuous=True)
    half_score, half_meta = verl_scorer.compute_score(endpoint, None, 1024, half, tests, continuous=True)
    assert right_score == 1.0, right_meta
    assert half_score == pytest.approx(1 / 3), half_meta
    assert [m["status"] for m in half_meta] == ["success", "wrong_answer", "wrong_answer"]


def test_verls_scorer_sees_compile_errors_crashes_and_timeouts(url, verl_scorer):
    check = verl_scorer.utils.check_correctness
    endpoint = f"{url}/run_code"
    tests = {"inputs": ["1\n", "2\n"], "outputs": ["1\n", "2\n"]}
    broken, _ = check(endpoint, tests, "int main( {", timeout=10, language="cpp")
    crash, _ = check(endpoint, tests, "raise SystemExit(1)", timeout=5, language="python")
    slow, _ = check(endpoint, tests, "while True: pass", timeout=1, language="python")
    assert (broken, crash, slow) == ([-4, -4], [-2, -2], [-3, -3])


def test_verls_scorer_runs_function_call_tests_in_every_language_it_names(url, verl_scorer):
    tests = {"fn_name": "add", "inputs": ["1\n2", "3\n4"], "outputs": ["3", "7"]}
    code = "```python\ndef add(a, b):\n    return a + b\n```"
    score, meta = verl_scorer.compute_score(f"{url}/run_code", None, 1024, code, tests)
    assert score == 1.0, meta
    results, meta = verl_scorer.utils.check_correctness(
        f"{url}/run_code", {"inputs": ["4 5\n"], "outputs": ["9\n"]}, PROGRAMS["go"], language="go"
    )
    assert results == [True], meta


# --- bad input: a clear 4xx or SandboxFusion's own answer, and the service keeps serving ----------


def post(url: str, body: bytes) -> httpx.Response:
    return httpx.post(f"{url}/run_code", content=body, headers={"content-type": "application/json"}, timeout=120)


@pytest.mark.parametrize(
    ("body", "status", "error_type"),
    [
        (b'{"code": "print(1)", "language": "cobol"}', 422, "unsupported_language"),
        (b'{"code": "print(1)"}', 422, "invalid_request"),
        (b'{"code": "print(1)", "language": "python", "surprise": 1}', 422, "invalid_request"),
        (b'{"code": "print(1)", "language": "python", "files": {"a.txt": "%%%not base64"}}', 422, "invalid_request"),
        (b'{"code": "print(1)", "language": "python", "files": {"/etc/passwd": "eA=="}}', 422, "invalid_request"),
        (b'{"code": "print(1)", "language": "python", "files": {"../up": "eA=="}}', 422, "invalid_request"),
        (b'{"code": "print(1)", "language": "python", "fetch_files": ["/etc/shadow"]}', 422, "invalid_request"),
        (b'{"code": "print(1)", "language": "python", "files": {"/mnt/../etc/x": "eA=="}}', 422, "invalid_request"),
        (b'{"code": "print(1)", "language": "python", "fetch_files": ["/tmp/../etc/passwd"]}', 422, "invalid_request"),
        (b'{"code": "1", "language": "python", "files": {"/tmp/main.py": "eA=="}}', 422, "invalid_request"),
        (b'{"code": "1", "language": "python", "files": {"main.py": "eA=="}}', 422, "invalid_request"),
        (b'{"code": "1", "language": "python", "run_timeout": 100000}', 422, "invalid_request"),
        (b'{"code": "1", "language": "python", "run_timeout": 0}', 422, "invalid_request"),
        (b'{"code": "1", "language": "python", "memory_limit_MB": 1000000}', 422, "invalid_request"),
        (b'{"code": "print(1)", "language": ', 400, "bad_request"),
    ],
)
def test_bad_input_is_a_clear_4xx_in_both_dialects(url, body, status, error_type):
    answer = post(url, body)
    assert answer.status_code == status, answer.text
    payload = answer.json()
    assert payload["error"]["type"] == error_type and payload["error"]["message"]
    assert payload["detail"]  # what FastAPI, and so SandboxFusion, puts in its 4xx answers
    assert run(url, code="print('still here')", language="python").run_result.stdout == "still here\n"


def test_fifty_megabytes_of_stdin_is_refused_with_413_and_the_service_keeps_serving(url):
    answer = httpx.post(
        f"{url}/run_code",
        json={"code": "import sys; print(len(sys.stdin.read()))", "language": "python", "stdin": "7" * (50 << 20)},
    )
    assert answer.status_code == 413
    assert answer.json()["error"]["type"] == "payload_too_large"
    big = run(url, code="import sys; print(len(sys.stdin.read()))", language="python", stdin="7" * (8 << 20))
    assert big.run_result.stdout == f"{8 << 20}\n"


def test_empty_code_is_run_as_sandbox_fusion_runs_it(url):
    """An empty answer is a wrong answer, not a sandbox failure: verl scores it 0 either way, but only
    SandboxFusion's own answer lets it tell the two apart."""
    python = run(url, code="", language="python", stdin="1 2\n")
    cpp = run(url, code="", language="cpp")
    assert (python.status, python.run_result.stdout) == ("Success", "")
    assert (cpp.status, cpp.run_result) == ("Failed", None)
    assert "main" in cpp.compile_result.stderr


# --- SandboxFusion's own runner tests, replayed ---------------------------------------------------
# Every case must pass, except those the data marks ``excluded``, which are run too and must fail the
# way their reason says (``excluded_shows``): lodash (test_nodejs_lodash_dep, test_typescript_lodash_dep)
# and the javatuples jar (test_java_external_jar) are not in the sandbox image, and a sandbox never
# reaches the internet (test_isolation_network_external_access).

CASES_DATA = json.loads((Path(__file__).parent / "data" / "sandbox_fusion_runner_cases.json").read_text())
CASES: list[dict[str, Any]] = CASES_DATA["cases"]
EXCLUDED = {
    "test_nodejs_lodash_dep",
    "test_typescript_lodash_dep",
    "test_java_external_jar",
    "test_isolation_network_external_access",
}


def installed(case: dict[str, Any]) -> bool:
    name = case["request"]["language"]
    try:
        return language(OURS.get(name, name)).available()
    except UnsupportedLanguage:
        return False


def post_case(url: str, request: dict[str, Any]) -> Any:
    return sandbox_fusion.run_code(RunCodeRequest(**request), endpoint=url, max_attempts=1, client_timeout=120)


def mismatches(answer: Any, expect: dict[str, Any]) -> list[str]:
    """What of ``expect`` (the keys ``expect_keys`` in the data explains) the answer does not meet."""
    run, build = answer.run_result, answer.compile_result
    checks = {
        "status": lambda want: answer.status == want,
        "compile_status": lambda want: build is not None and build.status == want,
        "compile_failed": lambda want: build is not None and (build.return_code != 0) == want,
        "compile_stderr_contains": lambda want: build is not None and want in (build.stderr or ""),
        "no_run": lambda want: (run is None) == want,
        "run_status": lambda want: run is not None and run.status == want,
        "stdout": lambda want: run is not None and run.stdout == want,
        "stdout_stripped": lambda want: run is not None and (run.stdout or "").strip() == want,
        "stdout_contains": lambda want: run is not None and want in (run.stdout or ""),
        "stderr_contains": lambda want: run is not None and want in (run.stderr or ""),
        "files": lambda want: {k: base64.b64decode(v).decode() for k, v in answer.files.items()} == want,
    }
    return [f"{key}: wanted {want!r}" for key, want in expect.items() if not checks[key](want)]


def replay(url: str, case: dict[str, Any]) -> list[str]:
    """Post the case (its copies at once, if it has several) and say what did not come out as expected."""
    request = case["request"]
    if "prebuild" in case:  # built once with room, so the case's own short build is the cached one
        post_case(url, {**request, "compile_timeout": 60, "run_timeout": 1})
    expect = case["excluded_shows"] if "excluded" in case else case["expect"]
    copies = case.get("concurrent", 1)
    with concurrent.futures.ThreadPoolExecutor(copies) as workers:
        answers = list(workers.map(lambda _: post_case(url, request), range(copies)))
    problems = [problem for answer in answers for problem in mismatches(answer, expect)]
    if problems:
        run = answers[0].run_result
        problems.append(
            f"answer: {answers[0].status}, run: {run and (run.status, run.stdout[-300:], run.stderr[-300:])}"
        )
    return problems


def test_the_data_names_its_source_and_every_case_says_what_it_expects():
    assert CASES_DATA["repository"] == "https://github.com/bytedance/SandboxFusion"
    assert len(CASES_DATA["commit"]) == 40
    assert {case["name"] for case in CASES if "excluded" in case} == EXCLUDED
    for case in CASES:
        assert case["source"].startswith("sandbox/tests/") and case["expect"]
        assert set(case["expect"]) <= set(CASES_DATA["expect_keys"])


def test_sandbox_fusions_runner_cases_pass_here(url):
    runnable = [case for case in CASES if installed(case)]
    with concurrent.futures.ThreadPoolExecutor(3) as workers:
        outcomes = dict(
            zip([c["name"] for c in runnable], workers.map(lambda c: replay(url, c), runnable), strict=True)
        )
    failed = {name: problems for name, problems in outcomes.items() if problems}
    expected = [name for name in outcomes if name not in EXCLUDED]
    passed = [name for name in expected if name not in failed]
    print(f"\nSandboxFusion runner cases ({CASES_DATA['commit'][:12]}): {len(passed)}/{len(expected)} pass here")
    for case in CASES:
        if case not in runnable:
            print(f"  not run {case['name']}: {case['request']['language']} is not installed on this machine")
    for name in sorted(EXCLUDED):
        reason = next(case["excluded"] for case in CASES if case["name"] == name)
        print(f"  excluded {name}: {reason}; {'fails as said' if name not in failed else 'NOT as said'}")
    for name, problems in failed.items():
        print(f"  FAILED {name}: {problems}")
    assert failed == {}
