"""The report's PNG plots: the benchmark scatter, the curves during unlearning, per-owner bars
and the ROC. Every model keeps one colour in every plot (:func:`model_color`); plots use
matplotlib's object API (no pyplot state, no display needed)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from waterdrum_hf.report.findings import Results, interval_level, typed
from waterdrum_hf.scoring import OwnerValue, SetValue, WaterDrumResult

MODEL_COLORS: Mapping[str, str] = MappingProxyType(
    {
        "original": "#333333",
        "retrained": "tab:green",
        "kl": "tab:blue",
        "scrub": "tab:orange",
        "graddiff": "tab:red",
        "npo": "tab:purple",
        "taskvector": "tab:brown",
        "gradascent": "tab:pink",
        "simnpo": "tab:olive",
        "idkdpo": "tab:cyan",
        "idknll": "tab:gray",
    }
)
"""The fixed colour of each model the demo and the reproduction name (by canonical name)."""


OTHER_COLORS = ("navy", "teal", "goldenrod", "maroon", "darkkhaki", "slateblue", "sienna")
"""Colours of other model names, picked by a hash of the name (stable from run to run)."""


IDEAL_COLOR = "black"
"""The benchmark plot's ideal point: a hollow marker in a colour no model has."""


LABEL_OFFSETS = tuple(
    (round(r * dx), round(r * dy))
    for r in (8, 16, 26)
    for dx, dy in (
        (1, 0),
        (-1, 0),
        (0.8, 0.8),
        (-0.8, 0.8),
        (0.8, -0.8),
        (-0.8, -0.8),
        (0, 1),
        (0, -1),
    )
)
"""Where :func:`label_points` tries a name, in points from its marker: nearest first."""


def model_color(name: str) -> str:
    """The colour of a model (or unlearning method) in every plot: fixed for the names of
    :data:`MODEL_COLORS` (any case, ``_`` and ``-`` ignored), stable for any other name."""
    key = name.lower().replace("_", "").replace("-", "")
    if key in MODEL_COLORS:
        return MODEL_COLORS[key]
    return OTHER_COLORS[zlib.crc32(key.encode()) % len(OTHER_COLORS)]


def plot_benchmark(models: Results, path: str | Path) -> Path:
    """Forget value (x) vs retain value (y) per model, original and retrained marked."""
    return benchmark_figure({"Unlearning benchmark": models}, path)


def benchmark_figure(panels: Mapping[str, Results], path: str | Path) -> Path:
    """One benchmark scatter per titled panel, one legend, every point named where its name
    fits (:func:`label_points`)."""
    fig, axes = new_figure(5.0 * len(panels) + 1.6, 4.6, ncols=len(panels))
    axes = np.atleast_1d(axes)
    points = [
        draw_benchmark(ax, models, title)
        for ax, (title, models) in zip(axes, panels.items(), strict=True)
    ]
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    axes[-1].legend(
        handles.values(), handles.keys(), fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5)
    )
    fig.tight_layout()  # the axes' final size before the names are placed
    for ax, named in zip(axes, points, strict=True):
        label_points(ax, named)
    return save_figure(fig, path)


def draw_benchmark(ax: Any, models: Results, title: str) -> dict[str, tuple[float, float]]:
    """The benchmark scatter on ``ax``: models, the forget null band and the ideal point.
    Returns the points to name, by name (the names are placed once the layout is final)."""
    models = typed(models)
    points = {}
    for name, m in models.items():
        if not (m.forget and m.retain):
            continue
        marker = {"original": "s", "retrained": "*"}.get(name, "o")
        points[name] = (m.forget.value, m.retain.value)
        if m.forget.ci_low is not None or m.retain.ci_low is not None:
            ax.errorbar(
                *points[name],
                xerr=error_bars(m.forget),
                yerr=error_bars(m.retain),
                fmt="none",
                ecolor=model_color(name),
                elinewidth=1,
                capsize=2,
                alpha=0.7,
                zorder=2,
            )
        ax.scatter(
            *points[name],
            marker=marker,
            color=model_color(name),
            s=120 if name == "retrained" else 50,
            zorder=3,
            label=name,
        )
    original = models.get("original")
    reference = models.get("retrained", original)
    null = reference.forget if reference is not None and reference.forget else None
    if (
        null is not None
        and null.null_mean is not None
        and null.null_std is not None
        and original is not None
        and original.retain
    ):
        points["ideal"] = (null.null_mean, original.retain.value)
        ax.scatter(
            *points["ideal"],
            marker="P",
            s=90,
            facecolors="none",
            edgecolors=IDEAL_COLOR,
            zorder=2,
            label="ideal",
        )
        ax.axvspan(
            null.null_mean - 2 * null.null_std,
            null.null_mean + 2 * null.null_std,
            color="grey",
            alpha=0.15,
            label="forget null ±2 sd",
        )
    ax.margins(0.12)
    ax.set_xlabel("forget WaterDrum value (lower is better)")
    ax.set_ylabel("retain WaterDrum value (higher is better)")
    ax.set_title(title)
    return points


def error_bars(value: SetValue | OwnerValue) -> np.ndarray | None:
    """Matplotlib's asymmetric error of a value with an interval, ``[[below], [above]]`` (0 on
    a side the value lies beyond: a percentile interval need not hold its point estimate)."""
    if value.value is None or value.ci_low is None or value.ci_high is None:
        return None
    return np.maximum([[value.value - value.ci_low], [value.ci_high - value.value]], 0.0)


def label_points(ax: Any, points: Mapping[str, tuple[float, float]]) -> None:
    """Name each point beside its marker where the name overlaps no other name and no marker
    and stays inside the axes (nearest place of :data:`LABEL_OFFSETS` first, with a leader
    line when further out). A name that fits nowhere is left out: the legend still has it.
    Call once the layout is final: the places are found in display space."""
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    ax.set_xlim(ax.get_xlim())  # freeze the limits: the names must not move the points
    ax.set_ylim(ax.get_ylim())
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    radius = 5 * ax.figure.dpi / 72  # about the largest marker's radius, in pixels
    taken = [
        Bbox.from_extents(x - radius, y - radius, x + radius, y + radius)
        for x, y in (ax.transData.transform(p) for p in points.values())
    ]
    for name, point in points.items():
        for dx, dy in LABEL_OFFSETS:
            text = ax.annotate(
                name,
                point,
                textcoords="offset points",
                xytext=(dx, dy),
                ha="left" if dx > 0 else "right" if dx < 0 else "center",
                va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                fontsize=8,
                arrowprops=None
                if max(abs(dx), abs(dy)) < 10
                else {"arrowstyle": "-", "lw": 0.5, "color": "grey"},
            )
            text.get_window_extent(renderer)  # places the name (and its leader line)
            box = Text.get_window_extent(text, renderer).padded(1.5)  # the name alone
            inside = (
                frame.x0 <= box.x0
                and box.x1 <= frame.x1
                and frame.y0 <= box.y0
                and box.y1 <= frame.y1
            )
            if inside and not any(box.overlaps(other) for other in taken):
                taken.append(box)
                break
            text.remove()


def plot_curves(
    curves: Mapping[str, Sequence[Mapping[str, float]]],
    path: str | Path,
    *,
    note: str | None = None,
) -> Path:
    """Forget and retain values against the training step, one line per method (in its
    :func:`model_color`); ``note`` (e.g. :func:`curve_note`) goes under the plots."""
    fig, axes = new_figure(9.0, 3.6, ncols=2)
    for ax, key in zip(axes, ("forget", "retain"), strict=True):
        for method, points in curves.items():
            steps = [p["step"] for p in points if key in p]
            ax.plot(
                steps,
                [p[key] for p in points if key in p],
                marker="o",
                markersize=3,
                color=model_color(method),
                label=method,
            )
        ax.set_xlabel("optimizer step")
        ax.set_ylabel(f"{key} value")
        ax.set_title(f"{key.capitalize()} WaterDrum during unlearning")
        ax.axhline(0, color="black", linewidth=0.5)
    axes[1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    if note:
        fig.tight_layout()
        fig.text(0.02, 0.0, note, ha="left", va="top", fontsize=7.5, wrap=True)
    return save_figure(fig, path)


def plot_per_owner(models: Results, path: str | Path) -> Path:
    """Grouped bars: each owner's value per model, standard errors, counts and null bands.

    An owner with no scored query gets "n/a" instead of a bar (never a 0, which would read as
    "forgotten").
    """
    per_owner = {name: m.per_owner for name, m in typed(models).items() if m.per_owner}
    owners = list(dict.fromkeys(o for entries in per_owner.values() for o in entries))
    width = 0.8 / max(len(per_owner), 1)
    fig, ax = new_figure(max(6.0, 1.1 * len(owners) * max(1, len(per_owner) / 3) + 2.5), 4.4)
    for i, (name, entries) in enumerate(per_owner.items()):
        x = np.arange(len(owners)) + (i - (len(per_owner) - 1) / 2) * width
        label: str | None = name
        for xi, owner in zip(x, owners, strict=True):
            entry = entries.get(owner)
            if entry is None or entry.value is None:
                ax.text(xi, 0, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
                continue
            n = entry.num_scored_queries
            error = error_bars(entry)
            if error is None:  # no interval: the standard error
                error = np.full((2, 1), (entry.std or 0.0) / math.sqrt(n))
            ax.bar(
                xi, entry.value, width, yerr=error, capsize=2, color=model_color(name), label=label
            )
            top = max(entry.value, 0) + float(error[1, 0])
            ax.text(xi, top + 0.02, f"n={n}", ha="center", fontsize=6)
            label = None
    band: str | None = "null ±2 sd"  # the first band drawn names them all in the legend
    for j, owner in enumerate(owners):
        nulls = [
            e[owner] for e in per_owner.values() if owner in e and e[owner].null_mean is not None
        ]
        if nulls:
            mean = float(np.mean([e.null_mean for e in nulls]))
            spread = float(np.mean([e.null_std for e in nulls]))
            ax.fill_between(
                [j - 0.45, j + 0.45],
                mean - 2 * spread,
                mean + 2 * spread,
                color="grey",
                alpha=0.2,
                zorder=0,
                label=band,
            )
            band = None
    forget = {o for entries in per_owner.values() for o, e in entries.items() if e.forget}
    ax.set_xticks(np.arange(len(owners)))
    ax.set_xticklabels([f"{o}\n(forget)" if o in forget else o for o in owners], fontsize=8)
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_ylabel("WaterDrum value (mean q)")
    level = interval_level(models)
    ax.set_title(
        f"Per-owner WaterDrum values ({level} CI)"
        if level
        else "Per-owner WaterDrum values (± standard error)"
    )
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return save_figure(fig, path)


def plot_roc(model: WaterDrumResult | Mapping[str, Any], path: str | Path, *, label: str) -> Path:
    """ROC curve of per-query values, retain queries positive, forget queries negative."""
    model = typed({label: model})[label]
    if model.per_owner is None or model.query_owners is None or model.query_values is None:
        raise ValueError(f"plot_roc needs {label!r}'s details (return_details=True)")
    forget_owners = {o for o, e in model.per_owner.items() if e.forget}
    positive = [o not in forget_owners for o in model.query_owners]
    fig, ax = new_figure(4.4, 4.2)
    name = f"{label} (AUROC {model.separability_auroc:.3f})"
    draw_roc(ax, {name: model.query_values}, positive, colors={name: model_color(label)})
    ax.set_title("Separability (D1)")
    return save_figure(fig, path)


def draw_roc(
    ax: Any,
    curves: Mapping[str, Sequence[float]],
    positive: Sequence[bool] | np.ndarray,
    *,
    colors: Mapping[str, str] | None = None,
) -> None:
    """ROC curves on ``ax``, one per labelled list of per-query values (NaN left out).

    Curves that coincide (two perfect metrics) must both stay visible: the first is a wide,
    pale line underneath, each later one a thin dashed or dotted line drawn over it.
    """
    positive = np.asarray(positive, dtype=bool)
    styles: list[dict[str, Any]] = [{}]  # one curve: a plain line
    if len(curves) > 1:
        styles = [{"linewidth": 4.0, "alpha": 0.45, "zorder": 2}] + [
            {"linewidth": 1.4, "linestyle": style, "zorder": 3 + i}
            for i, style in enumerate(["--", ":", "-."] * len(curves))
        ]
    for (label, raw), style in zip(curves.items(), styles, strict=False):
        values = np.asarray(raw, dtype=float)
        keep = ~np.isnan(values)
        values, labels = values[keep], positive[keep]
        thresholds = np.concatenate([[np.inf], np.unique(values)[::-1]])
        tpr = [(values[labels] >= t).mean() for t in thresholds]
        fpr = [(values[~labels] >= t).mean() for t in thresholds]
        ax.plot(
            fpr,
            tpr,
            drawstyle="steps-post",
            label=label,
            color=(colors or {}).get(label),
            **style,
        )
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("false positive rate (forget queries)")
    ax.set_ylabel("true positive rate (retain queries)")
    ax.legend(
        fontsize=8,
        loc="lower right",
        title="where lines coincide, the dashed\none lies on the wide one"
        if len(curves) > 1
        else None,
        title_fontsize=7,
    )


def new_figure(width: float, height: float, ncols: int = 1) -> tuple[Any, Any]:
    """A matplotlib ``Figure`` (no pyplot, no display) and its ``ncols`` axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)  # a renderer to measure text with (label_points)
    return fig, fig.subplots(1, ncols)


def save_figure(fig: Any, path: str | Path) -> Path:
    """Save ``fig`` as a PNG at ``path`` (tight layout, 120 dpi)."""
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return Path(path)
