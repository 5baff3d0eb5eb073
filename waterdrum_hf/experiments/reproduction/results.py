"""``results.json``, ``results.md`` (tables shaped like the paper's, its numbers beside ours)
and the plots of a reproduction run."""

from __future__ import annotations

import math
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from waterdrum_hf.report import (
    benchmark_figure,
    draw_roc,
    json_text,
    new_figure,
    save_figure,
    typed,
)

LABELS = {
    "waterdrum": "WaterDrum",
    "waterdrum_null_corrected": "WaterDrum (null-corrected)",
    "rouge_l": "ROUGE-L",
    "mia": "MIA",
}
METRIC_COLORS = {metric: f"C{i}" for i, metric in enumerate(LABELS)}
"""Each metric's colour in every plot of the reproduction."""

PAPER: dict[str, Any] = {
    # WaterDrum-Ax, Llama-2-7B (the paper's Table 1, AUROC +- 3 seeds; Table 2 and the offset
    # table of its appendix, R^2).
    "auroc": {
        "exact_duplicate": {"waterdrum": "0.957 ± 0.008", "rouge_l": "0.334 ± 0.005"},
        "semantic_duplicate": {"waterdrum": "0.963 ± 0.001", "rouge_l": "0.960 ± 0.002"},
        "no_duplicate": {"waterdrum": "0.965 ± 0.002", "rouge_l": "0.974 ± 0.001"},
    },
    "r2": {
        "exact_duplicate": {"waterdrum": "0.987", "rouge_l": "-37.47", "mia": "-285.6"},
        "semantic_duplicate": {"waterdrum": "0.991", "rouge_l": "0.693", "mia": "-14.52"},
        "no_duplicate": {"waterdrum": "0.963", "rouge_l": "0.650", "mia": "0.677"},
    },
    "r2_offset": {
        "exact_duplicate": {"waterdrum": "0.994", "rouge_l": "0.923", "mia": "0.273"},
        "semantic_duplicate": {"waterdrum": "0.995", "rouge_l": "0.997", "mia": "-0.011"},
        "no_duplicate": {"waterdrum": "0.957", "rouge_l": "0.998", "mia": "0.990"},
    },
    "dilution": {"none": ("0.964", "0.963"), "waterfall": ("0.923", "0.936")},
}


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
    saved = {k: v for k, v in results.items() if k not in ("roc",)}
    (out / "results.json").write_text(json_text(saved))
    (out / "results.md").write_text(markdown(results, command=command))
    return [out / "results.json", out / "results.md", *plots.values()]


def markdown(results: Mapping[str, Any], *, command: str) -> str:
    """The paper's tables with our numbers (mean ± sd over seeds) and its numbers beside."""
    config = results["config"]
    settings = list(results["settings"])
    seeds = len(config["seeds"])
    lines = [
        *heading("Reproducing WaterDrum's claims at small scale", results, command=command),
        f"Data: {_data(config)}. Model: {config['model'] or 'the built-in small model'}, fine-tuned "
        f"{config['epochs']} epochs. Queries: {_queries(config)}; {config['num_samples']} samples of "
        f"{config['max_new_tokens']} tokens each, pooled per query; ROUGE-L: the greedy continuation "
        f"({config['rouge_new_tokens']} tokens) against {_reference(config)}; MIA: Min-k% Prob "
        f"(k = {config['mia_k']:g}), reported as 2 AUROC - 1 (forget vs holdout; the paper's "
        f"1 - 2 AUROC with holdout positive). "
        + seeds_sentence(seeds)
        + "The paper's numbers are WaterDrum-Ax on Llama-2-7B.",
        "",
        "## Separability (D1): AUROC of per-query values on the retrained model",
        "",
        *_table(results, "auroc", settings, ("waterdrum", "waterdrum_null_corrected", "rouge_l")),
        "",
        *_duplicate_table(results.get("duplicate_similarity", {})),
        "",
        "## Calibration (D2): R² of the forget value against k/|D_F|, line through the origin",
        "",
        "Without referencing the retrained model (the paper's main table):",
        "",
        *_table(
            results, "r2", settings, ("waterdrum", "waterdrum_null_corrected", "rouge_l", "mia")
        ),
        "",
        "With the paper's offset relaxation (the retrained model's value subtracted first):",
        "",
        *_table(
            results,
            "r2_offset",
            settings,
            ("waterdrum", "waterdrum_null_corrected", "rouge_l", "mia"),
        ),
        "",
        "![calibration curves](calibration.png)",
        "",
        "WaterDrum's forget value split by query: the queries made from the forget texts the "
        "model was trained on (the first k % of the forget set, in order), the rest, and the rest "
        "on the model retrained without the forget set (k = 0). Where the rest reads above its "
        "k = 0 value, the model carried the forget owners' watermark over from the texts it was "
        "trained on to the others, which bends the curve above the line:",
        "",
        *split_table(results["curves"]),
        "",
        "![ROC curves](roc.png)",
        "",
        "## MIA baseline (Min-k% Prob)",
        "",
        "| setting | original model | retrained model |",
        "| --- | --- | --- |",
        *[
            f"| {s} | {mean_sd(m['original'], m['original_std'], seeds)} | "
            f"{mean_sd(m['retrained'], m['retrained_std'], seeds)} |"
            for s, m in results["mia"].items()
        ],
        "",
        "## The benchmark of unlearning methods (first seed)",
        "",
        *_benchmark_table(results["benchmark"]),
        "",
        "![benchmark](benchmark.png)",
        "",
        "## Resilience",
        "",
        *_resilience(results["resilience"]),
        "",
        "![decoy curve](resilience.png)",
        "",
        "## Expected outcome, checked",
        "",
        *_checks(results),
        "",
    ]
    return "\n".join(lines)


def _table(
    results: Mapping[str, Any], name: str, settings: list[str], metrics: tuple[str, ...]
) -> list[str]:
    seeds = len(results["config"]["seeds"])
    ours = "ours" if seeds > 1 else "ours, one seed"
    header = ["setting", *(f"{LABELS[m]} ({ours})" for m in metrics)]
    paper_metrics = [m for m in metrics if any(m in PAPER[name].get(s, {}) for s in settings)]
    header += [f"{LABELS[m]} (paper)" for m in paper_metrics]
    rows = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for setting in settings:
        ours = results["settings"][setting]
        cells = [setting.replace("_", " ")]
        for metric in metrics:
            value, spread = (
                ours[name].get(metric, math.nan),
                ours[f"{name}_std"].get(metric, math.nan),
            )
            cells.append(mean_sd(value, spread, seeds) if math.isfinite(value) else "undefined")
        cells += [PAPER[name].get(setting, {}).get(m, "–") for m in paper_metrics]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def heading(title: str, results: Mapping[str, Any], *, command: str) -> list[str]:
    """A results file's title, then the command, the machine and the time it took."""
    return [
        f"# {title}",
        "",
        f"Command: `{command}`. Machine: {platform.machine()}, {cores()} CPU cores. "
        + run_time(results["seconds"]["total"], results["stages"]),
        "",
    ]


def seeds_sentence(seeds: int) -> str:
    """What ± means in the tables, or that one seed has no spread to report."""
    if seeds > 1:
        return f"{seeds} seeds; ± is the standard deviation over seeds. "
    return "One seed: no spread over seeds to report. "


def mean_sd(mean: float, spread: float, seeds: int) -> str:
    """``mean ± sd`` over seeds; the mean alone with one seed (its spread is no measurement)."""
    return f"{mean:.3f} ± {spread:.3f}" if seeds > 1 else f"{mean:.3f}"


def run_time(seconds: float, stages: Mapping[str, Any]) -> str:
    """How long the run took; a resumed run's own time is not the whole cost, so the build time
    of the stages it reused is added."""
    if not stages["reused"]:
        return f"Time: {seconds / 60:.1f} minutes."
    built = stages["reused_build_seconds"]
    return (
        f"Time: {seconds / 60:.1f} minutes in this run, which reused {stages['reused']} stages from "
        f"the cache that took {built / 60:.1f} minutes to build (from an empty cache: about "
        f"{(seconds + built) / 60:.0f} minutes)."
    )


def split_table(curves: Mapping[str, Any], *, label: str = "setting") -> list[str]:
    """WaterDrum's forget value per k, split into the forget queries trained on, the rest, and
    the rest at k = 0: one block of rows per curve (named in the ``label`` column)."""
    shares = next(iter(curves.values()))["share"]
    rows = [
        f"| {label} | forget queries | " + " | ".join(f"k = {s:.0%}" for s in shares) + " |",
        "|" + " --- |" * (len(shares) + 2),
    ]
    sides = {
        "trained": "trained on",
        "untrained": "not trained on",
        "untrained_at_k0": "not trained on, at k = 0",
    }
    for setting, curve in curves.items():
        for side, label in sides.items():
            cells = [
                f"{v:+.3f}" if v is not None and math.isfinite(v) else "–"  # JSON's null: NaN
                for v in curve["waterdrum_split"][side]
            ]
            rows.append(f"| {setting.replace('_', ' ')} | {label} | " + " | ".join(cells) + " |")
    return rows


def _duplicate_table(similarity: Mapping[str, Mapping[str, float]]) -> list[str]:
    rows = [
        f"| {setting.replace('_', ' ')} | {v['forget_text']:.3f} | {v['other_owner']:.3f} |"
        for setting, v in similarity.items()
        if v
    ]
    if not rows:
        return []
    return [
        "ROUGE-L recall of each duplicate against the forget text it duplicates and against a "
        "retain owner's text (the paper's duplicates, faithful paraphrases, read near 1 on the "
        "first and far above the second; that is what defeats ROUGE-L):",
        "",
        "| setting | against its forget text | against another owner's text |",
        "| --- | --- | --- |",
        *rows,
    ]


def _benchmark_table(benchmark: Mapping[str, Mapping[str, Any]]) -> list[str]:
    rows = [
        "| setting | model | forget | retain | forget p-value |",
        "| --- | --- | --- | --- | --- |",
    ]
    for setting, models in benchmark.items():
        for name, m in typed(models).items():
            forget, retain = (
                (m.forget.value if m.forget else math.nan),
                (m.retain.value if m.retain else math.nan),
            )
            p = f"{m.forget.p_value:.3f}" if m.forget and m.forget.p_value is not None else "–"
            rows.append(f"| {setting} | {name} | {forget:+.3f} | {retain:+.3f} | {p} |")
    return rows


def _resilience(resilience: Mapping[str, Any]) -> list[str]:
    decoy, dilution = resilience["decoy"], resilience["dilution"]
    lines = [
        "(a) A decoy model answers the queries whose original output is most similar to the forget "
        "set (bag-of-words cosine, the model owner's stand-in for STS) with unwatermarked text (the "
        "base model's). Aggregate forget value, scaled to 1 with nothing intercepted; the ideal "
        "metric follows the diagonal 1 - share (the paper: about 70 % interception to reach 0.2):",
        "",
        "| intercepted | " + " | ".join(f"{s:.0%}" for s in decoy["intercepted"]) + " |",
        "|" + " --- |" * (len(decoy["intercepted"]) + 1),
        "| scaled forget value | " + " | ".join(f"{v:.2f}" for v in decoy["scaled"]) + " |",
        "",
        f"(b) The model owner samples through its own Waterfall watermark (another key, kappa "
        f"{dilution['kappa']:g}):",
        "",
        "| watermark of the model owner | AUROC (ours) | R² (ours) | AUROC (paper) | R² (paper) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, label in (("none", "none"), ("waterfall", "adapted Waterfall")):
        auroc, r2 = dilution["auroc"][name], dilution["r2"][name]
        paper = PAPER["dilution"][name]
        lines.append(f"| {label} | {auroc:.3f} | {number(r2)} | {paper[0]} | {paper[1]} |")
    return lines


def _checks(results: Mapping[str, Any]) -> list[str]:
    """The issue's expected outcome, each as a measured yes/no."""
    lines = []
    for setting, summary in results["settings"].items():
        auroc, r2 = summary["auroc"]["waterdrum"], summary["r2"]["waterdrum"]
        lines.append(
            f"- {setting}: WaterDrum AUROC {auroc:.3f} ({'>' if auroc > 0.9 else '<='} 0.9), "
            f"R² {number(r2)} ({'>' if r2 > 0.9 else '<='} 0.9); ROUGE-L AUROC "
            f"{summary['auroc']['rouge_l']:.3f}."
        )
    lines += _carry_over(results)
    decoy = results["resilience"]["decoy"]
    gap = max(abs(s - (1 - i)) for i, s in zip(decoy["intercepted"], decoy["scaled"], strict=True))
    lines.append(f"- Decoy curve: largest distance from the diagonal {gap:.2f} (scaled units).")
    return lines


def _carry_over(results: Mapping[str, Any]) -> list[str]:
    """Where R² is not above 0.9: the first k between 0 and 100 % at which the untrained
    forget queries have a value, against the same queries at k = 0."""
    lines = []
    for setting, summary in results["settings"].items():
        if summary["r2"]["waterdrum"] > 0.9:
            continue
        curve = results["curves"][setting]
        split = curve["waterdrum_split"]
        for share, now, before in zip(
            curve["share"], split["untrained"], split["untrained_at_k0"], strict=True
        ):
            if 0 < share < 1 and math.isfinite(now) and math.isfinite(before):
                lines.append(
                    f"- {setting}: R² not above 0.9. At k = {share:.0%} the forget queries not trained "
                    f"on read {now:+.3f}; the same queries read {before:+.3f} at k = 0."
                )
                break
    return lines


def plot_calibration(curves: Mapping[str, Any], path: Path) -> Path:
    """Forget value against k/|D_F| per metric (± sd over seeds), best-fit lines through 0."""
    panels = {
        setting: {metric: {"share": curve["share"], **curve[metric]} for metric in LABELS}
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


def _data(config: Mapping[str, Any]) -> str:
    if config["dataset"] == "toy":
        how = (
            "paraphrasing with"
            if config["watermarking"] == "paraphrase"
            else "token substitutions chosen by"
        )
        scheme = config.get("scheme", "waterfall")  # results from before schemes: Waterfall
        strength = (
            f"Waterfall, kappa {config['kappa']:g}"
            if scheme == "waterfall"
            else f"adapted KGW, delta {config['delta']:g}"
        )
        return (
            f"the built-in corpus, {config['owners']} owners x {config['passages_per_owner']} "
            f"passages, the last {config['forget']} forgotten, {config['holdout_per_owner']} held-out "
            f"passages per forget owner, watermarked ({strength}) by {how} the "
            "built-in small model"
        )
    return f"{config['dataset']} ({config['dataset_config']})"


def _queries(config: Mapping[str, Any]) -> str:
    if config["dataset"] == "waterdrum-tofu":
        return "each question in the model's chat format"
    return f"the first {config['prefix_tokens']} tokens of each text (at most half)"


def _reference(config: Mapping[str, Any]) -> str:
    return "the answer" if config["dataset"] == "waterdrum-tofu" else "the text's next tokens"


def number(value: float | None) -> str:
    """Three decimals, or "undefined" for a missing or non-finite value."""
    return "undefined" if value is None or not math.isfinite(value) else f"{value:.3f}"


def cores() -> int:
    """CPU cores of this machine (for the results' header)."""
    import os

    return os.cpu_count() or 1
