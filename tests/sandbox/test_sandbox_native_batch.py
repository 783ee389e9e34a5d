"""The coordinator's native side: each stdin/stdout case of a built program spawned on pipes of its own.

Run here as the sandbox runs it, a plain script in a process of its own (without the sandbox's
walls, which tests/verifiers/code/test_code_batch.py puts around it): the program gets exactly its
case's input, only descriptors 0-2, its own process group and a shell's signal dispositions; a
program that cannot be started is exit status 127 with the reason on stderr, as a shell says it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

INSIDE = Path(__file__).parents[2] / "rewardhub" / "sandbox" / "inside"

COORDINATOR = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
import batch
spec, argv = json.loads(sys.stdin.read()), json.loads(sys.argv[2])
records = []
batch.run_native_batch(spec, (argv[0], argv, dict(os.environ)), records.append)
print(json.dumps(records[0]))
"""


def run_cases(argv: list[str], stdins: list[str], timeout_s: float = 5.0) -> list[dict]:
    spec = {"tests": [{"kind": "stdio", "stdin": s} for s in stdins], "timeout_s": timeout_s, "budget_s": 30}
    done = subprocess.run(
        [sys.executable, "-c", COORDINATOR, str(INSIDE), json.dumps(argv)],
        input=json.dumps(spec), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["batch"]


def test_each_case_gets_its_own_input_and_its_own_output():
    entries = run_cases(["/bin/cat"], ["one\n", "", "three\nlines\n"])
    assert [(e["status"], e["stdout"]) for e in entries] == [(0, "one\n"), (0, ""), (0, "three\nlines\n")]


def test_the_program_sees_only_its_standard_descriptors_its_own_group_and_a_shells_signals():
    script = "ls /proc/self/fd | wc -l; read pid _ _ _ pgid _ < /proc/$$/stat; echo $pid $pgid; yes | head -c 3; echo"
    [entry] = run_cases(["/bin/sh", "-c", script], [""])
    count, ids, *said = entry["stdout"].split("\n")
    assert int(count) == 4  # 0, 1, 2 and the one ls opens to list them
    assert len(set(ids.split())) == 1  # its own process group
    assert (said, entry["stderr"]) == (["y", "y", ""], "")  # yes died of SIGPIPE quietly, as under a shell


def test_a_program_that_cannot_be_started_is_127_with_the_reason():
    [entry] = run_cases(["/nonexistent/program"], [""])
    assert entry["status"] >> 8 == 127
    assert "cannot execute /nonexistent/program" in entry["stderr"]


@pytest.mark.parametrize("stdin", ["", "x" * 300_000])
def test_a_case_that_hangs_is_stopped_alone(stdin):
    entries = run_cases(
        ["/bin/sh", "-c", 'read -r line; [ "$line" = hang ] && sleep 30; echo ok'], ["hang\n", stdin], 0.5
    )
    assert [e.get("killed") for e in entries] == ["timeout", None]
    assert entries[1]["stdout"] == "ok\n"
