"""The README's trainer section cannot drift: every snippet in it is marked and run by a test.

The trainers' snippets run through their upstream code in this folder's other tests; the two left
(the graders ``curl`` and the Python client) run here against a real ``rewardhub serve``.
"""

from __future__ import annotations

import json
import re
import subprocess

from contract_support import REPO, readme_block

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
    section = SECTION.search((REPO / "README.md").read_text())["body"]
    fences = re.findall(r"^```\w+$", section, re.MULTILINE)
    marked = re.findall(r"^<!-- contract: ([\w-]+) -->\n```\w+$", section, re.MULTILINE)
    assert len(marked) == len(fences), "a fenced block in 'Use it from your trainer' has no <!-- contract: NAME -->"
    assert set(marked) == set(TESTED_ELSEWHERE) | set(TESTED_OUTSIDE) | {"graders", "python"}
    for name, test_file in TESTED_ELSEWHERE.items():
        source = (REPO / "tests" / "contract" / test_file).read_text()
        assert re.search(rf'readme_\w+\("{name}"', source), f"{test_file} reads no README block {name!r}"
    for name, test_file in TESTED_OUTSIDE.items():
        assert re.search(rf'readme_\w+\("{name}"', (REPO / test_file).read_text()), f"{test_file} reads no {name!r}"


def test_the_graders_curl_line_runs_against_the_service(served: str) -> None:
    block = readme_block("graders").replace("localhost:8000", served.removeprefix("http://"))
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", block], capture_output=True, text=True, check=True)
    answer = json.loads(run.stdout)
    assert answer["reward"] == 1.0  # "Paris" against "Paris": 0.7 * exact + 0.3 * close


def test_the_python_snippet_runs(served: str) -> None:
    code = readme_block("python").replace("http://127.0.0.1:8000", served)
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md (Python)", "exec"), namespace)
    [result] = namespace["results"]  # the second half: its own child service, `exact` on "4" vs "4"
    assert result.status == "ok" and result.score == 1.0
