"""The audit report for people: a text summary (false positives first) and a picture.

The picture has two panels: the confusion table (accepted / rejected against right / wrong) and
bars counting the wrong verdicts per failure class, false positives in red and false negatives
in blue, with the exploits that were rewarded in the title. It is drawn on a bare matplotlib
``Figure`` (the Agg canvas, no pyplot), so it works on a server without a display.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rewardhub.audit.confusion import Confusion
from rewardhub.errors import RewardhubError

__all__ = ["plot_report", "text_report"]


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _counts(entries: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry["class"]] = counts.get(entry["class"], 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def text_report(report: dict[str, Any]) -> str:
    fps, fns, exploits = report["false_positives"], report["false_negatives"], report["exploits"]
    spec = report["verifier"]
    lines = [
        f"audit of {spec if isinstance(spec, str) else json.dumps(spec)}: {report['n']} labelled cases",
        f"  precision {_number(report['precision'])}  recall {_number(report['recall'])}  "
        f"accuracy {_number(report['accuracy'])}  ({len(fps)} false positives, {len(fns)} false negatives)",
        f"  exploits: {exploits['rewarded']} of {exploits['tried']} rewarded",
    ]
    for title, entries in (("false positives (wrong responses accepted)", fps), ("false negatives", fns)):
        if not entries:
            continue
        lines += ["", f"{title}: {len(entries)}"]
        lines += [f"  {n:>4}  {name}" for name, n in _counts(entries).items()]
        for entry in entries:
            label = entry["id"] if entry["id"] is not None else f"#{entry['index']}"
            error = f" error: {entry['error']}" if entry["error"] else ""
            lines.append(
                f"  - {label} [{entry['class']}] score {entry['score']:g} ({entry['status']}){error}\n"
                f"      reference {_one_line(entry['reference'])}\n      response  {_one_line(entry['response'])}"
            )
    if exploits["cases"]:
        lines += ["", "exploits (rewarded first):"]
        for case in exploits["cases"]:
            mark = "REWARDED" if case["rewarded"] else "refused "
            lines.append(f"  {mark} {case['id']:<34} score {case['score']:g} [{case['class']}]  {case['attack']}")
    return "\n".join(lines)


def _spec_name(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict) and "name" in spec:
        return f"{spec['name']} {json.dumps(spec.get('config') or {})}"[:80]
    return "a composite verifier"


def _one_line(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text.replace("\n", "\\n")
    return text if len(text) <= 160 else text[:160] + "..."


def plot_report(report: dict[str, Any], confusion: Confusion, path: Path) -> None:
    try:
        from matplotlib.figure import Figure  # no pyplot: no global backend or figure state to disturb
    except ModuleNotFoundError:
        raise RewardhubError("--plot needs matplotlib: pip install 'rewardhub[audit]'") from None

    table = [[confusion.tp, confusion.fp], [confusion.fn, confusion.tn]]

    figure = Figure(figsize=(12, 5))
    left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.6]})
    left.imshow(table, cmap="Blues")
    for row in range(2):
        for col in range(2):
            dark = table[row][col] > max(max(r) for r in table) / 2
            left.text(
                col,
                row,
                str(table[row][col]),
                ha="center",
                va="center",
                fontsize=16,
                color="white" if dark else "black",
            )
    left.set_xticks([0, 1], ["right", "wrong"])
    left.set_yticks([0, 1], ["accepted", "rejected"])
    left.set_xlabel("label")
    left.set_title(
        f"precision {_number(report['precision'])}, recall {_number(report['recall'])}, "
        f"accuracy {_number(report['accuracy'])}",
        fontsize=10,
    )

    bars = [(f"FP {name}", count, "tab:red") for name, count in _counts(report["false_positives"]).items()]
    bars += [(f"FN {name}", count, "tab:blue") for name, count in _counts(report["false_negatives"]).items()]
    if bars:
        names, counts, colors = zip(*bars, strict=True)
        right.barh(range(len(bars)), counts, color=colors, height=0.6)
        right.xaxis.get_major_locator().set_params(integer=True)
        right.set_yticks(range(len(bars)), [name[:48] for name in names], fontsize=8)
        right.set_ylim(max(len(bars), 6) - 0.5, -0.5)  # top down, and a lone bar stays a bar
    else:
        right.text(0.5, 0.5, "no wrong verdicts", ha="center", va="center", transform=right.transAxes)
    right.set_xlabel("cases")
    exploits = report["exploits"]
    right.set_title(f"wrong verdicts per failure class; exploits rewarded: {exploits['rewarded']}/{exploits['tried']}")
    figure.suptitle(f"audit of {_spec_name(report['verifier'])}")
    figure.tight_layout()
    figure.savefig(path, dpi=100)  # drawn by the Agg canvas: works without a display
