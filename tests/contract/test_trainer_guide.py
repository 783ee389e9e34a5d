"""The trainer guide cannot drift: every snippet of docs/compat.md's "Use it from your trainer" is
marked and run by a test, and so are the README tour's two (the ``curl`` request and the Python client).

The trainers' snippets run through their upstream code in this folder's other tests; the graders
``curl``, the README's ``curl`` and the Python client run here against a real ``rewardhub serve``.
"""

from __future__ import annotations

import json
import re
import subprocess

from contract_support import REPO, doc_block

GUIDE = REPO / "docs" / "compat.md"
SECTION = re.compile(r"^## Use it from your trainer\n(?P<body>.*?)^## ", re.DOTALL | re.MULTILINE)
TESTED_ELSEWHERE = {
    "openrlhf": "test_openrlhf_contract.py",
    "verl": "test_verl_contract.py",
    "trl": "test_trl_contract.py",
    "slime": "test_slime_contract.py",
    "verl-sandbox-fusion": "test_verl_contract.py",
}
TESTED_OUTSIDE = {"prime": "tests/integrations/test_prime.py"}


def test_every_snippet_of_the_trainer_section_is_marked_for_a_test() -> None:
    section = SECTION.search(GUIDE.read_text())["body"]
    fences = re.findall(r"^```\w+$", section, re.MULTILINE)
    marked = re.findall(r"^<!-- contract: ([\w-]+) -->\n```\w+$", section, re.MULTILINE)
    assert len(marked) == len(fences), "a fenced block in 'Use it from your trainer' has no <!-- contract: NAME -->"
    assert set(marked) == set(TESTED_ELSEWHERE) | set(TESTED_OUTSIDE) | {"graders"}
    for name, test_file in TESTED_ELSEWHERE.items():
        source = (REPO / "tests" / "contract" / test_file).read_text()
        assert re.search(rf'doc_\w+\("{name}"', source), f"{test_file} reads no block {name!r}"
    for name, test_file in TESTED_OUTSIDE.items():
        assert re.search(rf'doc_\w+\("{name}"', (REPO / test_file).read_text()), f"{test_file} reads no {name!r}"


def test_the_graders_curl_line_runs_against_the_service(served: str) -> None:
    block = doc_block("graders").replace("localhost:8000", served.removeprefix("http://"))
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", block], capture_output=True, text=True, check=True)
    answer = json.loads(run.stdout)
    assert answer["reward"] == 1.0  # "Paris" against "Paris": 0.7 * exact + 0.3 * close


def test_the_readme_curl_request_scores_as_the_readme_says(served: str) -> None:
    block = doc_block("score-curl").replace("localhost:8000", served.removeprefix("http://"))
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", block], capture_output=True, text=True, check=True)
    results = {result["id"]: result for result in json.loads(run.stdout)["results"]}
    assert {key: result["status"] for key, result in results.items()} == {"a": "ok", "b": "ok"}
    # 0.9 * math + 0.1 * format: a is right and well formed, b is wrong and well formed
    assert abs(results["a"]["score"] - 1.0) < 1e-9
    assert abs(results["b"]["score"] - 0.1) < 1e-9


def test_the_python_snippet_runs(served: str) -> None:
    code = doc_block("python").replace("http://127.0.0.1:8000", served)
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md (Python)", "exec"), namespace)
    [result] = namespace["results"]  # the second half: its own child service, `exact` on "4" vs "4"
    assert result.status == "ok" and result.score == 1.0
