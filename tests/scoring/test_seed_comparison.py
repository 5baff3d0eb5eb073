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
    seed_interval,
)


def result(forget, retain, ci=None):
    """A result with these set values (and, with ``ci``, a query interval of that half-width)."""

    def value(v):
        return SetValue(v) if ci is None else SetValue(v, ci_low=v - ci, ci_high=v + ci)

    return WaterDrumResult(
        forget=value(forget), retain=value(retain), num_queries=60, num_scored=240, num_skipped=0
    )


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
    expected = [math.hypot(0.29 - 0.04, 0.35 - 0.69), math.hypot(0.21 - 0.05, 0.30 - 0.70)]
    expected.append(math.hypot(0.25 - 0.02, 0.40 - 0.68))  # run i against the retrained run i
    assert comparison.distances["kl"].value == pytest.approx(np.mean(expected))
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
    d = [math.hypot(f - rf, r - rr) for (f, r), (rf, rr) in
         zip([(0.10, 0.66), (0.13, 0.64), (0.11, 0.66)], [(0.03, 0.70), (0.05, 0.68), (0.04, 0.69)],
             strict=True)]  # fmt: skip
    distance = at_90.distances["near"]
    assert (distance.ci_low, distance.ci_high) == pytest.approx(t90(d))
    assert at_95.closest.names == ("near", "other") and at_90.closest.names == ("near",)
    assert at_90.confidence == 0.9 and at_90.to_dict()["confidence"] == 0.9


def test_differences_cover_every_pair_once_in_the_models_order():
    runs = {name: [result(0.1 * i, 0.5)] * 2 for i, name in enumerate(("a", "b", "c"), 1)}
    runs["a"] = [result(0.1, 0.5), result(0.12, 0.52)]  # some spread
    comparison = compare_seeds(runs)
    assert list(comparison.differences) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert list(comparison.differences[("a", "b")]) == ["forget", "retain"]
    assert comparison.paired is True and compare_seeds(runs, paired=False).paired is False


def test_tied_methods_are_listed_by_their_mean_distance():
    retrained = [result(0.0, 0.7), result(0.0, 0.7)]
    runs = {
        "retrained": retrained,
        "far_tie": [result(0.30, 0.7), result(0.02, 0.7)],  # mean distance 0.16
        "best": [result(0.10, 0.7), result(0.12, 0.7)],  # 0.11
        "mid_tie": [result(0.02, 0.7), result(0.25, 0.7)],  # 0.135
    }
    closest = compare_seeds(runs).closest
    assert closest.names == ("best", "mid_tie", "far_tie") and closest.num_seeds == 2


def test_unpaired_distances_are_to_the_references_mean_point():
    runs = {
        "retrained": [result(0.02, 0.70), result(0.06, 0.66)],  # mean point (0.04, 0.68)
        "kl": [result(0.30, 0.40), result(0.20, 0.50), result(0.25, 0.45)],
    }
    comparison = compare_seeds(runs, paired=False)
    expected = [math.hypot(f - 0.04, r - 0.68) for f, r in ((0.3, 0.4), (0.2, 0.5), (0.25, 0.45))]
    assert comparison.distances["kl"].value == pytest.approx(np.mean(expected))
    assert comparison.distances["kl"].num_seeds == 3


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
            "retrained": [result(0.0, 0.7), result(0.0, 0.7)],
            "kl": [result(0.01, 0.7), result(0.30, 0.7)],
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
    """A run effect shared by both methods (the runs' spread is large) cancels in paired
    differences: b is always 0.05 farther, which separates them; unpaired, they tie."""
    retrained = [result(0.0, 0.7)] * 3
    a = [result(0.1, 0.7), result(0.5, 0.7), result(0.9, 0.7)]
    b = [result(0.15, 0.7), result(0.55, 0.7), result(0.95, 0.7)]
    runs = {"retrained": retrained, "a": a, "b": b}
    assert compare_seeds(runs).closest.names == ("a",)
    assert compare_seeds(runs, paired=False).closest.names == ("a", "b")
    flat = compare_seeds(runs, paired=False).to_dict()
    assert flat["closest"] == "a,b" and flat["closest_separated"] is False
    assert flat["a/distance"] == pytest.approx(0.5) and "a/distance_ci_low" in flat


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
        "kl": [result(0.3, 0.4), result(0.25, 0.45)],
    }
    exact = [[float(np.float32(v)) for v in point] for point in reference]
    mean_forget, mean_retain = (math.fsum(column) / 3 for column in zip(*exact, strict=True))
    expected = [math.hypot(f - mean_forget, r - mean_retain) for f, r in ((0.3, 0.4), (0.25, 0.45))]
    distance = compare_seeds(runs, paired=False).distances["kl"]
    assert distance.value == pytest.approx(math.fsum(expected) / 2, rel=1e-13, abs=0)


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
