"""The audits in a report: their explanation, before/after tables and the before/after plot
(:mod:`waterdrum_hf.audits` computes them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from waterdrum_hf.audits.results import BEFORE, AuditResults, audit_title
from waterdrum_hf.report.formatting import count_phrase, format_interval, table_head
from waterdrum_hf.report.plots import error_bars, model_color, new_figure, save_figure
from waterdrum_hf.scoring import WaterDrumResult

AUDIT_EXPLANATION = (
    "A forget value can flatter a method that only hides the data. Two audits perturb each "
    "model and score it again on the same queries, with the same samples and null keys. "
    "*Relearning* fine-tunes it for a few steps on a small slice of the forget set: knowledge "
    "that unlearning only suppressed comes back (relearning attacks: Hu et al., ICLR 2025; "
    "Lynch et al., 2024). *Quantization* stores its weights in 8 or 4 bits: unlearning that "
    "moved the weights by less than a rounding step is undone (Zhang et al., ICLR 2025: 21 % "
    "of the forget set's knowledge retained at full precision, 83 % after 4-bit "
    "quantization). The yardstick is the retrained model put through the same audit: it never "
    "saw the forget set, so what it reads after relearning comes from the slice alone. "
    "*Excess* is a model's forget value after the audit minus the retrained model's after the "
    "same audit; above 0, the audit brought back more than learning the slice from scratch."
)


def audit_section(audits: AuditResults) -> list[str]:
    """The audits in words, a forget table (value before and after each audit, excess over the
    retrained model, intervals where computed), a retain table and the settings."""
    names = audits.audits()
    settings = audits.settings
    lines = [AUDIT_EXPLANATION, ""]
    header = ["model", "forget before"]
    for audit in names:
        header += [f"forget {audit_title(audit)}"]
        if audits.retrained:
            header += ["excess"]
    rows = table_head(header)
    for model, entries in audits.models.items():
        row = [model, _set_cell(entries.get(BEFORE), "forget")]
        for audit in names:
            row.append(_set_cell(entries.get(audit), "forget"))
            if audits.retrained:
                excess = audits.excess(model, audit)
                row.append(
                    "(yardstick)"
                    if model == audits.retrained
                    else "–"
                    if excess is None
                    else f"{excess:+.3f}"
                )
        rows.append("| " + " | ".join(row) + " |")
    lines += rows + ["", "Retain values before and after the same audits:", ""]
    lines += _table(audits, "retain", lambda result: _set_cell(result, "retain")) + [""]
    if any(r.separability_auroc is not None for e in audits.models.values() for r in e.values()):
        lines += [
            "Separability of forget and retain queries (D1 AUROC) before and after the same "
            "audits:",
            "",
            *_table(audits, "AUROC", _auroc_cell),
            "",
        ]
    if "relearned" in names:
        lines.append(
            f"Relearning: {settings.get('relearn_steps')} steps at learning rate "
            f"{settings.get('relearn_learning_rate')} (batch {settings.get('relearn_batch_size')}) "
            f"on {count_phrase(settings.get('relearn_texts', 0), 'text')} of the forget set (the first "
            f"{settings.get('relearn_share', 0):.0%})."
        )
    attacked = [a for a in names if a in (settings.get("attacks") or ())]
    if attacked:
        lines.append(
            f"Text attacks (seed {settings.get('attack_seed')}): {', '.join(attacked)}, each "
            "applied to every model's completions before verification (the same completions "
            "as the before column); NAME:STRENGTH edits that share of each text's words "
            "(waterdrum_hf.attacks)."
        )
    for audit, check in (settings.get("quantization_checks") or {}).items():
        lines.append(
            f"{audit_title(audit).capitalize()} (torchao): "
            f"{check['quantized_layers']} of {check['linear_layers']} Linear layers quantized, at "
            f"most {check['levels']} distinct stored values per layer, their weights "
            f"{check['weight_bytes_before'] / 1e6:.2f} MB -> {check['weight_bytes_after'] / 1e6:.2f} MB."
        )
    return lines


def _table(
    audits: AuditResults, what: str, cell: Callable[[WaterDrumResult | None], str]
) -> list[str]:
    """A markdown table: one row per model, ``cell`` of its result before and after each audit."""
    names = [BEFORE, *audits.audits()]
    header = ["model", *(f"{what} {'before' if a == BEFORE else audit_title(a)}" for a in names)]
    rows = table_head(header)
    for model, entries in audits.models.items():
        rows.append("| " + " | ".join([model, *(cell(entries.get(a)) for a in names)]) + " |")
    return rows


def _auroc_cell(result: WaterDrumResult | None) -> str:
    """The D1 AUROC, with its interval where one was computed."""
    value = result.separability_auroc if result is not None else None
    if result is None or value is None:
        return "–"
    low, high = result.separability_auroc_ci_low, result.separability_auroc_ci_high
    interval = "" if low is None or high is None else f" {format_interval(low, high, '.3f')}"
    return f"{value:.3f}{interval}"


def _set_cell(result: WaterDrumResult | None, name: str) -> str:
    """A set's value, with its confidence interval where one was computed."""
    value = getattr(result, name, None) if result is not None else None
    if value is None:
        return "–"
    if value.ci_low is None or value.ci_high is None:
        return f"{value.value:+.3f}"
    return f"{value.value:+.3f} {format_interval(value.ci_low, value.ci_high, '+.3f')}"


def plot_audits(audits: AuditResults | Mapping[str, Any], path: str | Path) -> Path:
    """One panel per audit: each model's forget value before (hollow) and after (filled),
    joined by an arrow, intervals as error bars where computed; the retrained model's value
    after the same audit is the dashed line to beat."""
    audits = audits if isinstance(audits, AuditResults) else AuditResults.from_dict(audits)
    names = audits.audits()
    models = list(audits.models)
    fig, axes = new_figure(max(4.0, 0.55 * len(models) + 2.0) * len(names), 4.0, ncols=len(names))
    for ax, audit in zip(np.atleast_1d(axes), names, strict=True):
        for x, model in enumerate(models):
            color = model_color(model)
            for which, filled in ((BEFORE, False), (audit, True)):
                result = audits.models[model].get(which)
                if result is None or result.forget is None:
                    continue
                offset = 0.12 if filled else -0.12
                ax.errorbar(
                    x + offset,
                    result.forget.value,
                    yerr=error_bars(result.forget),
                    fmt="o",
                    color=color,
                    markerfacecolor=color if filled else "white",
                    capsize=2,
                )
            before, after = audits.forget(model, BEFORE), audits.forget(model, audit)
            if before is not None and after is not None:
                ax.annotate(
                    "",
                    (x + 0.12, after),
                    (x - 0.12, before),
                    arrowprops={"arrowstyle": "->", "color": color, "lw": 0.8},
                )
        line = audits.forget(audits.retrained, audit) if audits.retrained else None
        if line is not None:
            ax.axhline(
                line,
                color=model_color("retrained"),
                linestyle="--",
                linewidth=1.0,
                label=f"retrained {audit_title(audit)}",
            )
            ax.legend(fontsize=7, loc="upper left")
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("forget WaterDrum value")
        ax.set_title(f"Forget value {audit_title(audit)}")
    return save_figure(fig, path)
