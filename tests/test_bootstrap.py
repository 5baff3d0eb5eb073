"""The stratified bootstrap: coverage on known distributions, strata kept, AUROC as sklearn's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, norm
from scipy.stats import t as student_t
from sklearn.metrics import roc_auc_score

import waterdrum_hf.bootstrap as bootstrap
from waterdrum_hf.bootstrap import (
    MIN_RESAMPLES,
    Interval,
    bootstrap_replicates,
    check_confidence,
    check_resamples,
    percentile_interval,
    stratified_multiplicities,
    weighted_auroc,
)

SIZES = (12, 20, 30)  # queries per owner
MEANS = (0.1, 0.4, 0.7)  # each owner's true mean query value
SPREADS = (0.2, 0.3, 0.15)


def owner_draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values of three owners, skewed (a shifted gamma) with known means."""
    strata = np.repeat(np.arange(len(SIZES)), SIZES)
    shape = 4.0  # skewness 1: the percentile bootstrap's harder case
    noise = (rng.gamma(shape, size=len(strata)) - shape) / math.sqrt(shape)  # mean 0, sd 1
    values = np.array(MEANS)[strata] + np.array(SPREADS)[strata] * noise
    return values, strata


def normal_theory(sizes: np.ndarray, spreads: np.ndarray, z: float) -> tuple[float, float]:
    """Coverage and mean width that normal theory predicts for the percentile interval of a
    stratified mean (weights ``n_h / n``). The interval is about ``mean +- z sqrt(V)`` with
    ``V = sum w_h^2 s_h^2 / n_h`` and ``s_h`` the biased (1/n_h) sd: ``E V`` is ``shrink``
    times the true variance, and ``V`` is spread as a chi-square with Satterthwaite's degrees
    of freedom, so coverage is ``P(|t_df| < z sqrt(shrink))`` and the width ``2 z sqrt(E V)``
    (one owner: ``P(|t_19| < z sqrt(19/20))``, the t-interval's coverage)."""
    part = (sizes / sizes.sum()) ** 2 * spreads**2 / sizes  # each owner's share of the variance
    shrink = (part * (sizes - 1) / sizes).sum() / part.sum()
    df = part.sum() ** 2 / (part**2 / (sizes - 1)).sum()
    coverage = 1 - 2 * student_t.sf(z * math.sqrt(shrink), df)
    return coverage, 2 * z * math.sqrt(shrink * part.sum())


def test_intervals_cover_the_true_mean_as_normal_theory_predicts():
    """95 % intervals over 1000 draws, against :func:`normal_theory`: the set's mean (62
    queries, 3 owners; 42 degrees of freedom) is predicted to be covered at 0.937 (measured
    0.937), one owner's (20 queries) at 0.929 (measured 0.917: the skewness costs a little).
    Both must lie in the binomial band of 1000 draws around the prediction (99.9 %: about +- 0.026),
    so intervals a tenth too narrow fail. The mean width must be within 4 % of the predicted
    one (measured 0.990 and 0.983 of it: E sqrt(V) is a little below sqrt(E V)), so intervals
    too wide fail as well, which coverage alone would not show."""
    rng = np.random.default_rng(0)
    set_mean = np.dot(SIZES, MEANS) / sum(SIZES)  # owners given: their weights are fixed
    z = norm.ppf(0.975)
    draws, covered, widths = 1000, {"set": 0, "owner": 0}, {"set": 0.0, "owner": 0.0}
    truth = {"set": set_mean, "owner": MEANS[1]}
    for draw in range(draws):
        values, strata = owner_draw(rng)
        masks = {"set": np.ones(len(values), dtype=bool), "owner": strata == 1}
        replicates, _ = bootstrap_replicates(values, strata, masks, resamples=1000, seed=draw)
        for name in masks:
            interval = percentile_interval(replicates[name], 0.95)
            covered[name] += interval.low <= truth[name] <= interval.high
            widths[name] += (interval.high - interval.low) / draws
    predicted = {
        "set": normal_theory(np.array(SIZES), np.array(SPREADS), z),
        "owner": normal_theory(np.array(SIZES[1:2]), np.array(SPREADS[1:2]), z),
    }
    assert predicted["set"][0] == pytest.approx(0.937, abs=5e-4)
    assert predicted["owner"][0] == pytest.approx(0.929, abs=5e-4)
    for name, (coverage, width) in predicted.items():
        low, high = binom.interval(0.999, draws, coverage)
        assert low <= covered[name] <= high, (name, covered[name], coverage)
        assert widths[name] == pytest.approx(width, rel=0.04), name


def test_auroc_interval_covers_the_true_auroc_at_close_to_the_nominal_rate():
    """90 % intervals of the AUROC of N(1, 1) retain over N(0, 1) forget queries (true AUROC
    Phi(1/sqrt 2) = 0.760), 40 + 30 queries over 4 owners, 400 draws: covered at 0.90 ± 0.04
    (measured 0.875; binomial noise alone is ± 0.015, 1 sd)."""
    rng = np.random.default_rng(1)
    truth = norm.cdf(1 / math.sqrt(2))
    strata = np.repeat(np.arange(4), [20, 20, 15, 15])
    retain = strata < 2
    draws, covered = 400, 0
    for draw in range(draws):
        values = rng.normal(size=len(strata)) + retain
        _, aurocs = bootstrap_replicates(
            values, strata, {}, auroc=(retain, ~retain), resamples=1000, seed=draw
        )
        interval = percentile_interval(aurocs, 0.90)
        covered += interval.low <= truth <= interval.high
    assert covered / draws == pytest.approx(0.90, abs=0.04)


def test_each_stratum_keeps_its_size_in_every_resample():
    strata = np.array([7, 7, 3, 7, 3, 9])  # interleaved labels
    counts = stratified_multiplicities(strata, 500, np.random.default_rng(0))
    assert counts.shape == (500, 6)
    for label, size in ((7, 3), (3, 2), (9, 1)):
        np.testing.assert_array_equal(counts[:, strata == label].sum(axis=1), size)
    assert (counts[:, strata == 9] == 1).all()  # a lone item is always drawn once
    assert counts[:, strata == 7].std() > 0  # and the others really are resampled
    assert counts.dtype.kind == "i"  # multiplicities are counts


def test_constant_owners_give_a_zero_width_set_interval():
    """Within-owner resampling: two owners whose queries all read the same keep the set's mean
    exactly; resampling across owners would move it."""
    values = np.array([0.0] * 5 + [1.0] * 5)
    strata = np.repeat([0, 1], 5)
    replicates, _ = bootstrap_replicates(values, strata, {"set": np.ones(10, dtype=bool)})
    np.testing.assert_allclose(replicates["set"], 0.5)


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    values, strata = owner_draw(np.random.default_rng(5))
    masks = {"set": np.ones(len(values), dtype=bool)}
    pair = (strata == 0, strata != 0)

    def interval(seed):
        means, aurocs = bootstrap_replicates(values, strata, masks, auroc=pair, seed=seed)
        return percentile_interval(means["set"], 0.95), percentile_interval(aurocs, 0.95)

    assert interval(3) == interval(3)
    assert interval(3) != interval(4)
    default, _ = bootstrap_replicates(values, strata, masks)  # bootstrap_seed=0 by default
    np.testing.assert_array_equal(
        default["set"], bootstrap_replicates(values, strata, masks, seed=0)[0]["set"]
    )


def test_chunked_resamples_are_the_resamples(monkeypatch):
    """Memory is bounded by chunks; chunking changes nothing but the draw order: the chunks are
    consecutive draws of one generator, so every chunk holds new resamples (a chunk that
    redrew the same ones would repeat 7 values 43 times over)."""
    values, strata = owner_draw(np.random.default_rng(6))
    masks = {"set": np.ones(len(values), dtype=bool)}
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", 7 * len(values))  # chunks of 7 resamples
    chunked, _ = bootstrap_replicates(values, strata, masks, resamples=300, seed=2)
    rng = np.random.default_rng(2)
    drawn = np.concatenate(
        [stratified_multiplicities(strata, min(7, 300 - start), rng) for start in range(0, 300, 7)]
    )
    np.testing.assert_allclose(chunked["set"], drawn @ values / len(values), rtol=1e-12)
    assert len(np.unique(chunked["set"])) >= 295  # 300 resamples of 62 values: ties are rare


def test_chunks_hold_at_most_chunk_cells_and_at_least_one_resample(monkeypatch):
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", 3)
    rng = np.random.default_rng(0)
    one_item = [len(c) for c in bootstrap._chunks(np.zeros(1), 7, rng)]
    assert one_item == [3, 3, 1]
    wide = [len(c) for c in bootstrap._chunks(np.zeros(5), 4, rng)]  # a resample > 3 cells
    assert wide == [1, 1, 1, 1]


@pytest.mark.parametrize("seed", range(4))
def test_weighted_auroc_equals_sklearn_with_sample_weights(seed):
    rng = np.random.default_rng(seed)
    positive = np.round(rng.normal(0.3, 0.3, size=17), 1)  # rounding makes ties
    negative = np.round(rng.normal(0.0, 0.3, size=11), 1)
    weights = rng.integers(0, 4, size=(5, 28))
    weights[:, [0, 20]] += 1  # each class weighs something
    ours = weighted_auroc(positive, negative, weights[:, :17], weights[:, 17:])
    labels = np.r_[np.ones(17), np.zeros(11)]
    for row, value in zip(weights, ours, strict=True):
        expected = roc_auc_score(labels, np.r_[positive, negative], sample_weight=row)
        assert value == pytest.approx(expected, abs=1e-12)


def test_percentile_interval_is_the_quantiles():
    replicates = np.arange(1001) / 1000
    assert percentile_interval(replicates, 0.9) == Interval(
        pytest.approx(0.05), pytest.approx(0.95)
    )


@pytest.mark.parametrize(
    ("confidence", "error"),
    [(0, ValueError), (1, ValueError), (1.5, ValueError), (-0.5, ValueError),
     (math.nan, ValueError), ("x", TypeError), (True, TypeError), (None, TypeError)],
)  # fmt: skip
def test_bad_confidence_raises_clearly(confidence, error):
    with pytest.raises(error, match="`confidence`"):
        check_confidence(confidence)
    assert check_confidence(0.95) == 0.95


def test_bad_resamples_raise_clearly():
    with pytest.raises(ValueError, match="`bootstrap_resamples` must be >= 100"):
        check_resamples(10)
    assert check_resamples(MIN_RESAMPLES) == MIN_RESAMPLES
    with pytest.raises(TypeError, match="`bootstrap_resamples` must be an integer"):
        check_resamples(1000.0)
