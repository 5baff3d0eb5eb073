"""Probes of the report's uncounted mutants (``report/verdict.py``, ``audit_section.py``,
``files.py``, ``text.py``, ``plots.py``): see ``probes.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probe_kit import each

_VERDICT = "waterdrum_hf.report.verdict."
_AUDITS = "waterdrum_hf.report.audit_section."
_FILES = "waterdrum_hf.report.files."
_TEXT = "waterdrum_hf.report.text."
_PLOTS = "waterdrum_hf.report.plots."


def _model(forget: float, p: float, retain: float) -> Any:
    from waterdrum_hf.scoring import SetValue, WaterDrumResult

    return WaterDrumResult(
        forget=SetValue(forget, null_mean=0.0, null_std=0.1, z=forget / 0.1, p_value=p),
        retain=SetValue(retain),
        num_queries=4,
        num_scored=4,
        num_skipped=0,
    )


def verdict_lines(tmp: Path) -> Any:
    """The verdict of a benchmark (original, retrained, two methods) and of detection alone."""
    from waterdrum_hf.report.verdict import verdict

    models = {
        "original": _model(0.5, 0.01, 0.4),
        "retrained": _model(0.0, 0.6, 0.3),
        "kl": _model(0.1, 0.05, 0.35),
        "npo": _model(0.02, 0.3, 0.1),
    }
    return [verdict(models, {"null_keys": 19}), verdict({"kl": models["kl"]}, {"null_keys": 19})]


def _audits() -> Any:
    from waterdrum_hf.audits import AuditResults
    from waterdrum_hf.scoring import SetValue, WaterDrumResult

    def result(forget: float | None) -> WaterDrumResult:
        value = (
            None if forget is None else SetValue(forget, ci_low=forget - 0.1, ci_high=forget + 0.1)
        )
        return WaterDrumResult(
            forget=value, retain=SetValue(0.5), num_queries=4, num_scored=4, num_skipped=0
        )

    return AuditResults(
        models={
            "retrained": {"before": result(0.1), "relearned": result(0.3)},
            "kl": {"before": result(None), "relearned": result(0.4)},
        },
        retrained="retrained",
    )


def audit_section_lines(tmp: Path) -> Any:
    """The audit section's tables (cells with and without a value)."""
    from waterdrum_hf.report.audit_section import audit_section

    return audit_section(_audits())


def audit_plot(tmp: Path) -> Any:
    """The audits' PNG (its bytes are the files the runner compares), with and without a
    retrained model."""
    import dataclasses

    from waterdrum_hf.report.audit_section import plot_audits

    audits = _audits()
    plot_audits(audits, tmp / "with.png")
    plot_audits(dataclasses.replace(audits, retrained=None), tmp / "without.png")
    return sorted(p.name for p in tmp.iterdir())


def _benchmark() -> dict[str, Any]:
    """Original, retrained and one method, each set with a query interval (one run)."""
    import dataclasses

    from waterdrum_hf.scoring import SetValue

    models = {"original": _model(0.5, 0.01, 0.4), "retrained": _model(0.0, 0.6, 0.3)}
    models["kl"] = _model(0.1, 0.05, 0.35)
    return {
        name: dataclasses.replace(
            m,
            forget=dataclasses.replace(
                m.forget, ci_low=m.forget.value - 0.05, ci_high=m.forget.value + 0.05
            ),
            retain=SetValue(
                m.retain.value, ci_low=m.retain.value - 0.02, ci_high=m.retain.value + 0.02
            ),
        )
        for name, m in models.items()
    }


def report_files(tmp: Path) -> Any:
    """write_report's files (the runner compares their bytes) for typed and for flat input,
    one run with query intervals and audits, and the paths it returns."""
    from waterdrum_hf.report import write_report

    models = _benchmark()
    typed = write_report({"models": models, "audits": _audits()}, tmp / "typed")
    flat = {name: m.to_dict() for name, m in models.items()}
    write_report(
        {"models": flat, "audits": _audits().to_dict(), "settings": {"null_keys": 19}}, tmp / "flat"
    )
    return [p.relative_to(tmp).as_posix() for p in typed]


def json_values(tmp: Path) -> Any:
    """json_text of non-finite floats (Python and numpy, nested in lists, tuples, mappings with
    non-string keys), of numpy integers, and of a value JSON cannot write."""
    import math

    import numpy as np

    from waterdrum_hf.report.files import json_text

    values = {
        "nan": math.nan,
        1: [math.inf, (-math.inf, np.float32("nan"))],
        "numpy": {"x": np.float64("-inf"), "n": np.int64(3), "f": np.float32(0.5)},
    }
    return each(lambda: json_text(values), lambda: json_text({"a": {1, 2}}), lambda: json_text([]))


def curves_plot(tmp: Path) -> Any:
    """The curves' PNG with a long note (wrapped) and without one; a method missing a key."""
    from waterdrum_hf.report import plot_curves

    curves = {
        "kl": [
            {"step": 1, "forget": 0.3, "retain": 0.2},
            {"step": 2, "forget": 0.1, "retain": 0.25},
        ],
        "npo": [{"step": 1, "forget": 0.4}, {"step": 2, "forget": -0.05, "retain": 0.1}],
    }
    plot_curves(curves, tmp / "noted.png", note="A note long enough to wrap: " + "word " * 60)
    plot_curves(curves, tmp / "plain.png")
    return sorted(p.name for p in tmp.iterdir())


def methods_text(tmp: Path) -> Any:
    """The report's text with methods described (the Methods section) and without."""
    from waterdrum_hf.report.text import markdown

    models = _benchmark()
    report = {"models": models, "methods": {"kl": "KL on the forget set.", "gone": "not shown"}}
    return [markdown(report, {}, title="t"), markdown({"models": models}, {}, title="t")]


def plot_pngs(tmp: Path) -> Any:
    """The benchmark (one panel and two, names crowded so that some move), ROC (two curves)
    and per-owner (a first owner without a null band) PNGs: the runner compares their bytes."""
    import dataclasses

    from waterdrum_hf.report import benchmark_figure, plot_benchmark, plot_per_owner
    from waterdrum_hf.report.plots import draw_roc, new_figure, save_figure
    from waterdrum_hf.scoring import OwnerValue

    models = _benchmark()
    models["ga"] = _model(0.11, 0.2, 0.36)  # next to kl: its name must move
    models["npo"] = _model(0.12, 0.3, 0.34)
    plot_benchmark(models, tmp / "benchmark.png")
    benchmark_figure(
        {"A": models, "B": {k: models[k] for k in ("original", "kl")}}, tmp / "panels.png"
    )
    fig, ax = new_figure(4.0, 4.0)
    draw_roc(
        ax,
        {"a": [0.9, 0.2, 0.6, float("nan")], "b": [0.8, 0.1, 0.7, 0.3]},
        [True, False, True, False],
    )
    save_figure(fig, tmp / "roc.png")
    owners = {
        "alice": OwnerValue(2, 2, forget=True, value=0.3),
        "bob": OwnerValue(
            2, 2, forget=False, value=0.5, null_mean=0.0, null_std=0.1, ci_low=0.4, ci_high=0.6
        ),
    }
    per_owner = {
        name: dataclasses.replace(models[name], per_owner=owners) for name in ("original", "kl")
    }
    plot_per_owner(per_owner, tmp / "owners.png")
    return sorted(p.name for p in tmp.iterdir())


PROBES = {
    _PLOTS + "x_benchmark_figure": plot_pngs,
    _PLOTS + "x_draw_benchmark": plot_pngs,
    _PLOTS + "x_label_points": plot_pngs,
    _PLOTS + "x_draw_roc": plot_pngs,
    _PLOTS + "x_plot_per_owner": plot_pngs,
    _FILES + "x_write_report": report_files,
    _FILES + "x_json_text": json_values,
    _TEXT + "x__methods_and_settings": methods_text,
    _PLOTS + "x_plot_curves": curves_plot,
    _VERDICT + "x_verdict": verdict_lines,
    _VERDICT + "x__benchmark_verdict": verdict_lines,
    _VERDICT + "x__kept": verdict_lines,
    _AUDITS + "x__set_cell": audit_section_lines,
    _AUDITS + "x_plot_audits": audit_plot,
}
