"""``results.json``, ``results.md`` (tables shaped like the paper's, its numbers beside ours:
:mod:`~waterdrum_hf.experiments.reproduction.results_markdown`) and the plots of a
reproduction run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from waterdrum_hf.experiments.reproduction.results_markdown import D2_METRICS, LABELS, markdown
from waterdrum_hf.report import benchmark_figure, draw_roc, json_text, new_figure, save_figure

_PALETTE = (
    *(f"C{i}" for i in range(10)),
    "black",
    "teal",
    "darkgoldenrod",
    "magenta",
    "navy",
    "lime",
    "saddlebrown",
    "slategray",
)
METRIC_COLORS = dict(zip(LABELS, _PALETTE, strict=True))
"""Each metric's colour in every plot of the reproduction (matplotlib's ten, then eight more)."""


def write_results(results: Mapping[str, Any], out_dir: str | Path, *, command: str) -> list[Path]:
    """Write ``results.json``, ``results.md`` and the PNGs; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots = {
        "calibration": plot_calibration(results["curves"], out / "calibration.png"),
        "roc": plot_separability(results["roc"], out / "roc.png"),
        "benchmark": plot_benchmarks(results["benchmark"], out / "benchmark.png"),
        "resilience": plot_decoy(results["resilience"]["decoy"], out / "resilience.png"),
    }
    if results.get("meta_evaluation"):
        plots["meta_evaluation"] = plot_meta_evaluation(
            results["meta_evaluation"], out / "meta_evaluation.png"
        )
    saved = {k: v for k, v in results.items() if k not in ("roc",)}
    (out / "results.json").write_text(json_text(saved))
    (out / "results.md").write_text(markdown(results, command=command))
    return [out / "results.json", out / "results.md", *plots.values()]


def plot_calibration(curves: Mapping[str, Any], path: Path) -> Path:
    """Forget value against k/|D_F| per metric of the paper's D2 table (± sd over seeds),
    best-fit lines through 0."""
    panels = {
        setting: {
            metric: {"share": curve["share"], **curve[metric]}
            for metric in D2_METRICS
            if metric in curve  # D1-only metrics have no curve
        }
        for setting, curve in curves.items()
    }
    return plot_forget_curves(panels, path, colors=METRIC_COLORS, labels=LABELS)


def plot_forget_curves(
    panels: Mapping[str, Mapping[str, Mapping[str, Any]]],
    path: Path,
    *,
    colors: Mapping[str, str],
    labels: Mapping[str, str],
    ylabel: str = "forget value",
) -> Path:
    """One panel per setting; in each, every line's forget value (``mean`` ± ``std``) against
    the ``share`` of the forget set trained on, with its best-fit line through the origin."""
    fig, axes = new_figure(4.2 * len(panels), 3.8, ncols=len(panels))
    axes = np.atleast_1d(axes)
    for ax, (setting, lines) in zip(axes, panels.items(), strict=True):
        for name, line in lines.items():
            share, mean = np.array(line["share"]), np.array(line["mean"])
            ax.errorbar(
                share,
                mean,
                yerr=np.array(line["std"]),
                marker="o",
                markersize=3,
                color=colors[name],
                label=labels[name],
            )
            slope = float(share @ mean / (share @ share))
            ax.plot([0, 1], [0, slope], color=colors[name], linestyle=":", linewidth=1)
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xlabel("share of the forget set trained on (k/|D_F|)")
        ax.set_ylabel(ylabel)
        ax.set_title(setting.replace("_", " "))
    axes[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    return save_figure(fig, path)


def plot_separability(roc: Mapping[str, Any], path: Path) -> Path:
    """ROC of WaterDrum and ROUGE-L per setting on the retrained model (first seed); where both
    are perfect the curves coincide, and :func:`draw_roc` keeps both in sight."""
    fig, axes = new_figure(4.0 * len(roc), 3.8, ncols=len(roc))
    metrics = ("waterdrum", "rouge_l")
    for ax, (setting, values) in zip(np.atleast_1d(axes), roc.items(), strict=True):
        positive = [not f for f in values["is_forget"]]
        draw_roc(
            ax,
            {LABELS[m]: values[m] for m in metrics},
            positive,
            colors={LABELS[m]: METRIC_COLORS[m] for m in metrics},
        )
        ax.set_title(setting.replace("_", " "))
    return save_figure(fig, path)


def plot_benchmarks(benchmark: Mapping[str, Mapping[str, Any]], path: Path) -> Path:
    """The benchmark scatter (forget vs retain per method) for each setting."""
    return benchmark_figure(
        {setting.replace("_", " "): models for setting, models in benchmark.items()}, path
    )


def plot_meta_evaluation(meta: Mapping[str, Any], path: Path) -> Path:
    """Each metric's mean faithfulness against its mean robustness over seeds (OpenUnlearning's
    picture: the upper right is best), the range over seeds as bars."""
    fig, ax = new_figure(5.2, 4.4)
    for metric, measures in meta["metrics"].items():
        x, y = measures["faithfulness"], measures["robustness"]
        xs = [v for v in x["per_seed"] if v is not None and np.isfinite(v)]
        ys = [v for v in y["per_seed"] if v is not None and np.isfinite(v)]
        if not xs or not ys:
            continue
        ax.errorbar(
            x["mean"],
            y["mean"],
            xerr=[[x["mean"] - min(xs)], [max(xs) - x["mean"]]],
            yerr=[[y["mean"] - min(ys)], [max(ys) - y["mean"]]],
            marker="o",
            color=METRIC_COLORS[metric],
            label=LABELS[metric],
        )
    ax.margins(0.15)  # zoomed to the metrics: where all sit near 1, the plot says so
    ax.set_xlabel("faithfulness (AUROC)")
    ax.set_ylabel("robustness (harmonic mean of R and Q)")
    ax.set_title("Meta-evaluation (range over seeds)")
    ax.legend(fontsize=7, loc="lower left")
    return save_figure(fig, path)


def plot_decoy(decoy: Mapping[str, list[float]], path: Path) -> Path:
    """Scaled aggregate forget value against the share of intercepted queries."""
    fig, ax = new_figure(4.4, 4.0)
    ax.plot(decoy["intercepted"], decoy["scaled"], marker="o", label="WaterDrum")
    ax.plot([0, 1], [1, 0], linestyle="--", color="tab:orange", label="ideal (diagonal)")
    ax.set_xlabel("share of queries intercepted by the decoy")
    ax.set_ylabel("aggregate forget value (scaled)")
    ax.set_title("Decoy model (resilience)")
    ax.legend(fontsize=8)
    return save_figure(fig, path)
