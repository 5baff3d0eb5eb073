"""Values over training runs: intervals against scipy's t tests, the closest-method verdict with
ties, and coverage by simulation at the run-to-run spread the demo showed between machines."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from waterdrum_hf import (
    SeedComparison,
    SeedValue,
    SetValue,
    WaterDrumResult,
    compare_seeds,
    difference_interval,
    moments_interval,
    seed_interval,
    welch_interval,
)


def result(forget, retain, ci=None):
    """A result with these set values (and, with ``ci``, a query interval of that half-width)."""

    def value(v):
        return SetValue(v) if ci is None else SetValue(v, ci_low=v - ci, ci_high=v + ci)

    return WaterDrumResult(
        forget=value(forget), retain=value(retain), num_queries=60, num_scored=240, num_skipped=0
    )


def u_squared(method, reference, paired=True):
    """The squared distance of the mean points as a U-statistic (a mean over pairs of distinct
    runs), another way to write the estimator: paired, of the offsets' products; unpaired, of
    each sample's products less twice the product of their means."""

    def pairs_mean(points):
        p = np.asarray(points, dtype=np.float64)
        return np.mean([p[i] @ p[j] for i in range(len(p)) for j in range(len(p)) if i != j])

    if paired:
        return pairs_mean(np.subtract(method, reference))
    m, r = np.asarray(method, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    return pairs_mean(m) + pairs_mean(r) - 2 * m.mean(axis=0) @ r.mean(axis=0)


def paired_jackknife(statistic, samples, level):
    """t interval (n - 1 degrees of freedom) with the jackknife's standard error, leaving out
    run k of every sample."""
    n = len(samples[0])
    left = [statistic(*[np.delete(np.asarray(x), k, axis=0) for x in samples]) for k in range(n)]
    se = math.sqrt((n - 1) / n * np.sum((np.array(left) - np.mean(left)) ** 2))
    value = statistic(*samples)
    half = stats.t.ppf((1 + level) / 2, n - 1) * se
    return value - half, value + half


def points(results):
    return [(r.forget.value, r.retain.value) for r in results]


def test_seed_interval_is_students_t_over_runs():
    values = [0.29, 0.21, 0.25, 0.31]
    got = seed_interval(values, 0.9)
    low, high = stats.t.interval(0.9, 3, loc=np.mean(values), scale=stats.sem(values))
    assert (got.ci_low, got.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert got.value == pytest.approx(0.265) and got.num_seeds == 4
    assert got.std == pytest.approx(np.std(values, ddof=1)) and got.interval_over == "seeds"
    one = seed_interval([0.3])
    assert (one.ci_low, one.ci_high, one.num_seeds, one.interval_over) == (None, None, 1, None)
    cut = seed_interval([0.01, 0.3], bounds=(0.0, math.inf))  # t reaches below 0; cut at 0
    assert cut.ci_low == 0.0 and cut.ci_high == pytest.approx(0.155 + 12.7062 * 0.145, abs=1e-3)


def test_differences_are_paired_t_by_run_or_welch_unpaired():
    a, b = [0.30, 0.25, 0.20], [0.10, 0.20, 0.05]
    paired = difference_interval(a, b)
    assert paired.value == pytest.approx(np.mean(a) - np.mean(b))  # a minus b, not b minus a
    ci = stats.ttest_rel(a, b).confidence_interval()
    assert (paired.ci_low, paired.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    welch = difference_interval(a, [0.1, 0.2, 0.05, 0.12], paired=False)
    ci = stats.ttest_ind(a, [0.1, 0.2, 0.05, 0.12], equal_var=False).confidence_interval()
    assert (welch.ci_low, welch.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    with pytest.raises(ValueError, match="same runs"):
        difference_interval(a, [0.1, 0.2])
    cut = difference_interval([0.01, 0.3], [0.0, 0.01], paired=False, bounds=(0.0, math.inf))
    assert (
        cut.ci_low == 0.0
        and cut.ci_high
        == welch_interval(
            (0.155, float(np.std([0.01, 0.3], ddof=1)), 2),
            (0.005, float(np.std([0.0, 0.01], ddof=1)), 2),
        ).ci_high
    )  # Welch's interval reaches below 0; cut there, and only there


def test_intervals_from_a_results_files_moments_are_those_of_its_runs():
    a, b = [0.29, 0.21, 0.25, 0.31], [0.1, 0.2, 0.05]
    moments = [(float(np.mean(v)), float(np.std(v, ddof=1)), len(v)) for v in (a, b)]
    got = moments_interval(*moments[0], 0.9)
    assert got == seed_interval(a, 0.9)
    low, high = stats.t.interval(0.9, 3, loc=np.mean(a), scale=stats.sem(a))
    assert (got.ci_low, got.ci_high) == pytest.approx((low, high), abs=1e-12)
    welch = welch_interval(*moments, 0.8)
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.8)
    assert welch.value == pytest.approx(np.mean(a) - np.mean(b))  # a minus b
    assert (welch.ci_low, welch.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert welch == difference_interval(a, b, 0.8, paired=False)
    fixed = welch_interval(moments[0], (0.2, 0.0, 4))  # a mean against a fixed number: one-sample t
    one_sample = stats.ttest_1samp(a, 0.2).confidence_interval()
    assert (fixed.ci_low, fixed.ci_high) == pytest.approx(
        (one_sample.low - 0.2, one_sample.high - 0.2), abs=1e-12
    )
    assert moments_interval(0.3, math.nan, 1) == SeedValue(0.3, None, None, 1)
    assert welch_interval((0.3, math.nan, 1), moments[1]).ci_low is None
    cut = moments_interval(0.155, float(np.std([0.01, 0.3], ddof=1)), 2, bounds=(0.0, 1.0))
    assert cut == seed_interval([0.01, 0.3], bounds=(0.0, 1.0)) and cut.ci_low == 0.0
    with pytest.raises(ValueError, match="confidence"):
        welch_interval(*moments, 1.5)


def test_compare_seeds_values_differences_and_distances_from_flat_or_typed_results():
    runs = {
        "original": [result(0.7, 0.66), result(0.72, 0.64), result(0.69, 0.65)],
        "retrained": [result(0.04, 0.69), result(0.05, 0.70), result(0.02, 0.68)],
        "kl": [result(0.29, 0.35).to_dict(), result(0.21, 0.30).to_dict(), result(0.25, 0.40)],
    }
    comparison = compare_seeds(runs)
    kl = comparison.values["kl"]["forget"]
    assert kl.value == pytest.approx(0.25) and kl.num_seeds == 3 and kl.interval_over == "seeds"
    difference = comparison.differences[("retrained", "kl")]["retain"]
    assert difference.value == pytest.approx(0.69 - 0.35)  # first named minus second
    kl_points = [(0.29, 0.35), (0.21, 0.30), (0.25, 0.40)]
    expected = math.sqrt(u_squared(kl_points, points(runs["retrained"])))  # run i against run i
    assert comparison.distances["kl"].value == pytest.approx(expected)
    assert set(comparison.distances) == {"kl"}  # neither the reference nor the baseline
    flat = comparison.to_dict()
    assert flat["kl/forget"] == pytest.approx(0.25) and flat["kl/num_seeds"] == 3
    assert flat["retrained-vs-kl/retain_difference"] == pytest.approx(0.34)
    assert flat["closest"] == "kl" and flat["closest_separated"] is True  # no rival to tie
    assert all(isinstance(v, (int, float, str, bool)) for v in flat.values())


def test_closest_names_a_winner_only_when_the_runs_separate_it():
    retrained = [result(0.03, 0.70), result(0.05, 0.68), result(0.04, 0.69)]
    near = [result(0.10, 0.66), result(0.12, 0.65), result(0.11, 0.66)]
    far = [result(0.30, 0.50), result(0.33, 0.48), result(0.31, 0.52)]
    noisy = [result(0.05, 0.69), result(0.40, 0.40), result(0.20, 0.60)]
    separated = compare_seeds({"retrained": retrained, "far": far, "near": near})
    assert separated.closest.names == ("near",) and separated.closest.winner == "near"
    tied = compare_seeds({"retrained": retrained, "far": far, "near": near, "noisy": noisy})
    assert tied.closest.winner is None
    assert tied.closest.names[0] == "near" and "noisy" in tied.closest.names
    assert "far" not in tied.closest.names  # separated from the closest even so
    single = compare_seeds({"retrained": retrained[:1], "far": far[:1], "near": near[:1]})
    assert single.closest.names == ("near", "far") and single.closest.winner is None  # 1 run


def test_one_run_keeps_its_query_interval_marked_as_such():
    comparison = compare_seeds({"retrained": [result(0.04, 0.7, ci=0.03)]})
    forget = comparison.values["retrained"]["forget"]
    assert forget.interval_over == "queries" and (forget.ci_low, forget.ci_high) == pytest.approx(
        (0.01, 0.07)
    )
    assert comparison.closest is None


@pytest.mark.parametrize(
    ("runs", "paired", "message"),
    [
        ({}, True, "map each model"),
        ({"kl": []}, True, "non-empty list"),
        ({"kl": result(0.1, 0.2)}, True, "non-empty list"),
        ({"kl": [result(0.1, 0.2)], "npo": [result(0.1, 0.2)] * 2}, True, "same number of runs"),
    ],
)
def test_bad_runs_are_refused(runs, paired, message):
    with pytest.raises(ValueError, match=message):
        compare_seeds(runs, paired=paired)


def test_unpaired_runs_of_different_counts_compare_with_welch():
    runs = {
        "retrained": [result(0.03, 0.7), result(0.05, 0.7)],
        "kl": [result(0.3, 0.4), result(0.2, 0.5), result(0.25, 0.45)],
    }
    comparison = compare_seeds(runs, paired=False)
    welch = stats.ttest_ind([0.03, 0.05], [0.3, 0.2, 0.25], equal_var=False).confidence_interval()
    got = comparison.differences[("retrained", "kl")]["forget"]
    assert (got.ci_low, got.ci_high) == pytest.approx((welch.low, welch.high), abs=1e-12)


SEED_SD = 0.07
"""Run-to-run spread of a value: two machines moved the demo's values by up to 0.13."""
QUERY_SE = 0.03
"""Spread of a run's value from its queries (the demo's query intervals: about ±0.03-0.06)."""


def simulated_runs(rng, seeds, truth):
    """Each model's runs: the truth, a run effect shared by the models of a run (they start
    from the same original model), one of the model's own, and the run's query noise."""
    shared = rng.normal(0, SEED_SD / 2, seeds)
    runs = {}
    for model, (forget, retain) in truth.items():
        own = rng.normal(0, SEED_SD * math.sqrt(3) / 2, (2, seeds))
        noise = rng.normal(0, QUERY_SE, (2, seeds))
        values = np.array([[forget], [retain]]) + shared + own + noise
        runs[model] = [
            result(f, r, ci=1.96 * QUERY_SE) for f, r in zip(*values.tolist(), strict=True)
        ]
    return runs


def test_intervals_over_runs_cover_the_true_mean_at_their_level():
    """Over 2,000 simulated experiments with the run-to-run spread of the demo on two machines,
    the interval over 3 runs holds the true mean at 95 % within a binomial band (as do the
    paired differences), while one run's interval over queries holds it far less often."""
    rng = np.random.default_rng(7)
    truth = {"retrained": (0.04, 0.69), "kl": (0.25, 0.33), "npo": (0.22, 0.30)}
    draws, hits, difference_hits, query_hits = 2000, 0, 0, 0
    for _ in range(draws):
        comparison = compare_seeds(simulated_runs(rng, 3, truth))
        kl = comparison.values["kl"]["forget"]
        hits += kl.ci_low <= truth["kl"][0] <= kl.ci_high
        d = comparison.differences[("kl", "npo")]["forget"]
        difference_hits += d.ci_low <= truth["kl"][0] - truth["npo"][0] <= d.ci_high
        single = compare_seeds({"kl": simulated_runs(rng, 1, truth)["kl"]}).values["kl"]["forget"]
        query_hits += single.ci_low <= truth["kl"][0] <= single.ci_high
    band = 3 * math.sqrt(0.95 * 0.05 / draws)  # 3 binomial standard deviations
    assert abs(hits / draws - 0.95) < band
    assert abs(difference_hits / draws - 0.95) < band
    assert query_hits / draws < 0.7  # what the README printed before: it misses many reruns


def test_every_interval_of_a_comparison_is_at_its_confidence():
    """At 90 % every value, difference and distance is scipy's 90 % t interval, and a method
    that ties at 95 % can be separated at 90 % (the verdict reads the same level)."""
    retrained = [result(0.03, 0.70), result(0.05, 0.68), result(0.04, 0.69)]
    near = [result(0.10, 0.66), result(0.13, 0.64), result(0.11, 0.66)]
    other = [result(0.14, 0.64), result(0.21, 0.58), result(0.15, 0.62)]
    runs = {"retrained": retrained, "near": near, "other": other}
    at_90, at_95 = compare_seeds(runs, confidence=0.9), compare_seeds(runs)

    def t90(values):
        return stats.t.interval(0.9, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))

    value = at_90.values["near"]["forget"]
    assert (value.ci_low, value.ci_high) == pytest.approx(t90([0.10, 0.13, 0.11]))
    diff = at_90.differences[("near", "other")]["retain"]
    assert (diff.ci_low, diff.ci_high) == pytest.approx(t90([0.02, 0.06, 0.04]))
    low, high = paired_jackknife(u_squared, [points(near), points(retrained)], 0.9)
    distance = at_90.distances["near"]
    assert (distance.ci_low, distance.ci_high) == pytest.approx(
        (math.sqrt(max(low, 0)), math.sqrt(high))
    )
    assert at_95.closest.names == ("near", "other") and at_90.closest.names == ("near",)
    assert at_90.confidence == 0.9 and at_90.to_dict()["confidence"] == 0.9


def test_differences_cover_every_pair_once_in_the_models_order():
    runs = {name: [result(0.1 * i, 0.5)] * 2 for i, name in enumerate(("a", "b", "c"), 1)}
    runs["a"] = [result(0.1, 0.5), result(0.12, 0.52)]  # some spread
    comparison = compare_seeds(runs)
    assert list(comparison.differences) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert list(comparison.differences[("a", "b")]) == ["forget", "retain"]
    assert comparison.paired is True and compare_seeds(runs, paired=False).paired is False


def test_tied_methods_are_listed_by_their_distance_without_the_runs_noise():
    """Mean points 0.16, 0.11 and 0.135 from the retrained model, but the first and last
    are noisy: less their noise, their squared distances are 0.0060, 0.0120 and 0.0050. Two
    runs give no interval, so every method is named."""
    retrained = [result(0.0, 0.7), result(0.0, 0.7)]
    runs = {
        "retrained": retrained,
        "noisy": [result(0.30, 0.7), result(0.02, 0.7)],
        "quiet": [result(0.10, 0.7), result(0.12, 0.7)],
        "noisier": [result(0.02, 0.7), result(0.25, 0.7)],
    }
    closest = compare_seeds(runs).closest
    assert closest.names == ("noisier", "noisy", "quiet") and closest.num_seeds == 2
    distances = compare_seeds(runs).distances
    assert distances["noisy"].value == pytest.approx(math.sqrt(0.16**2 - 0.28**2 / 4))


def test_unpaired_distances_compare_the_mean_points_less_both_samples_noise():
    runs = {
        "retrained": [result(0.02, 0.70), result(0.06, 0.66)],  # mean point (0.04, 0.68)
        "kl": [result(0.30, 0.40), result(0.20, 0.50), result(0.25, 0.45)],
    }
    comparison = compare_seeds(runs, paired=False)
    expected = math.sqrt(u_squared(points(runs["kl"]), points(runs["retrained"]), paired=False))
    assert comparison.distances["kl"].value == pytest.approx(expected)
    assert comparison.distances["kl"].num_seeds == 2  # the fewer runs of the two


def test_welch_with_one_run_on_a_side_or_no_spread():
    one = difference_interval([0.3], [0.1, 0.2, 0.15], paired=False)
    assert one.value == pytest.approx(0.15) and (one.ci_low, one.ci_high) == (None, None)
    assert one.num_seeds == 1
    flat = difference_interval([0.3, 0.3], [0.1, 0.1], paired=False)
    assert (flat.value, flat.ci_low, flat.ci_high) == pytest.approx((0.2, 0.2, 0.2))
    assert flat.interval_over == "seeds"


def test_a_distances_interval_stops_at_zero_and_nowhere_else():
    cut = seed_interval([0.01, 0.3], bounds=(0.0, math.inf))
    assert cut.ci_low == 0.0
    comparison = compare_seeds(
        {
            "retrained": [result(0.0, 0.7)] * 3,
            "kl": [result(0.01, 0.7), result(0.30, 0.7), result(0.02, 0.7)],
        }  # fmt: skip
    )
    assert comparison.distances["kl"].ci_low == 0.0
    wide = compare_seeds(
        {
            "retrained": [result(0.0, 0.7)] * 3,
            "kl": [result(0.5, 0.7), result(0.6, 0.7), result(0.55, 0.7)],
        }  # fmt: skip
    ).distances["kl"]
    assert 0.0 < wide.ci_low < 0.5  # t's own end: no floor above 0


def test_run_values_are_numbers_in_one_dimension():
    assert seed_interval([1, 2, 3]).value == 2.0  # integers read as floats
    with pytest.raises(ValueError, match="non-empty list"):
        seed_interval([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(ValueError, match="non-empty list"):
        seed_interval([])
    with pytest.raises(ValueError, match="NaN/inf"):
        difference_interval([0.1, math.nan], [0.2, 0.3])


def test_one_runs_value_keeps_its_query_interval_in_the_flat_dict():
    comparison = compare_seeds({"kl": [result(0.2, 0.5, ci=0.03)]})
    value = comparison.values["kl"]["forget"]
    assert (value.value, value.num_seeds, value.interval_over) == (0.2, 1, "queries")
    flat = comparison.to_dict()
    assert flat["kl/forget_ci_low"] == pytest.approx(0.17) and flat["kl/num_seeds"] == 1
    no_interval = compare_seeds({"kl": [result(0.2, 0.5)]}).to_dict()
    assert "kl/forget_ci_low" not in no_interval and "kl/forget_ci_high" not in no_interval


def test_the_verdict_pairs_distances_by_run_when_the_runs_share_seeds():
    """A run effect shared by every model of a run (the runs' spread is large) cancels in
    paired offsets: a is always 0.30 from the retrained run and b 0.35, which separates them;
    unpaired, the run effect is noise and they tie."""
    shift = [0.0, 0.2, 0.4]
    runs = {
        "retrained": [result(s, 0.7) for s in shift],
        "a": [result(s + 0.30 + jitter, 0.7) for s, jitter in zip(shift, (0, 0.002, -0.001), strict=True)],
        "b": [result(s + 0.35 + jitter, 0.7) for s, jitter in zip(shift, (0.001, 0, -0.002), strict=True)],
    }  # fmt: skip
    assert compare_seeds(runs).closest.names == ("a",)
    assert compare_seeds(runs, paired=False).closest.names == ("a", "b")
    flat = compare_seeds(runs, paired=False).to_dict()
    assert flat["closest"] == "a,b" and flat["closest_separated"] is False
    assert compare_seeds(runs).to_dict()["a/distance"] == pytest.approx(0.3, abs=0.002)
    assert "a/distance_ci_low" in flat


def test_welch_differences_say_how_many_runs_and_over_what():
    welch = difference_interval([0.3, 0.2, 0.25], [0.1, 0.2], paired=False)
    assert welch.value == pytest.approx(0.25 - 0.15)
    assert (welch.num_seeds, welch.std, welch.interval_over) == (2, None, "seeds")
    flat = difference_interval([0.3, 0.3, 0.3], [0.1, 0.1], paired=False)
    assert (flat.num_seeds, flat.std) == (2, 0.0)


@pytest.mark.parametrize(
    ("low", "high", "over", "excludes"),
    [
        (0.01, 0.2, "seeds", True),
        (-0.2, -0.01, "seeds", True),
        (0.0, 0.2, "seeds", False),  # touching 0 is not excluding it
        (-0.2, 0.0, "seeds", False),
        (0.01, 0.2, "queries", False),  # a query interval says nothing of a rerun
        (None, 0.2, "seeds", False),
        (0.01, None, "seeds", False),
    ],
)
def test_an_interval_excludes_zero_only_over_runs_and_strictly(low, high, over, excludes):
    from waterdrum_hf import SeedValue

    assert SeedValue(0.1, low, high, 3, None, over).excludes_zero() is excludes


def test_a_model_without_both_sets_has_no_distance_and_the_run_count_is_the_largest():
    retain_only = WaterDrumResult(
        retain=SetValue(0.5), num_queries=1, num_scored=1, num_skipped=0
    )  # fmt: skip
    runs = {
        "retrained": [result(0.0, 0.7)] * 3,
        "kl": [result(0.2, 0.5)] * 3,
        "partial": [retain_only] * 3,
    }
    comparison = compare_seeds(runs)
    assert set(comparison.distances) == {"kl"} and comparison.num_seeds() == 3
    assert compare_seeds({"kl": [result(0.2, 0.5)]}).num_seeds() == 1


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: seed_interval([math.inf]), "`values`"),
        (lambda: difference_interval([math.nan, 0.1], [0.1, 0.2]), "`a`"),
        (lambda: difference_interval([0.1, 0.2], [0.1, math.nan]), "`b`"),
    ],
)
def test_bad_run_values_name_their_argument(call, named):
    with pytest.raises(ValueError, match=named):
        call()


def test_unpaired_distances_are_to_the_float64_mean_of_float32_values():
    """The reference's values read as float32 (e.g. from a float32 array) average in float64:
    its mean point is the exact mean of the float32 numbers, not a float32 rounding of it."""

    def flat(forget, retain):
        return {
            "forget": np.float32(forget),
            "retain": np.float32(retain),
            "num_queries": 6,
            "num_scored": 24,
            "num_skipped": 0,
        }

    reference = [(0.1, 0.7), (0.2, 0.61), (0.7, 0.33)]
    runs = {
        "retrained": [flat(f, r) for f, r in reference],
        "kl": [result(0.9, 0.0), result(0.85, 0.05)],
    }
    exact = [[float(np.float32(v)) for v in point] for point in reference]
    expected = math.sqrt(u_squared([(0.9, 0.0), (0.85, 0.05)], exact, paired=False))
    distance = compare_seeds(runs, paired=False).distances["kl"]
    assert distance.value == pytest.approx(expected, rel=1e-12, abs=0)  # float32 means: 1e-8


def test_a_value_with_half_an_interval_is_flattened_without_one():
    """``to_dict`` writes an interval only with both ends (no ``None`` in the flat scalars)."""
    comparison = SeedComparison(
        0.95,
        {
            "kl": {"forget": SeedValue(0.2, 0.1, None, 2)},
            "ga": {"forget": SeedValue(0.3, None, 0.4, 2)},
        },
        {},
        {},
        None,
        True,
    )
    assert comparison.to_dict() == {
        "confidence": 0.95,
        "kl/forget": 0.2,
        "kl/num_seeds": 2,
        "ga/forget": 0.3,
        "ga/num_seeds": 2,
    }


def test_a_comparison_without_values_rests_on_no_runs():
    assert SeedComparison(0.95, {}, {}, {}, None, True).num_seeds() == 0


def noisy_runs(rng, seeds, offsets, sds, reference_sd=0.07):
    """Runs of the retrained model at (0.05, 0.7) and of methods whose mean points lie at
    ``offsets`` from it, each run's point moved by normal noise of ``sds`` per coordinate."""
    centre = np.array([0.05, 0.7])
    runs = {"retrained": [result(*p) for p in centre + rng.normal(0, reference_sd, (seeds, 2))]}
    for i, (offset, sd) in enumerate(zip(offsets, sds, strict=True)):
        points = centre + np.asarray(offset) + rng.normal(0, sd, (seeds, 2))
        runs[f"m{i}"] = [result(*p) for p in points]
    return runs


def mean_of_run_distances(runs, method):
    """The estimator used before: the mean of run-by-run distances to the retrained run."""
    return float(np.mean([
        math.hypot(m.forget.value - r.forget.value, m.retain.value - r.retain.value)
        for m, r in zip(runs[method], runs["retrained"], strict=True)
    ]))  # fmt: skip


@pytest.mark.parametrize("seeds", [3, 5, 10])
@pytest.mark.parametrize("distance", [0.0, 0.05, 0.3])
def test_a_distance_is_that_of_the_mean_points_whatever_the_runs_noise(distance, seeds):
    """Over 400 simulated experiments, the squared distance is unbiased for the squared
    distance between the mean points (within 3 standard errors) and the interval holds the true
    distance at about its level, where the mean of run-by-run distances grows with the noise
    (0.088 for a method whose mean point is the retrained model's, at 0.05 per coordinate and
    run on each side)."""
    rng = np.random.default_rng(11)
    draws, squared, hits, naive = 400, [], 0, []
    for _ in range(draws):
        runs = noisy_runs(rng, seeds, [(distance, 0.0)], [0.05], reference_sd=0.05)
        d = compare_seeds(runs).distances["m0"]
        squared.append(d.value**2 if d.value > 0 else np.nan)
        hits += d.ci_low <= distance <= d.ci_high
        naive.append(mean_of_run_distances(runs, "m0"))
    assert hits / draws >= 0.90
    if distance == 0.3:  # no negative estimates cut at 0 here: the mean is the estimator's
        assert not np.isnan(squared).any()
        assert abs(np.mean(squared) - 0.09) < 3 * np.std(squared) / math.sqrt(draws)
    if distance == 0.0:
        assert np.mean(naive) == pytest.approx(0.0886, abs=0.005)  # what ranked methods before


@pytest.mark.parametrize("seeds", [3, 5, 10])
def test_low_noise_does_not_win_the_closest_verdict(seeds):
    """Two methods at the same distance (0.05) from the retrained model, with run noise 0.20 and
    0.07 per coordinate: a method is named closest alone in at most 5 % of 400 experiments (a
    binomial band above), where the mean of run-by-run distances ranks the quieter one closer
    in 94 % (3 runs), 98.5 % (5) and 99.75 % (10) of them."""
    rng = np.random.default_rng(12)
    draws, winners, quieter_closer = 400, 0, 0
    for _ in range(draws):
        runs = noisy_runs(rng, seeds, [(0.05, 0.0), (0.0, -0.05)], [0.20, 0.07])
        closest = compare_seeds(runs).closest
        winners += closest.winner is not None
        quieter_closer += mean_of_run_distances(runs, "m1") < mean_of_run_distances(runs, "m0")
    assert winners / draws <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / draws)
    assert quieter_closer / draws > 0.9  # ranked by the old estimator, noise decides


@pytest.mark.parametrize("methods", [2, 4, 8])
def test_the_tie_rule_keeps_its_error_rate_as_methods_are_added(methods):
    """Methods all at distance 0.05 (in different directions, with noise 0.05-0.20): a winner
    is named in at most 5 % of 300 experiments over 5 runs, whether 2, 4 or 8 methods compete."""
    rng = np.random.default_rng(13)
    angles = np.linspace(0, 2 * np.pi, methods, endpoint=False)
    offsets = [(0.05 * math.cos(a), 0.05 * math.sin(a)) for a in angles]
    sds = np.linspace(0.05, 0.20, methods)
    draws = 300
    winners = sum(
        compare_seeds(noisy_runs(rng, 5, offsets, sds)).closest.winner is not None
        for _ in range(draws)
    )
    assert winners / draws <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / draws)


@pytest.mark.parametrize(("seeds", "power"), [(3, 0.2), (5, 0.65), (10, 0.95)])
def test_the_closest_verdict_finds_a_method_that_is_closer(seeds, power):
    """Methods at 0.05 and 0.30 with noise 0.07 per coordinate and run: the nearer is named
    alone in 30 % of 300 experiments over 3 runs, 74 % over 5 and all over 10 (asserted with
    some slack below), and the farther never. The price of an interval that noise cannot
    win: 3 runs rarely separate methods."""
    rng = np.random.default_rng(14)
    draws, named = 300, []
    for _ in range(draws):
        runs = noisy_runs(rng, seeds, [(0.3, 0.0), (0.05, 0.0)], [0.07, 0.07])
        named.append(compare_seeds(runs).closest.winner)
    assert named.count("m1") / draws >= power and "m0" not in named


def test_two_runs_cannot_tell_and_name_every_method():
    runs = noisy_runs(np.random.default_rng(15), 2, [(0.3, 0.0), (0.01, 0.0)], [0.01, 0.01])
    comparison = compare_seeds(runs)
    assert comparison.closest.names == ("m1", "m0") and comparison.closest.winner is None
    assert comparison.distances["m1"].ci_low is None  # no interval from 2 runs
    assert comparison.to_dict()["closest_separated"] is False


def test_values_and_differences_stay_in_the_range_a_value_can_take():
    """Two runs give t intervals 12.7 standard errors wide: they are cut to [-1, 1] (a value)
    and [-2, 2] (a difference)."""
    runs = {
        "kl": [result(-0.8, 0.9), result(0.9, -0.7)],
        "npo": [result(0.9, 0.9), result(-0.9, 0.8)],
    }
    comparison = compare_seeds(runs)
    forget = comparison.values["kl"]["forget"]
    assert (forget.ci_low, forget.ci_high) == (-1.0, 1.0)
    difference = comparison.differences[("kl", "npo")]["forget"]
    assert (difference.ci_low, difference.ci_high) == (-2.0, 2.0)
    assert seed_interval([0.1, 0.2, 0.15]).ci_low == pytest.approx(
        stats.t.interval(0.95, 2, loc=0.15, scale=stats.sem([0.1, 0.2, 0.15]))[0]
    )  # inside the range, t's own ends


def unpaired_jackknife(statistic, samples, level):
    """t interval (fewest runs - 1 degrees of freedom) with the jackknife's standard error,
    leaving out one run of one sample at a time: the variances of each sample's left-out
    values add."""
    arrays = [np.asarray(x, dtype=np.float64) for x in samples]
    variance = 0.0
    for i, sample in enumerate(arrays):
        left = [
            statistic(*[np.delete(x, k, axis=0) if j == i else x for j, x in enumerate(arrays)])
            for k in range(len(sample))
        ]
        variance += (len(left) - 1) / len(left) * np.sum((np.array(left) - np.mean(left)) ** 2)
    value = statistic(*arrays)
    half = stats.t.ppf((1 + level) / 2, min(len(x) for x in arrays) - 1) * math.sqrt(variance)
    return value - half, value + half


def test_unpaired_runs_of_equal_count_keep_their_unpaired_distance_and_interval():
    """paired=False with three runs on each side: the unpaired estimator (not the paired one,
    which equal counts would allow) and its jackknife over each sample in turn, as roots,
    over the three runs."""
    runs = {
        "retrained": [result(0.02, 0.70), result(0.06, 0.66), result(0.01, 0.69)],
        "kl": [result(0.30, 0.40), result(0.20, 0.52), result(0.26, 0.45)],
    }
    distance = compare_seeds(runs, paired=False).distances["kl"]
    method, reference = points(runs["kl"]), points(runs["retrained"])
    squared = u_squared(method, reference, paired=False)
    assert squared != pytest.approx(u_squared(method, reference, paired=True))
    assert distance.value == pytest.approx(math.sqrt(squared))
    low, high = unpaired_jackknife(
        lambda m, r: u_squared(m, r, paired=False), [method, reference], 0.95
    )
    assert (distance.ci_low, distance.ci_high) == pytest.approx(
        (math.sqrt(max(low, 0.0)), math.sqrt(high))
    )
    assert (distance.num_seeds, distance.interval_over, distance.std) == (3, "seeds", None)


def test_unpaired_runs_of_unequal_counts_leave_out_each_samples_own_runs():
    """Four retrained runs beside three of the method: the jackknife leaves out each run of
    each sample in turn (four from the reference, three from the method), never a run of the
    other sample; t over the fewer runs."""
    runs = {
        "retrained": [
            result(0.02, 0.70),
            result(0.06, 0.66),
            result(0.01, 0.69),
            result(0.04, 0.71),
        ],
        "kl": [result(0.30, 0.40), result(0.20, 0.52), result(0.26, 0.45)],
    }
    distance = compare_seeds(runs, paired=False).distances["kl"]
    method, reference = points(runs["kl"]), points(runs["retrained"])
    low, high = unpaired_jackknife(
        lambda m, r: u_squared(m, r, paired=False), [method, reference], 0.95
    )
    assert distance.value == pytest.approx(math.sqrt(u_squared(method, reference, paired=False)))
    assert (distance.ci_low, distance.ci_high) == pytest.approx(
        (math.sqrt(max(low, 0.0)), math.sqrt(high))
    )
    assert distance.num_seeds == 3


def test_one_runs_distance_is_that_of_its_two_points():
    runs = {"retrained": [result(0.0, 0.7)], "kl": [result(0.3, 0.3)]}
    distance = compare_seeds(runs).distances["kl"]
    assert distance == SeedValue(pytest.approx(0.5), None, None, 1)


def test_a_single_run_adds_no_noise_beside_a_sample_of_several():
    """Unpaired, a method of one run is read at its full offset (one run has no spread to
    subtract), so a farther single run does not overtake a nearer method of several runs."""
    runs = {
        "retrained": [result(0.00, 0.70), result(0.02, 0.68), result(0.01, 0.71)],
        "far": [result(0.30, 0.70)],
        "near": [result(0.10, 0.70), result(0.11, 0.69), result(0.09, 0.71)],
    }
    assert compare_seeds(runs, paired=False).closest.names[0] == "near"


def test_paired_runs_rank_methods_by_their_paired_distances():
    """Runs that share seeds: a method that moves with the retrained model's seed is ranked by
    its steady offset (0.10), beside a steady method whose offset from each run varies
    (0.08 on average): paired, the nearer one leads; the unpaired estimator would flip them."""
    reference = [result(0.0, 0.7), result(0.3, 0.7), result(0.6, 0.7)]
    runs = {
        "retrained": reference,
        "follows": [result(r.forget.value + 0.10, 0.7) for r in reference],
        "steady": [result(0.38, 0.7)] * 3,
    }
    assert compare_seeds(runs).closest.names[0] == "steady"
    assert compare_seeds(runs, paired=False).closest.names[0] == "follows"


def test_methods_with_the_same_runs_tie():
    """Two methods with identical runs: the interval of their difference is [0, 0], which does
    not lie above 0, so both are named."""
    runs = {
        "retrained": [result(0.0, 0.7), result(0.02, 0.69), result(0.01, 0.71)],
        "a": [result(0.2, 0.5), result(0.25, 0.55), result(0.22, 0.52)],
    }
    runs["b"] = list(runs["a"])
    assert compare_seeds(runs).closest.names == ("a", "b")


def test_float32_run_values_are_averaged_in_float64():
    values = np.array([0.1, 0.2, 0.4, 0.7], dtype=np.float32)
    expected = values.astype(np.float64)
    interval = seed_interval(values)
    assert interval.value == expected.mean() and interval.std == expected.std(ddof=1)
