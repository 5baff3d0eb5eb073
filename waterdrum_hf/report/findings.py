"""What a report reads off its models' results: the results typed, the values over training
runs (seeds), which method is closest to retraining, whether a watermark is still detected, the
p-value floor and the interval level."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from waterdrum_hf.audits.results import AuditResults
from waterdrum_hf.scoring import OwnerValue, SetValue, WaterDrumResult
from waterdrum_hf.scoring.seed_comparison import SeedComparison, compare_seeds
from waterdrum_hf.statistics import holm_min_null_keys

Results = Mapping[str, WaterDrumResult | Mapping[str, Any]]
"""Each model's result by model name, typed or as its flat dict."""


DETECTION_LEVEL = 0.05
"""A watermark counts as detected when its p-value is at most this."""


def typed(models: Results) -> dict[str, WaterDrumResult]:
    """Each model's result as a :class:`WaterDrumResult` (flat dicts read with ``from_dict``)."""
    return {
        name: m if isinstance(m, WaterDrumResult) else WaterDrumResult.from_dict(m)
        for name, m in models.items()
    }


def typed_audits(report: Mapping[str, Any]) -> AuditResults | None:
    """The report's ``"audits"`` as :class:`AuditResults` (``None`` when it has none)."""
    audits = report.get("audits")
    if audits is None or isinstance(audits, AuditResults):
        return audits
    return AuditResults.from_dict(audits)


def run_comparison(report: Mapping[str, Any], confidence: float = 0.95) -> SeedComparison:
    """The report's models compared over their training runs (``report["runs"]``: each model's
    flat results, one per seed); a report without runs is one run of ``report["models"]``."""
    runs = report.get("runs") or {name: [m] for name, m in report["models"].items()}
    return compare_seeds(runs, confidence=confidence)


def run_count(report: Mapping[str, Any]) -> int:
    """How many training runs the report's values rest on (1 without ``runs``)."""
    runs = report.get("runs") or {}
    return max((len(r) for r in runs.values()), default=1)


def mean_over_runs(
    models: Mapping[str, WaterDrumResult], comparison: SeedComparison
) -> dict[str, WaterDrumResult]:
    """``models`` (the first run) with each set's value and interval replaced by the mean over
    the runs and its interval over runs (what the benchmark plot of several runs shows); the
    null levels stay the first run's."""
    means = {}
    for name, model in models.items():
        changes = {
            key: replace(getattr(model, key), value=v.value, ci_low=v.ci_low, ci_high=v.ci_high)
            for key, v in comparison.values.get(name, {}).items()
            if getattr(model, key) is not None
        }
        means[name] = replace(model, **changes)
    return means


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
    best = min(distances, key=distances.__getitem__)
    return best, distances[best]


def detected(value: SetValue | OwnerValue | None) -> bool | None:
    """Whether a watermark is still detected: its p-value is at most :data:`DETECTION_LEVEL`,
    an owner's Holm-adjusted over the owners of its set (the raw one in results saved before
    the adjustment, which lack it); ``None`` without a p-value (no null)."""
    if value is None or value.p_value is None:
        return None
    adjusted = value.adjusted_p_value if isinstance(value, OwnerValue) else None
    return (value.p_value if adjusted is None else adjusted) <= DETECTION_LEVEL


def forgotten_owners(models: Results) -> list[str]:
    """The display names of the owners marked forget in any model's per-owner values."""
    return list(
        dict.fromkeys(
            owner
            for m in typed(models).values()
            for owner, entry in (m.per_owner or {}).items()
            if entry.forget
        )
    )


def p_value_floor(settings: Mapping[str, Any]) -> float | None:
    """The smallest p-value ``settings["null_keys"]`` random keys can give, ``1 / (1 + K)``
    (``None`` for the analytic null, whose p-values have no floor)."""
    if settings.get("null") == "analytic":
        return None
    null_keys = settings.get("null_keys")
    return 1 / (1 + null_keys) if isinstance(null_keys, int) and null_keys > 0 else None


def holm_null_keys_needed(owners: int, null_keys: int | None) -> int | None:
    """The null keys owner-by-owner detection over ``owners`` owners needs (Holm at
    :data:`DETECTION_LEVEL`), where an empirical null of ``null_keys`` keys has fewer: then no
    owner can read detected, whatever the model holds. ``None`` where the keys suffice or
    without an empirical null (``null_keys=None``)."""
    needed = holm_min_null_keys(owners, DETECTION_LEVEL)
    return needed if null_keys is not None and null_keys < needed else None


def interval_level(models: Results) -> str:
    """The models' confidence level as ``95%`` (``mixed-level`` when they differ, ``""`` when
    no model has intervals)."""
    levels = {m.confidence for m in typed(models).values() if m.confidence is not None}
    if not levels:
        return ""
    return f"{100 * levels.pop():g}%" if len(levels) == 1 else "mixed-level"
