"""Separability and calibration against scikit-learn; the empirical p-value and Holm's
adjustment by hand."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import r2_score, roc_auc_score

from waterdrum_hf import CalibrationFit, calibration_r2, holm_adjusted, separability_auroc
from waterdrum_hf.statistics import holm_min_null_keys, null_p_value


@pytest.mark.parametrize("seed", range(5))
def test_auroc_equals_sklearn_with_retain_positive(seed):
    rng = np.random.default_rng(seed)
    retain = np.round(rng.normal(0.3, 0.2, size=rng.integers(5, 60)), 1)  # rounding makes ties
    forget = np.round(rng.normal(0.1, 0.2, size=rng.integers(5, 60)), 1)
    expected = roc_auc_score(
        np.r_[np.ones(len(retain)), np.zeros(len(forget))], np.r_[retain, forget]
    )
    assert separability_auroc(retain, forget) == pytest.approx(expected, abs=1e-12)


def test_auroc_extremes_and_bad_input():
    assert separability_auroc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert separability_auroc([0.1], [0.9]) == 0.0
    with pytest.raises(ValueError, match="non-empty"):
        separability_auroc([], [0.1])
    with pytest.raises(ValueError, match="NaN"):
        separability_auroc([0.1, float("nan")], [0.2])


def test_calibration_fit_through_origin_matches_least_squares_and_sklearn_r2():
    x = np.linspace(0, 1, 11)
    y = 0.6 * x + np.random.default_rng(0).normal(0, 0.05, size=11)
    fit = calibration_r2(x, y)
    slope = np.linalg.lstsq(x[:, None], y, rcond=None)[0][0]
    assert isinstance(fit, CalibrationFit)
    assert fit.slope == pytest.approx(slope, rel=1e-12)
    assert fit.r2 == pytest.approx(r2_score(y, slope * x), rel=1e-12)
    assert fit.r2 > 0.9


def test_calibration_r2_can_be_negative():
    # Values that fall as the forget share grows: the line through the origin is worse than the mean.
    fit = calibration_r2([0.0, 0.5, 1.0], [0.5, 0.3, 0.1])
    assert fit.r2 < 0


@pytest.mark.parametrize(
    ("x", "y", "match"),
    [
        ([0.1, 0.2], [0.1], "entries"),
        ([0.5], [0.1], "at least two"),
        ([0.0, 0.0], [0.1, 0.2], "all 0"),
        ([0.1, 0.2], [0.3, 0.3], "TSS = 0"),
        ([[0.1, 0.2]], [[0.3, 0.3]], "one-dimensional"),
    ],
)
def test_calibration_bad_input(x, y, match):
    with pytest.raises(ValueError, match=match):
        calibration_r2(x, y)


def test_null_p_value_counts_ties_as_at_least_as_extreme():
    # (1 + #{null >= value}) / (1 + K): the tie at 0.3 counts, so 3 / 5, not 2 / 5.
    assert null_p_value(0.3, [0.3, 0.5, 0.1, 0.2]) == pytest.approx(0.6)
    assert null_p_value(0.6, [0.3, 0.5, 0.1, 0.2]) == pytest.approx(0.2)  # the floor 1 / (1 + K)
    assert null_p_value(-1.0, [0.3, 0.5, 0.1, 0.2]) == pytest.approx(1.0)


def test_null_p_value_with_one_null_key():
    assert null_p_value(0.2, [0.1]) == pytest.approx(0.5)
    assert null_p_value(0.1, [0.1]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("value", "null", "match"),
    [
        (0.1, [], "empty"),
        (float("nan"), [0.1], "finite"),
        (float("inf"), [0.1], "finite"),
        (0.1, [0.2, float("inf")], "NaN/inf"),
    ],
)
def test_null_p_value_bad_input(value, null, match):
    with pytest.raises(ValueError, match=match):
        null_p_value(value, null)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: separability_auroc([0.1, float("nan")], [0.2]), "`retain_scores` holds 1 NaN"),
        (lambda: separability_auroc([0.1], [np.inf, np.nan, 0.2]), "`forget_scores` holds 2 NaN"),
        (lambda: calibration_r2([0.1, np.nan], [0.2, 0.3]), "`fractions` holds 1 NaN"),
        (lambda: calibration_r2([0.1, 0.2], [0.2, -np.inf]), "`values` holds 1 NaN"),
        (lambda: null_p_value(0.1, [np.nan, np.nan, 0.2]), "`null_values` holds 2 NaN"),
    ],
)
def test_non_finite_input_is_named_and_counted(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_single_precision_input_is_computed_in_double_precision():
    x = np.linspace(0.1, 1, 10, dtype=np.float32)
    y = (0.6 * x + np.random.default_rng(1).normal(0, 0.05, size=10)).astype(np.float32)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    fit = calibration_r2(x, y)
    assert fit.slope == pytest.approx(float(x64 @ y64 / (x64 @ x64)), rel=1e-14)
    assert fit.r2 == pytest.approx(r2_score(y64, fit.slope * x64), rel=1e-12)


def holm_rejections_by_hand(p_values: list[float], alpha: float) -> set[int]:
    """Holm's step-down procedure as written: test the sorted p-values in turn against
    ``alpha / (m - i)`` (i from 0) and stop at the first that fails."""
    rejected = set()
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    for step, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - step):
            break
        rejected.add(i)
    return rejected


@pytest.mark.parametrize("seed", range(20))
def test_holm_rejects_what_the_step_down_procedure_rejects(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    # A mix of small (watermark-like) and uniform p-values, some tied.
    p = np.where(rng.random(m) < 0.3, rng.random(m) * 0.01, rng.random(m))
    p[rng.integers(0, m, size=m // 4)] = p[0]
    adjusted = holm_adjusted(p)
    for alpha in (0.001, 0.01, 0.05, 0.1, 0.25):
        expected = holm_rejections_by_hand(p.tolist(), alpha)
        assert set(np.flatnonzero(adjusted <= alpha).tolist()) == expected, alpha
    assert np.all(adjusted >= p) and np.all(adjusted <= 1)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= 0)  # monotone in p
    shuffled = rng.permutation(m)
    np.testing.assert_array_equal(holm_adjusted(p[shuffled]), adjusted[shuffled])


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        ([0.01, 0.02, 0.03, 0.04, 0.05], [0.05, 0.08, 0.09, 0.09, 0.09]),  # R's p.adjust
        ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),  # in the order given
        ([0.3, 0.9], [0.6, 0.9]),
        ([0.5, 0.6, 0.01], [1.0, 1.0, 0.03]),  # capped at 1
        ([0.02, 0.02], [0.04, 0.04]),  # ties share a value
        ([0.0, 1.0, 0.5], [0.0, 1.0, 1.0]),  # both ends of [0, 1] are p-values
        ([0.2], [0.2]),
        ([], []),
    ],
)
def test_holm_known_cases(p, expected):
    np.testing.assert_allclose(holm_adjusted(p), expected, rtol=1e-12)


def test_holm_leaves_untested_hypotheses_out_of_the_family():
    adjusted = holm_adjusted([0.01, None, float("nan"), 0.04])
    np.testing.assert_allclose(adjusted[[0, 3]], [0.02, 0.04], rtol=1e-12)  # m = 2, not 4
    assert np.isnan(adjusted[1]) and np.isnan(adjusted[2])
    assert np.isnan(holm_adjusted([None, None])).all()


@pytest.mark.parametrize(
    ("p", "match"),
    [
        ([0.1, 1.2], r"\[0, 1\]"),
        ([-0.1], r"\[0, 1\]"),
        ([float("inf")], r"\[0, 1\]"),
        ([[0.1, 0.2]], "one-dimensional"),
    ],
)
def test_holm_bad_input(p, match):
    with pytest.raises(ValueError, match=match):
        holm_adjusted(p)


@pytest.mark.parametrize("tests", [1, 2, 3, 7, 20, 64, 1000])
def test_holm_min_null_keys_is_the_fewest_keys_that_can_reject(tests):
    """With K keys the smallest empirical p-value is 1 / (1 + K) (a value above every null key);
    Holm can reject it, the smallest of ``tests`` p-values, at K keys and not at K - 1."""
    keys = holm_min_null_keys(tests, 0.05)

    def smallest_adjusted(k: int) -> float:
        floor = null_p_value(1.0, np.zeros(k))
        return float(holm_adjusted([floor] + [1.0] * (tests - 1))[0])

    assert smallest_adjusted(keys) <= 0.05
    assert smallest_adjusted(keys - 1) > 0.05
    assert holm_min_null_keys(20, 0.05) == 399 and holm_min_null_keys(1, 0.05) == 19


@pytest.mark.parametrize(("tests", "alpha"), [(0, 0.05), (3, 0.0), (3, 1.0)])
def test_holm_min_null_keys_bad_input(tests, alpha):
    with pytest.raises(ValueError, match="num_tests >= 1 and 0 < alpha < 1"):
        holm_min_null_keys(tests, alpha)
