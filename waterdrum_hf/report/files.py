"""``report.json``, ``audits.json``, ``report.md`` and the plots written to a folder, and a
``report.json`` read back."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from waterdrum_hf.report.audit_section import plot_audits
from waterdrum_hf.report.findings import (
    mean_over_runs,
    run_comparison,
    run_count,
    typed,
    typed_audits,
)
from waterdrum_hf.report.plots import plot_benchmark, plot_curves, plot_per_owner, plot_roc
from waterdrum_hf.report.text import curve_note, markdown
from waterdrum_hf.report.token_view_render import write_token_views
from waterdrum_hf.scoring import WaterDrumResult


def read_report(path: str | Path) -> dict[str, Any]:
    """A ``report.json`` (or the folder holding it) read back, its models typed: what
    :func:`write_report` takes to render the report again."""
    path = Path(path)
    saved = json.loads((path / "report.json" if path.is_dir() else path).read_text())
    return {**saved, "models": typed(saved["models"])}


def write_report(
    report: Mapping[str, Any], out_dir: str | Path, *, title: str = "WaterDrum report"
) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the plots that apply; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    models = typed(report["models"])
    written = [out / "report.json"]
    flat = {name: m.to_dict() for name, m in models.items()}
    audits = typed_audits(report)
    views = report.get("token_views") or []
    saved = {k: v for k, v in report.items() if k != "token_views"} | {"models": flat}
    if audits is not None:
        saved["audits"] = audits.to_dict()
        written.append(out / "audits.json")
        written[-1].write_text(json_text(saved["audits"]))
    if report.get("runs"):  # every run's values, flat, and their comparison
        saved["runs"] = {name: [_flat(r) for r in runs] for name, runs in report["runs"].items()}
        saved["comparison"] = run_comparison(report).to_dict()
    written[0].write_text(json_text(saved))
    report = {**report, "models": models, "audits": audits}
    plots: dict[str, Path] = {}
    if any(m.forget and m.retain for m in models.values()):
        shown = models  # several runs: each model's mean over them, with intervals over runs
        if run_count(report) > 1:
            shown = mean_over_runs(models, run_comparison(report))
        plots["benchmark"] = plot_benchmark(shown, out / "benchmark.png")
    if report.get("curves"):
        plots["curves"] = plot_curves(report["curves"], out / "curves.png", note=curve_note(report))
    if any(m.per_owner for m in models.values()):
        plots["per_owner"] = plot_per_owner(models, out / "per_owner.png")
    roc_model = "retrained" if "retrained" in models else next(iter(models))
    if models[roc_model].separability_auroc is not None and models[roc_model].query_values:
        plots["roc"] = plot_roc(models[roc_model], out / "roc.png", label=roc_model)
    if audits is not None and audits.audits():
        plots["audits"] = plot_audits(audits, out / "audits.png")
    if views:
        columns = len(views) // len({view.label.split(",")[0] for view in views})
        html, plots["watermark_view"] = write_token_views(
            views,
            out,
            stem="watermark_view",
            title="The watermark, token by token",
            columns=columns,
        )
        written.append(html)
    (out / "report.md").write_text(markdown(report, plots, title=title))
    return [*written, out / "report.md", *plots.values()]


def _flat(result: WaterDrumResult | Mapping[str, Any]) -> Mapping[str, Any]:
    return result.to_dict() if isinstance(result, WaterDrumResult) else result


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
