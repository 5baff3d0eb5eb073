"""Bootstrap intervals on a result's values: one stratified bootstrap of the scored queries
(strata: owners) gives every set's, owner's and the AUROC's interval at once."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from waterdrum_hf.bootstrap import bootstrap_replicates, percentile_interval
from waterdrum_hf.config import IntervalConfig
from waterdrum_hf.scoring.results import WaterDrumResult


def with_intervals(
    result: WaterDrumResult,
    values: np.ndarray,
    watermark_ids: np.ndarray,
    sets: dict[str, np.ndarray],
    names: dict[int, str],
    interval: IntervalConfig,
) -> WaterDrumResult:
    """``result`` with percentile intervals on its sets' values, the AUROC and the ``names``d
    owners' values, from one stratified bootstrap of the scored queries (strata: owners). A set
    or owner whose every owner has a single scored query has no spread to resample and gets
    no interval."""
    scored = ~np.isnan(values)
    strata = watermark_ids[scored]

    def varies(mask: np.ndarray) -> bool:
        return bool(mask.any()) and len(np.unique(strata[mask])) < mask.sum()

    masks = {("set", name): members[scored] for name, members in sets.items()}
    masks.update({("owner", name): strata == owner for owner, name in names.items()})
    masks = {key: mask for key, mask in masks.items() if varies(mask)}
    pair = None
    if result.separability_auroc is not None and varies(np.ones(len(strata), dtype=bool)):
        pair = (sets["retain"][scored], sets["forget"][scored])
    replicates, aurocs = bootstrap_replicates(
        values[scored], strata, masks, auroc=pair, resamples=interval.resamples, seed=interval.seed
    )
    intervals = {key: percentile_interval(r, interval.confidence) for key, r in replicates.items()}

    def bounded(value: Any, key: tuple[str, str]) -> Any:
        interval = intervals.get(key)
        return (
            value
            if interval is None
            else replace(value, ci_low=interval.low, ci_high=interval.high)
        )

    changes: dict[str, Any] = {
        name: bounded(value, ("set", name)) for name, value in result.sets().items()
    }
    if result.per_owner is not None:
        changes["per_owner"] = {
            name: bounded(entry, ("owner", name)) for name, entry in result.per_owner.items()
        }
    if aurocs is not None:
        auroc = percentile_interval(aurocs, interval.confidence)
        changes |= {
            "separability_auroc_ci_low": auroc.low,
            "separability_auroc_ci_high": auroc.high,
        }
    return replace(result, **changes, confidence=interval.confidence)
