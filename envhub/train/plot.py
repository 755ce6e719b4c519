"""``envhub plot RUN_DIR``: training curves from a run's ``metrics.jsonl`` as one PNG (matplotlib)."""

from __future__ import annotations

from pathlib import Path

from envhub.core.errors import ConfigurationError
from envhub.train.tracking import read_metrics

__all__ = ["PANELS", "plot_run"]

#: Panels drawn when the run logged them: (title, metric keys).
PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("success rate", ("rollout/success", "val/success")),
    ("episode reward", ("rollout/reward", "val/reward")),
    ("KL to reference", ("actor/kl",)),
    ("entropy", ("actor/entropy",)),
    ("clip fraction", ("actor/clipfrac", "actor/clipfrac_lower")),
    ("grad norm", ("actor/grad_norm",)),
    ("seconds per iteration", ("time/iteration_s", "time/update_s", "time/rollout_wait_s")),
    ("staleness", ("staleness/mean", "staleness/max")),
)


def plot_run(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Draw the run's curves into ``out`` (default ``RUN_DIR/curves.png``) and return its path.

    Raises:
        ConfigurationError: the directory holds no ``metrics.jsonl`` rows.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_metrics(run_dir)
    if not rows:
        raise ConfigurationError(
            f"{run_dir} has no metrics.jsonl rows; give the run directory of an envhub-train run.",
            run_dir=str(run_dir),
        )
    panels = [(title, [k for k in keys if any(r.get(k) is not None for r in rows)]) for title, keys in PANELS]
    panels = [(title, keys) for title, keys in panels if keys]
    cols = 2
    nrows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(10, 3 * nrows), squeeze=False)
    for ax, (title, keys) in zip(axes.flat, panels, strict=False):
        for key in keys:
            points = [(r["iteration"], r[key]) for r in rows if r.get(key) is not None]
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=key)
        ax.set_title(title)
        ax.set_xlabel("iteration")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.tight_layout()
    target = Path(out) if out is not None else Path(run_dir) / "curves.png"
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return target
