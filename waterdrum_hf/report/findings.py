"""What a report reads off its models' results: the results typed, which method is closest
to retraining, whether a watermark is still detected, the p-value floor and the interval level."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from waterdrum_hf.audit_results import AuditResults
from waterdrum_hf.metric import OwnerValue, SetValue, WaterDrumResult

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
    """Whether a watermark is still detected (p-value at most :data:`DETECTION_LEVEL`);
    ``None`` without a p-value (no null keys)."""
    if value is None or value.p_value is None:
        return None
    return value.p_value <= DETECTION_LEVEL


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


def interval_level(models: Results) -> str:
    """The models' confidence level as ``95%`` (``mixed-level`` when they differ, ``""`` when
    no model has intervals)."""
    levels = {m.confidence for m in typed(models).values() if m.confidence is not None}
    if not levels:
        return ""
    return f"{100 * levels.pop():g}%" if len(levels) == 1 else "mixed-level"
