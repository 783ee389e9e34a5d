"""The re-verification report for people: counts first, then the classes, then the flipped samples.

The picture is one panel: per failure class, a stacked bar of its flips (``1->0`` red, ``0->1``
green, ``ok->error`` orange, ``error->ok`` blue), drawn like the audit's on a bare matplotlib
``Figure`` (no pyplot, no display needed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rewardhub.audit.report import _one_line, _spec_name
from rewardhub.audit.reverify import FLIPS
from rewardhub.errors import RewardhubError

__all__ = ["plot_reverify", "text_reverify"]

COLORS = {"1->0": "tab:red", "0->1": "tab:green", "ok->error": "tab:orange", "error->ok": "tab:blue"}


def _spec_text(spec: Any) -> str:
    return spec if isinstance(spec, str) else json.dumps(spec)


def _key_text(key: Any) -> str:
    if not isinstance(key, dict):
        return "no verdict key"
    return f"{key.get('verifier')} v{key.get('version')} config {key.get('config_hash')}"


def text_reverify(report: dict[str, Any], shown: int = 50) -> str:
    flips = report["flips"]
    lines = [
        f"reverify of {report['n']} samples: {_spec_text(report['verifier'])} against {_spec_text(report['against'])}",
        "  "
        + "  ".join(f"{flip} {flips[flip]}" for flip in FLIPS)
        + f"  (score moved without a flip: {report['score_changed']})",
    ]
    if report["same_key_flips"]:
        lines.append(
            f"  {report['same_key_flips']} flips under the same verdict key: the verifier is not deterministic, "
            "or something it depends on changed without its version"
        )
    for side in ("old", "new"):
        keys = ", ".join(f"{_key_text(k)} ({k['n']})" for k in report["verdict_keys"][side])
        lines.append(f"  {side} verdicts by {keys}")
    if report["by_class"]:
        lines += ["", "flips per failure class:"]
        for name, counts in report["by_class"].items():
            lines.append(f"  {name or '(none)'}: " + ", ".join(f"{flip} {n}" for flip, n in counts.items()))
    changed = report["changed"]
    if changed:
        lines += ["", f"changed samples (flips first; {min(shown, len(changed))} of {len(changed)} shown):"]
        for entry in changed[:shown]:
            label = entry["id"] if entry["id"] is not None else f"#{entry['index']}"
            old, new = entry["old"], entry["new"]
            lines.append(
                f"  - {label} {entry['flip'] or 'score'} [{entry['class']}] "
                f"{old['score']:g} ({old['status']}) -> {new['score']:g} ({new['status']})"
                + (f" error: {new['error']}" if new["error"] else "")
                + f"\n      reference {_one_line(entry['reference'])}\n      response  {_one_line(entry['response'])}"
            )
    return "\n".join(lines)


def plot_reverify(report: dict[str, Any], path: Path) -> None:
    try:
        from matplotlib.figure import Figure
    except ModuleNotFoundError:
        raise RewardhubError("--plot needs matplotlib: pip install 'rewardhub[audit]'") from None

    classes = list(report["by_class"])
    figure = Figure(figsize=(10, max(3.0, 0.4 * len(classes) + 1.5)))
    axes = figure.subplots()
    if classes:
        left = [0] * len(classes)
        for flip in FLIPS:
            counts = [report["by_class"][name].get(flip, 0) for name in classes]
            if any(counts):
                axes.barh(range(len(classes)), counts, left=left, color=COLORS[flip], height=0.6, label=flip)
                left = [a + b for a, b in zip(left, counts, strict=True)]
        axes.set_yticks(range(len(classes)), [(name or "(none)")[:48] for name in classes], fontsize=8)
        axes.set_ylim(max(len(classes), 6) - 0.5, -0.5)
        axes.xaxis.get_major_locator().set_params(integer=True)
        axes.legend(loc="lower right", fontsize=8)
    else:
        axes.text(0.5, 0.5, "no verdict flipped", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlabel("samples")
    flips = report["flips"]
    axes.set_title("  ".join(f"{flip}: {flips[flip]}" for flip in FLIPS) + f"  of {report['n']}", fontsize=10)
    figure.suptitle(f"reverify of {_spec_name(report['verifier'])} against {_spec_name(report['against'])}")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
