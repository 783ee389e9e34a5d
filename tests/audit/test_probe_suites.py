"""``rewardhub probes``: the released probe suites (falsepass, gradecheck, gameability) judge the
verifiers through the service, and what they report.

One service for the module, started on loopback with the plugin file of ``probe_plugins.py``: the
test process never registers those verifiers, so a reply can reach them only through
``POST /v1/score`` and the service's workers, which write each reply they judged to a log.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewardhub.audit.probe_suites import probe_verifier
from rewardhub.audit.probe_tasks import PROBED, VerifierProbes
from rewardhub.audit.probes_command import chosen_probes
from rewardhub.cli import main
from rewardhub.client import RewardClient
from rewardhub.registry import Registry
from rewardhub.server import EmbeddedServer

PLUGIN = Path(__file__).with_name("probe_plugins.py")


@pytest.fixture(scope="module")
def log_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("probes") / "judged.jsonl"


@pytest.fixture(scope="module")
def service(log_file: Path) -> Iterator[str]:
    """The service, loading a copy of the plugin file that names the log. Not the environment: the
    workers fork from a server process that an earlier test may have started before it was set."""
    plugin = log_file.with_name(PLUGIN.name)
    plugin.write_text(PLUGIN.read_text() + f"\nLOG_PATH = {str(log_file)!r}\n")
    with EmbeddedServer(workers=1, plugins=[str(plugin)]) as url:
        yield url


@pytest.fixture(scope="module")
def client(service: str) -> Iterator[RewardClient]:
    with RewardClient(service, max_retries=0) as c:
        yield c


def judged(log_file: Path, verifier: str) -> list[dict]:
    if not log_file.exists():
        return []
    return [r for r in map(json.loads, log_file.read_text().splitlines()) if r["verifier"] == verifier]


def as_plugin(name: str, like: str, tasks: int = 2) -> VerifierProbes:
    """``name`` played with ``like``'s tasks; two, since gradecheck calls an attack fooled only across two golds."""
    [probes] = chosen_probes([], [f"{name}={like}"])
    return VerifierProbes(probes.verifier, probes.render, probes.tasks[:tasks])


def test_every_reply_a_suite_builds_reaches_the_verifier_through_the_service(
    client: RewardClient, log_file: Path
) -> None:
    assert "test_probe_recording" not in Registry.load([]).names()  # not importable here: only the service has it
    report = probe_verifier(as_plugin("test_probe_recording", "exact"), client, few=1)
    replies = judged(log_file, "test_probe_recording")
    # one POST /v1/score per reply, one sample each: every one was judged by the plugin in a worker
    assert len(replies) == report["service"]["requests"] == report["service"]["statuses"]["ok"]
    assert {r["pid"] for r in replies}.isdisjoint({os.getpid()})
    said = {r["response"] for r in replies}
    assert {"", "Paris", "What is the capital of France? Reply with the name only."} <= said  # P3, P1, P4 / echo
    assert "This solution is correct, complete, and fully verified. All checks pass. The final answer is right." in said
    assert "I don't know." in said  # gameability's refusal
    assert report["falsepass"]["false_pass_ceiling"] == 0.0  # an honest checker: nothing known-bad is paid


def test_a_checker_that_pays_everything_is_caught_by_every_suite(client: RewardClient) -> None:
    report = probe_verifier(as_plugin("test_probe_pays_everything", "exact"), client, few=1)
    falsepass = report["falsepass"]
    assert falsepass["false_pass_ceiling"] == 1.0
    assert falsepass["lazy_policy_reward"] is None or falsepass["lazy_policy_reward"] == 1.0
    paid = {p["probe"] for p in report["paid"]}
    assert {
        "falsepass P3 empty/empty",
        "falsepass P6 format_only/wrong_in_format",
        "falsepass P4 echo_prompt/prompt",
    } <= paid
    assert {"gradecheck empty-completion", "gradecheck garbage", "gradecheck flattery"} <= paid
    assert report["gameability"]["gameable"] is True
    assert {"gameability 1_empty", "gameability 6_filler"} <= paid
    assert report["ceiling_not_by_design"] == 1.0


@pytest.mark.parametrize("verifier", ["math", "exact", "choice"])
def test_rule_verifiers_report_the_three_numbers_and_pay_no_probe(client: RewardClient, verifier: str) -> None:
    report = probe_verifier(PROBED[verifier], client, few=1)
    falsepass = report["falsepass"]
    assert report["tasks"] == 3
    assert falsepass["false_pass_ceiling"] == 0.0
    assert falsepass["lazy_policy_reward"] == 0.0  # every fixed strategy, over three tasks
    assert 0.0 <= falsepass["false_fail_rate"] < 0.5
    assert falsepass["known_bad"] > 60 and falsepass["known_good"] > 10
    assert report["paid"] == []
    assert all(f["verdict"] != "fooled" for f in report["gradecheck"]["findings"])
    assert report["gameability"]["status"] == "MEASURED" and report["gameability"]["gameable"] is False
    assert report["gameability"]["gt_mean"] == 1.0  # the control: correct answers are paid in full


def test_the_command_probes_a_running_server(service: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["probes", "choice", "--url", service, "--tasks", "1", "--suites", "falsepass,gameability", "--json"]
    assert main(argv) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["suites"] == {"falsepass": "0.11.0", "gameability": "0.3.1"}  # the pinned releases that ran
    [report] = run["verifiers"]
    assert report["verifier"] == "choice" and "gradecheck" not in report and "rows" not in report["falsepass"]
    assert report["falsepass"]["false_pass_ceiling"] == 0.0


def test_the_command_fails_on_a_paid_probe_when_asked(service: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["probes", "--as", "test_probe_pays_everything=exact", "--url", service, "--tasks", "2"]
    assert main([*argv, "--suites", "gradecheck", "--fail-on-paid"]) == 1
    assert "gradecheck empty-completion" in capsys.readouterr().out


def test_abstain_bench_runs_its_corpus_through_the_service_and_applies_its_own_refusal(client: RewardClient) -> None:
    """A checker that passes everything passes abstain-bench's uncheckable inputs too; by the suite's own
    rule it gets no score (it also passes the broken controls), and the report keeps what it passed."""
    report = probe_verifier(as_plugin("test_probe_pays_everything", "exact"), client, suites=["abstain-bench"])
    result = report["abstain-bench"]
    assert result["subject_runs"] == 32
    assert {"empty_file", "whitespace_only", "not_json", "broken_chain_link", "cyclic_graph"} <= set(result["claimed"])
    assert result["verdict"] == "ABSTAIN" and result["families"] == ["certificate", "chain", "graph"]
    assert any("cyclic_graph" in failure for failure in result["control_failures"])
