"""Reports of WaterDrum results: ``report.json``, a readable ``report.md`` and PNG plots.

Shared by ``waterdrum demo``, ``waterdrum score``, the monitoring example and the paper
reproduction. A report is a dict::

    {"models": {name: <waterdrum_result(..., return_details=True)>, ...},
     "curves": {method: [{"step": ..., "forget": ..., "retain": ...}, ...]},   # optional
     "timings": {stage: seconds}, "settings": {...}}

A model's result may also be its flat dict (``compute_waterdrum``'s, or one read back from
``report.json``): every function here takes either and reads a
:class:`~waterdrum_hf.metric.WaterDrumResult`; ``report.json`` holds the flat dicts.

Models named ``original`` and ``retrained`` are marked in the plots; owners appear by name
only. Plots use matplotlib's object API (no pyplot state, no display needed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from waterdrum_hf.metric import WaterDrumResult

Results = Mapping[str, WaterDrumResult | Mapping[str, Any]]
"""Each model's result by model name, typed or as its flat dict."""

Q_DEFINITION = (
    "q(g, key) is Waterfall's verification score of a generated text g under an owner's key: "
    "the mean, over the text's counted tokens, of Waterfall's function k_p at pi_j, the "
    "token's position in the key- and context-dependent permutation of the N-token vocabulary "
    "(cos(2*pi*k_p*pi_j/N) for the paper's k_p = 1; a sine beyond N/2 - 1). It lies in [-1, 1]; text without the owner's watermark reads about 0 (see the "
    "null level), watermarked text close to 1."
)

SET_COLORS = {"forget": "tab:red", "retain": "tab:blue"}


def typed(models: Results) -> dict[str, WaterDrumResult]:
    """Each model's result as a :class:`WaterDrumResult` (flat dicts read with ``from_dict``)."""
    return {
        name: m if isinstance(m, WaterDrumResult) else WaterDrumResult.from_dict(m)
        for name, m in models.items()
    }


def write_report(
    report: Mapping[str, Any], out_dir: str | Path, *, title: str = "WaterDrum report"
) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the plots that apply; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    models = typed(report["models"])
    written = [out / "report.json"]
    flat = {name: m.to_dict() for name, m in models.items()}
    written[0].write_text(json_text({**report, "models": flat}))
    plots: dict[str, Path] = {}
    if any(m.forget and m.retain for m in models.values()):
        plots["benchmark"] = plot_benchmark(models, out / "benchmark.png")
    if report.get("curves"):
        plots["curves"] = plot_curves(report["curves"], out / "curves.png")
    if any(m.per_owner for m in models.values()):
        plots["per_owner"] = plot_per_owner(models, out / "per_owner.png")
    roc_model = "retrained" if "retrained" in models else next(iter(models))
    if models[roc_model].separability_auroc is not None and models[roc_model].query_values:
        plots["roc"] = plot_roc(models[roc_model], out / "roc.png", label=roc_model)
    (out / "report.md").write_text(markdown({**report, "models": models}, plots, title=title))
    return [*written, out / "report.md", *plots.values()]


def closest_to_retrained(models: Results) -> tuple[str, float] | None:
    """The unlearned model whose (forget, retain) point is nearest the retrained model's."""
    models = typed(models)
    target = models.get("retrained")
    if target is None or not (target.forget and target.retain):
        return None
    distances = {
        name: math.hypot(m.forget.value - target.forget.value, m.retain.value - target.retain.value)
        for name, m in models.items()
        if name not in ("original", "retrained") and m.forget and m.retain
    }
    if not distances:
        return None
    best = min(distances, key=distances.get)
    return best, distances[best]


def markdown(report: Mapping[str, Any], plots: Mapping[str, Path], *, title: str) -> str:
    """The readable summary: what the numbers mean, the table, the verdicts, the plots."""
    models = typed(report["models"])
    values = {name: m.sets() for name, m in models.items()}
    sets = [s for s in ("forget", "retain", "overall") if any(s in v for v in values.values())]
    with_null = [
        s for s in sets if any(s in v and v[s].null_mean is not None for v in values.values())
    ]
    lines = [f"# {title}", "", Q_DEFINITION, ""]
    if "forget" in sets:
        lines += [
            "A query is a prompt made from one owner's data; its value pools the q of its "
            "samples (token-weighted). A set's value is the mean over its queries. The *forget* "
            "value should fall to the null level after unlearning, as on a model retrained "
            "without the forget owners' data; the *retain* value should stay where it was. "
            "AUROC: how well per-query values separate retain (positive) from forget queries "
            "(1 = perfectly, 0.5 = not at all).",
            "",
        ]
    header = ["model", *sets]
    if "forget" in sets:
        header += ["AUROC"]
    header += [f"{s} null (mean ± sd)" for s in with_null]
    header += ["queries", "samples scored / skipped"]
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for name, m in models.items():
        row = [name, *(f"{values[name][s].value:+.3f}" if s in values[name] else "–" for s in sets)]
        if "forget" in sets:
            auroc = m.separability_auroc
            row.append("–" if auroc is None else f"{auroc:.3f}")
        for s in with_null:
            value = values[name].get(s)
            row.append(
                f"{value.null_mean:+.3f} ± {value.null_std:.3f}"
                if value is not None and value.null_mean is not None
                else "–"
            )
        row += [str(m.num_queries), f"{m.num_scored} / {m.num_skipped}"]
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "Null level: the set's value under random keys that own nothing (mean ± standard "
        'deviation over those keys), i.e. what "no watermark" reads on the same texts. '
        "A skipped sample had no countable token (too short).",
        "",
    ]
    lines += _verdicts(models)
    best = closest_to_retrained(models)
    if best is not None:
        name, distance = best
        lines += [
            f"**Closest to retraining:** `{name}` (distance {distance:.3f} to the retrained "
            "model in the (forget, retain) plane).",
            "",
        ]
    captions = {
        "benchmark": "Forget vs retain value per model (the paper's benchmark plot). The ideal "
        "unlearned model sits at the forget null level with the original's retain value.",
        "curves": "Forget and retain values during unlearning, logged by WaterDrumCallback.",
        "per_owner": "Each owner's value per model (mean ± standard error over its queries, n "
        "= scored queries), with that owner's null band (mean ± 2 sd over random keys).",
        "roc": "ROC of per-query values, retain positive, forget negative.",
    }
    for key, path in plots.items():
        lines += [f"![{key}]({path.name})", "", captions[key], ""]
    if report.get("timings"):
        total = sum(report["timings"].values())
        parts = ", ".join(f"{k} {v:.0f} s" for k, v in report["timings"].items())
        lines += [f"Time: {total:.0f} s ({parts}).", ""]
    return "\n".join(lines)


def _verdicts(models: Mapping[str, WaterDrumResult]) -> list[str]:
    """One line per model: is the forget owners' watermark still there, at what error rate."""
    lines = []
    for name, m in models.items():
        if m.forget is not None and m.forget.p_value is not None:
            still = m.forget.p_value <= 0.05
            z = math.nan if m.forget.z is None else m.forget.z
            lines.append(
                f"- `{name}`: the forget owners' watermark is "
                + ("**still detected**" if still else "not detected")
                + f" (p = {m.forget.p_value:.3f}, z = {z:+.1f}; "
                "p is the chance that a key owning nothing reads this high)."
            )
    return [*lines, ""] if lines else []


def plot_benchmark(models: Results, path: str | Path) -> Path:
    """Forget value (x) vs retain value (y) per model, original and retrained marked."""
    fig, ax = new_figure(6.0, 4.6)
    draw_benchmark(ax, models, "Unlearning benchmark")
    return save_figure(fig, path)


def draw_benchmark(ax: Any, models: Results, title: str) -> None:
    """The benchmark scatter on ``ax``: models, the forget null band and the ideal point."""
    models = typed(models)
    for name, m in models.items():
        if not (m.forget and m.retain):
            continue
        style = {"original": ("s", "black"), "retrained": ("*", "tab:green")}.get(name, ("o", None))
        point = (m.forget.value, m.retain.value)
        ax.scatter(
            *point, marker=style[0], color=style[1], s=90 if name == "retrained" else 50, zorder=3
        )
        ax.annotate(name, point, textcoords="offset points", xytext=(5, 4), fontsize=8)
    original = models.get("original")
    reference = models.get("retrained", original)
    null = reference.forget if reference is not None and reference.forget else None
    if null is not None and null.null_mean is not None and original is not None and original.retain:
        ideal = (null.null_mean, original.retain.value)
        ax.scatter(*ideal, marker="P", s=90, facecolors="none", edgecolors="tab:purple", zorder=2)
        ax.annotate(
            "ideal",
            ideal,
            textcoords="offset points",
            xytext=(5, -10),
            fontsize=8,
            color="tab:purple",
        )
        ax.axvspan(
            null.null_mean - 2 * null.null_std,
            null.null_mean + 2 * null.null_std,
            color="grey",
            alpha=0.15,
            label="forget null ±2 sd",
        )
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel("forget WaterDrum value (lower is better)")
    ax.set_ylabel("retain WaterDrum value (higher is better)")
    ax.set_title(title)


def plot_curves(curves: Mapping[str, Sequence[Mapping[str, float]]], path: str | Path) -> Path:
    """Forget and retain values against the training step, one line per method."""
    fig, axes = new_figure(9.0, 3.6, ncols=2)
    for ax, key in zip(axes, ("forget", "retain"), strict=True):
        for method, points in curves.items():
            steps = [p["step"] for p in points if key in p]
            ax.plot(
                steps, [p[key] for p in points if key in p], marker="o", markersize=3, label=method
            )
        ax.set_xlabel("optimizer step")
        ax.set_ylabel(f"{key} value")
        ax.set_title(f"{key.capitalize()} WaterDrum during unlearning")
        ax.axhline(0, color="black", linewidth=0.5)
    axes[1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
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
        label = name
        for xi, owner in zip(x, owners, strict=True):
            entry = entries.get(owner)
            if entry is None or entry.value is None:
                ax.text(xi, 0, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
                continue
            n = entry.num_scored_queries
            error = (entry.std or 0.0) / math.sqrt(n)
            ax.bar(xi, entry.value, width, yerr=error, capsize=2, color=f"C{i}", label=label)
            ax.text(xi, max(entry.value, 0) + error + 0.02, f"n={n}", ha="center", fontsize=6)
            label = None
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
                label="null ±2 sd" if j == 0 else None,
            )
    forget = {o for entries in per_owner.values() for o, e in entries.items() if e.forget}
    ax.set_xticks(np.arange(len(owners)))
    ax.set_xticklabels([f"{o}\n(forget)" if o in forget else o for o in owners], fontsize=8)
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_ylabel("WaterDrum value (mean q)")
    ax.set_title("Per-owner WaterDrum values (± standard error)")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return save_figure(fig, path)


def plot_roc(model: WaterDrumResult | Mapping[str, Any], path: str | Path, *, label: str) -> Path:
    """ROC curve of per-query values, retain queries positive, forget queries negative."""
    model = typed({label: model})[label]
    forget_owners = {o for o, e in model.per_owner.items() if e.forget}
    positive = [o not in forget_owners for o in model.query_owners]
    fig, ax = new_figure(4.4, 4.2)
    draw_roc(ax, {f"{label} (AUROC {model.separability_auroc:.3f})": model.query_values}, positive)
    ax.set_title("Separability (D1)")
    return save_figure(fig, path)


def draw_roc(ax: Any, curves: Mapping[str, Sequence[float]], positive: Sequence[bool]) -> None:
    """ROC curves on ``ax``, one per labelled list of per-query values (NaN left out)."""
    positive = np.asarray(positive, dtype=bool)
    for label, raw in curves.items():
        values = np.asarray(raw, dtype=float)
        keep = ~np.isnan(values)
        values, labels = values[keep], positive[keep]
        thresholds = np.concatenate([[np.inf], np.unique(values)[::-1]])
        tpr = [(values[labels] >= t).mean() for t in thresholds]
        fpr = [(values[~labels] >= t).mean() for t in thresholds]
        ax.plot(fpr, tpr, drawstyle="steps-post", label=label)
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("false positive rate (forget queries)")
    ax.set_ylabel("true positive rate (retain queries)")
    ax.legend(fontsize=8, loc="lower right")


def new_figure(width: float, height: float, ncols: int = 1) -> tuple[Any, Any]:
    """A matplotlib ``Figure`` (no pyplot, no display) and its ``ncols`` axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    return fig, fig.subplots(1, ncols)


def save_figure(fig: Any, path: str | Path) -> Path:
    """Save ``fig`` as a PNG at ``path`` (tight layout, 120 dpi)."""
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return Path(path)


def json_text(value: Any) -> str:
    """Strict JSON (NaN written as ``null``, numpy scalars as numbers), indented."""
    return json.dumps(_without_nan(value), indent=2, allow_nan=False)


def _without_nan(value: Any) -> Any:
    """``value`` with NaN as ``None`` and numpy scalars as Python ones: strict JSON."""
    if isinstance(value, Mapping):
        return {str(k): _without_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_nan(v) for v in value]
    if isinstance(value, (np.floating, np.integer)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
