"""``rewardhub-train plot RUN_DIR``: the run's curves in one PNG.

Reads ``metrics.jsonl`` (and ``eval.jsonl`` for the held-out points, step 0 included) and draws
one panel per group of related metrics. matplotlib is imported here only, with the Agg backend,
so plotting works on a headless machine and training never needs matplotlib.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

__all__ = ["DEFAULT_PANELS", "plot_run", "read_rows"]

DEFAULT_PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reward", ("reward/mean", "eval/reward_mean", "eval/greedy_reward_mean")),
    ("entropy (nats/token)", ("actor/entropy",)),
    ("response length (tokens)", ("response/length_mean", "response/length_max")),
    ("groups", ("groups/zero_variance_frac", "groups/solved_frac", "response/clip_frac")),
    ("KL", ("actor/ref_kl", "rollout/mismatch_kl", "actor/ppo_kl")),
    ("gradient norm", ("actor/grad_norm",)),
    ("IS ratio", ("rollout/is_ratio_mean", "rollout/is_ratio_max", "rollout/is_ratio_min")),
    ("seconds per step", ("time/generate_s", "time/reward_s", "time/train_s", "time/step_s")),
)


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plot_run(
    run_dir: str | Path, out: str | Path | None = None, panels: Sequence[tuple[str, Sequence[str]]] = DEFAULT_PANELS
) -> Path:
    """Draw the panels that have data; returns the PNG's path (default RUN_DIR/curves.png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run_dir = Path(run_dir)
    rows = read_rows(run_dir / "metrics.jsonl")
    evals = read_rows(run_dir / "eval.jsonl")
    if not rows and not evals:
        raise FileNotFoundError(f"no metrics in {run_dir} (expected metrics.jsonl)")

    def series(key: str) -> tuple[list[int], list[float]]:
        source = evals if key.startswith("eval/") else rows
        points = [(r["step"], r[key]) for r in source if isinstance(r.get(key), int | float)]
        return [p[0] for p in points], [p[1] for p in points]

    shown = [(title, keys) for title, keys in panels if any(series(k)[0] for k in keys)]
    cols = 2
    nrows = max(1, (len(shown) + cols - 1) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(11, 3.2 * nrows), squeeze=False)
    for ax, (title, keys) in zip(axes.flat, shown, strict=False):
        for key in keys:
            xs, ys = series(key)
            if xs:
                ax.plot(xs, ys, marker="o" if key.startswith("eval/") else None, markersize=3, label=key)
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(shown) :]:
        ax.axis("off")
    fig.suptitle(str(run_dir))
    fig.tight_layout()
    target = Path(out) if out is not None else run_dir / "curves.png"
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
