"""The paper's desiderata as numbers (separability D1, calibration D2), and the p-values of
"no watermark": one owner's (empirical null) and many owners' at once (Holm)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata


def _finite_1d(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {array.shape}.")
    if not np.isfinite(array).all():
        raise ValueError(
            f"`{name}` holds {int((~np.isfinite(array)).sum())} NaN/inf values: drop unscored "
            "samples first (the metric reports them as `num_skipped`)."
        )
    return array


def separability_auroc(retain_scores: Sequence[float], forget_scores: Sequence[float]) -> float:
    """AUROC of per-sample scores with retain as the positive class (desideratum D1).

    Equals ``sklearn.metrics.roc_auc_score([1]*len(retain) + [0]*len(forget), retain + forget)``:
    the probability that a random retain sample outscores a random forget sample, ties counting
    one half. 1.0 means the metric separates the sets perfectly; 0.5 means not at all.
    """
    retain = _finite_1d(retain_scores, "retain_scores")
    forget = _finite_1d(forget_scores, "forget_scores")
    if len(retain) == 0 or len(forget) == 0:
        raise ValueError("`retain_scores` and `forget_scores` must both be non-empty.")
    ranks = rankdata(np.concatenate([retain, forget]))
    rank_sum = ranks[: len(retain)].sum()
    return float((rank_sum - len(retain) * (len(retain) + 1) / 2) / (len(retain) * len(forget)))


@dataclass(frozen=True)
class CalibrationFit:
    """A line through the origin, ``value = slope * fraction``, and its R^2 (desideratum D2).

    ``r2 = 1 - RSS / TSS`` with a centred TSS, so it is negative when the line explains less
    than the mean does.
    """

    slope: float
    r2: float


def calibration_r2(
    fractions: Sequence[float] | np.ndarray, values: Sequence[float] | np.ndarray
) -> CalibrationFit:
    """Fit ``values ~ slope * fractions`` through the origin by least squares.

    Args:
        fractions: share k/|D_F| of the forget set still trained on, one per model.
        values: the metric's forget value of each model.
    """
    x = _finite_1d(fractions, "fractions")
    y = _finite_1d(values, "values")
    if len(x) != len(y):
        raise ValueError(f"`fractions` has {len(x)} entries but `values` has {len(y)}.")
    if len(x) < 2:
        raise ValueError("Calibration needs at least two (fraction, value) points.")
    if not np.any(x):
        raise ValueError("`fractions` are all 0: a line through the origin is undetermined.")
    slope = float(x @ y / (x @ x))
    tss = float(((y - y.mean()) ** 2).sum())
    if tss == 0:
        raise ValueError("`values` are all equal: R^2 is undefined (TSS = 0).")
    rss = float(((y - slope * x) ** 2).sum())
    return CalibrationFit(slope=slope, r2=1.0 - rss / tss)


def null_p_value(value: float, null_values: Sequence[float]) -> float:
    """One-sided empirical p-value of "no watermark": ``(1 + #{null >= value}) / (1 + K)``.

    ``null_values`` are what the same texts read under ``K`` keys that own nothing. If the
    owner's key is just another such key (its data is not in the model), the owner's value is
    exchangeable with them and ``P(p <= alpha) <= alpha``: rejecting "no watermark" at
    ``p <= alpha`` is wrong at most an ``alpha`` share of the time. The +1 correction keeps
    ``p`` above 0; it cannot go below ``1 / (1 + K)``, so ask for enough keys.
    """
    null = _finite_1d(null_values, "null_values")
    if len(null) == 0:
        raise ValueError("`null_values` is empty: score the texts under at least one null key.")
    if not np.isfinite(value):
        raise ValueError(f"`value` must be finite, got {value!r}.")
    return float((1 + np.count_nonzero(null >= value)) / (1 + len(null)))


def holm_adjusted(p_values: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the order given: reject hypothesis ``i`` at level
    ``alpha`` when ``adjusted[i] <= alpha``, and the chance of any false rejection in the family
    (the family-wise error) is at most ``alpha``, whatever the dependence between the p-values.

    With ``m`` p-values sorted ascending, ``adjusted_(i) = min(1, max_{j <= i} (m - j + 1)
    p_(j))``: monotone in ``p``, tied p-values get the same value. A missing p-value (``None``
    or NaN: a hypothesis that was not tested, e.g. an owner with no scored query) stays NaN
    and does not count in ``m`` (as R's ``p.adjust`` does).
    """
    p = np.asarray(p_values, dtype=np.float64)  # None becomes NaN
    if p.ndim != 1:
        raise ValueError(f"`p_values` must be one-dimensional, got shape {p.shape}.")
    tested = np.flatnonzero(~np.isnan(p))
    if ((p[tested] < 0) | (p[tested] > 1)).any():
        raise ValueError("`p_values` must lie in [0, 1] (None or NaN for an untested hypothesis).")
    order = tested[np.argsort(p[tested])]  # ties get the same value in either order
    steps = (len(order) - np.arange(len(order))) * p[order]
    adjusted = np.full(len(p), np.nan)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(steps))
    return adjusted


def holm_min_null_keys(num_tests: int, alpha: float) -> int:
    """The fewest null keys ``K`` with which Holm over ``num_tests`` empirical p-values can
    reject any: its first step needs ``p <= alpha / num_tests``, and an empirical p-value is at
    least ``1 / (1 + K)`` (:func:`null_p_value`). With fewer keys nothing can be detected."""
    if num_tests < 1 or not 0 < alpha < 1:
        raise ValueError(f"Need num_tests >= 1 and 0 < alpha < 1, got {num_tests} and {alpha}.")
    return math.ceil(num_tests / alpha) - 1
