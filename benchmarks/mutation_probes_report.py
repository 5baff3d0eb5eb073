"""Probes of the report's uncounted mutants (``report/verdict.py``, ``report/audit_section.py``):
see ``mutation_probes.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

_VERDICT = "waterdrum_hf.report.verdict."
_AUDITS = "waterdrum_hf.report.audit_section."


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


PROBES = {
    _VERDICT + "x_verdict": verdict_lines,
    _VERDICT + "x__benchmark_verdict": verdict_lines,
    _VERDICT + "x__kept": verdict_lines,
    _AUDITS + "x__set_cell": audit_section_lines,
    _AUDITS + "x_plot_audits": audit_plot,
}
