"""The probe-suite report: one row per verifier, every paid probe with its by-design reason, replies shown safely."""

from __future__ import annotations

import pytest

from rewardhub.audit.probe_report import headline_row, markdown_report, text_report
from rewardhub.audit.probe_tasks import NOT_PROBED, PROBED
from rewardhub.audit.probes_command import chosen_probes
from rewardhub.errors import InvalidRequest

PAID = [
    {"suite": "falsepass", "probe": "falsepass P15 hedged_in_slot/denied", "runs": 3, "max_score": 1.0,
     "by_design": None, "example": "Answer: B (this is wrong)"},
    {"suite": "falsepass", "probe": "falsepass P10 exception_path/null_byte", "runs": 2, "max_score": 0.4,
     "by_design": "a similarity score", "example": "the answer is \x00 here | x"},
]  # fmt: skip
REPORT = {
    "verifier": "choice",
    "falsepass": {"false_pass_ceiling": 1.0, "lazy_policy_reward": 0.0, "false_fail_rate": 0.25, "rows": []},
    "gradecheck": {"findings": [{"attack": "garbage", "verdict": "fooled", "summary": "..."}]},
    "gameability": {"status": "MEASURED"},
    "abstain-bench": {"verdict": "ABSTAIN", "claimed": [], "subject_runs": 32, "control_failures": ["none accepted"]},
    "service": {"requests": 40, "statuses": {"ok": 38, "error": 2}, "errors": []},
    "paid": PAID,
    "ceiling_not_by_design": 1.0,
}
RUN = {"command": "rewardhub probes choice", "suites": {"falsepass": "0.11.0"}, "verifiers": [REPORT], "not_probed": {}}


def test_the_headline_row_counts_what_was_paid_apart_from_what_is_paid_by_design() -> None:
    row = headline_row(REPORT)
    assert (row["paid"], row["paid_by_design"], row["gradecheck_fooled"], row["not_ok"]) == (1, 1, 1, 2)
    assert row["abstain_bench"] == "ABSTAIN (0/32 passed)"
    assert (row["false_pass_ceiling"], row["ceiling_not_by_design"], row["false_fail_rate"]) == (1.0, 1.0, 0.25)


def test_the_markdown_names_the_command_each_paid_probe_and_escapes_what_a_reply_holds() -> None:
    text = markdown_report(RUN)
    assert "Reproduce: `rewardhub probes choice`" in text
    assert "| falsepass P15 hedged_in_slot/denied | 3 | 1 | no | `Answer: B (this is wrong)` |" in text
    assert "`the answer is \\x00 here \\| x`" in text and "\x00" not in text
    assert "abstain-bench: ABSTAIN: none accepted" in text


def test_the_terminal_summary_lists_only_what_is_paid_not_by_design() -> None:
    text = text_report(RUN)
    assert "falsepass P15 hedged_in_slot/denied" in text and "null_byte" not in text


def test_every_rule_verifier_is_either_probed_or_named_with_the_reason_it_is_not() -> None:
    from rewardhub.registry import Registry

    rules = {info["name"] for info in Registry.load([]).describe() if info["kind"] == "rule"}
    assert rules == set(PROBED) | set(NOT_PROBED)
    assert not set(PROBED) & set(NOT_PROBED)


def test_a_verifier_the_suites_cannot_drive_is_refused_with_its_reason() -> None:
    with pytest.raises(InvalidRequest, match="reads tool calls"):
        chosen_probes(["tool_call"], [])
    [probes] = chosen_probes([], ["my_plugin=choice"])
    assert probes.verifier == "my_plugin" and probes.tasks == PROBED["choice"].tasks
