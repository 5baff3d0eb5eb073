"""benchmarks/capacity.py's pure parts: carry-over, intervals, the summary and the estimate."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from saved_figures import drawn
from scipy import stats

from waterdrum_hf import tiny


def model(kept: int, forget: list[float], retain: list[float], share: float) -> dict:
    """One calibration model's measurement, forget queries first (as the reproduction's)."""
    return {
        "kept": kept,
        "share": share,
        "waterdrum": np.array(forget + retain),
        "is_forget": np.arange(len(forget) + len(retain)) < len(forget),
    }


def calibration() -> dict[float, dict]:
    return {
        0.0: model(0, [0.1, 0.1, 0.2, 0.2], [0.5, 0.6], 0.0),
        0.5: model(2, [0.9, 0.9, 0.5, 0.5], [0.5, 0.6], 0.5),
        0.75: model(3, [0.9, 0.9, 0.9, 0.0], [0.5, 0.6], 0.75),
        1.0: model(4, [0.9, 0.9, 0.9, 0.9], [0.5, 0.6], 1.0),
    }


def test_carry_over_is_the_untrained_forget_queries_against_k0_at_the_smallest_k(capacity):
    # k = 50 %: queries 3 and 4 not trained on read 0.5; on the k = 0 model 0.2.
    assert capacity.carry_over(calibration(), (0.0, 0.5, 0.75, 1.0)) == pytest.approx(0.3)
    # Without 50 %, the smallest k is 75 %: query 4 reads 0.0, at k = 0 0.2.
    assert capacity.carry_over(calibration(), (0.0, 0.75, 1.0)) == pytest.approx(-0.2)
    assert math.isnan(capacity.carry_over(calibration(), (0.0, 1.0)))


def test_a_cell_reads_d1_d2_and_carry_over_of_one_seed(capacity):
    row = capacity.cell(calibration(), (0.0, 0.5, 0.75, 1.0))
    assert row["auroc"] == 1.0  # retain (0.5, 0.6) above every forget value at k = 0
    assert row["carry_over"] == pytest.approx(0.3)
    forget = np.array([0.15, 0.7, 0.675, 0.9])  # forget value against k, through the origin
    shares = np.array([0.0, 0.5, 0.75, 1.0])
    for key, ys in (("r2", forget), ("r2_offset", forget - forget[0])):
        slope = shares @ ys / (shares @ shares)
        residual = ((ys - slope * shares) ** 2).sum()
        assert row[key] == pytest.approx(1 - residual / ((ys - ys.mean()) ** 2).sum())


def test_interval_is_scipys_t_interval_and_drops_nan(capacity):
    values = [0.7, 0.86, 0.75, math.nan]
    finite = np.array(values[:3])
    low, high = stats.t.interval(0.95, len(finite) - 1, loc=finite.mean(), scale=stats.sem(finite))
    got = capacity.interval(values)
    assert got["mean"] == pytest.approx(finite.mean())
    assert (got["low"], got["high"]) == pytest.approx((low, high))
    assert got["n"] == 3
    one = capacity.interval([0.4])
    assert one["mean"] == 0.4 and math.isnan(one["low"]) and math.isnan(one["high"])
    assert math.isnan(capacity.interval([math.nan])["mean"])


def test_summary_groups_seeds_per_size_and_epochs(capacity):
    rows = [
        {"size": s, "params": p, "epochs": e, "seed": seed, "r2": r2, "r2_offset": r2,
         "carry_over": 1 - r2, "auroc": 0.9, "nll": 1.0}
        for s, p in (("1m", 8e5), ("4m", 4e6))
        for e in (30, 90)
        for seed, r2 in enumerate((0.6, 0.8) if s == "1m" else (0.9, 0.95))
    ]  # fmt: skip
    summary = capacity.summarise(rows)
    assert [(s["size"], s["epochs"]) for s in summary] == [
        ("1m", 30), ("1m", 90), ("4m", 30), ("4m", 90),
    ]  # fmt: skip
    assert summary[0]["r2"]["mean"] == pytest.approx(0.7) and summary[0]["r2"]["n"] == 2
    assert summary[2]["carry_over"]["mean"] == pytest.approx(0.075)
    means = np.array([(s["carry_over"]["mean"], s["r2"]["mean"]) for s in summary])
    assert capacity.association(summary) == pytest.approx(stats.pearsonr(*means.T)[0])
    assert capacity.association(summary) == pytest.approx(-1.0)
    assert math.isnan(capacity.association(summary[:2]))


def test_estimate_scales_the_measured_cost_to_the_full_plan(capacity):
    rate = 0.01  # seconds per model x (epochs + 2) x text on the 1m model
    timings = [
        {"stage": "pretrain", "size": "1m", "built": False, "seconds": 0.1},
    ] + [
        {"stage": "calibrate", "size": s, "epochs": e, "params": 8e5, "models": 3,
         "texts": 24, "seconds": rate * 3 * (e + 2) * 24 * (1 if s == "1m" else 7),
         "reused": 0, "reused_build_seconds": 0.0}
        for s in ("1m", "quick")
        for e in (10, 20)
    ]  # fmt: skip
    token_seconds = {"1m": 1e-4, "4m": 3e-4}
    plan = capacity.Plan(False, ("1m", "4m"), (30,), (0, 1), (0.0, 0.5, 1.0))
    got = capacity.estimate_seconds(timings, token_seconds, plan)
    models, per_epoch_text = 6, 32 * capacity.FULL_TEXTS
    assert got["calibrate"] == pytest.approx(rate * models * per_epoch_text * (1 + 3))
    steps = tiny.SIZES["4m"].steps  # only 4m is pretrained: 1m is the default build
    assert got["pretrain"] == pytest.approx(steps * 256 * 3e-4)
    assert got["total"] == pytest.approx(got["calibrate"] + got["pretrain"])


def test_estimate_counts_measured_cells_and_cached_ones_at_their_build_time(capacity):
    rate = 0.01
    plan = capacity.Plan(False, ("1m", "4m"), (10,), (0, 1), (0.0, 1.0))
    cell = {"stage": "calibrate", "epochs": 10, "params": 8e5, "models": 4,
            "texts": capacity.FULL_TEXTS}  # fmt: skip
    whole = rate * 4 * 12 * capacity.FULL_TEXTS  # the 1m cell's cost from nothing
    timings = [
        {"stage": "pretrain", "size": "4m", "built": True, "seconds": 5.0},
        # read from a cache: a second here, the rest recorded when an earlier run built it
        {**cell, "size": "1m", "seconds": 1.0, "reused": 4, "reused_build_seconds": whole - 1},
        {**cell, "size": "4m", "seconds": 123.0, "reused": 0, "reused_build_seconds": 0.0},
    ]
    got = capacity.estimate_seconds(timings, {"1m": 1e-4, "4m": 3e-4}, plan)
    assert got["calibrate"] == pytest.approx(whole + 123.0)  # measured, not scaled
    assert got["pretrain"] == 5.0
    without_4m = capacity.estimate_seconds(timings[:2], {"1m": 1e-4, "4m": 3e-4}, plan)
    assert without_4m["calibrate"] == pytest.approx(whole * (1 + 3))  # 4m scaled from 1m
    results = {"full_estimate_seconds": {"total": 7200.0}}
    assert capacity.scratch_hours(results) == 2.0


def test_association_reads_any_column_against_d2(capacity):
    summary = [
        {"r2": {"mean": r2}, "nll": {"mean": nll}, "carry_over": {"mean": 0.1 * r2}}
        for r2, nll in ((0.9, 0.2), (0.5, 0.9), (0.7, 0.4))
    ]
    assert capacity.association(summary, "nll") == pytest.approx(
        stats.pearsonr([0.2, 0.9, 0.4], [0.9, 0.5, 0.7])[0]
    )
    assert capacity.association(summary) == pytest.approx(1.0)
    assert capacity.correlation_text({"summary": summary}) == "+1.00"
    assert capacity.correlation_text({"summary": summary[:2]}, "nll") == "undefined"


def test_plan_checks_sizes_and_names_its_command(capacity):
    plan = capacity.Plan.of(False, 3, ("1m", "4m"), (10, 30))
    assert plan.seeds == (0, 1, 2) and plan.fractions == capacity.FRACTIONS
    assert capacity.command(plan) == (
        "python benchmarks/capacity.py --seeds 3 --sizes 1m,4m --epochs 10,30"
    )
    assert capacity.command(capacity.Plan.of(True, 3)).endswith("--quick")
    with pytest.raises(ValueError, match="--sizes must include 1m"):
        capacity.Plan.of(False, 3, ("4m", "16m"))
    with pytest.raises(ValueError, match="--sizes must include 1m"):
        capacity.Plan.of(False, 3, ("1m", "2m"))
    with pytest.raises(ValueError, match="--epochs must be positive"):
        capacity.Plan.of(False, 3, ("1m",), (0,))


def test_the_quick_plan_and_the_smallest_full_plan(capacity):
    """The quick plan is the documented smoke test (the default model and a small variant,
    5/15 epochs, one seed, k = 0, 50, 100 %); one seed and one epoch are the smallest full plan,
    and zero of either is refused."""
    quick = capacity.Plan.of(True, 3)
    assert quick == capacity.Plan(True, ("1m", "quick"), (5, 15), (0,), (0.0, 0.5, 1.0))
    smallest = capacity.Plan.of(False, 1, ("1m",), (1,))
    assert smallest == capacity.Plan(False, ("1m",), (1,), (0,), (0.0, 0.1, 0.5, 1.0))
    assert smallest.quick is False
    for seeds, epochs in ((0, (10,)), (3, ()), (3, (10, 0))):
        with pytest.raises(ValueError, match="^--seeds and every --epochs must be positive.$"):
            capacity.Plan.of(False, seeds, ("1m",), epochs)
    with pytest.raises(ValueError, match="^--sizes must include 1m and name only 1m, 4m, 16m.$"):
        capacity.Plan.of(False, 3, ("4m",))


def test_carry_over_never_reads_the_fully_trained_model(capacity):
    # k = 100 % trains on every forget query: the reading is the one share strictly inside.
    assert capacity.carry_over(calibration(), (1.0, 0.5, 0.0)) == pytest.approx(0.3)


def test_a_cell_without_a_finite_mean_is_a_dash(capacity):
    nan = {"mean": math.nan, "low": math.nan, "high": math.nan}
    assert capacity.cell_text(nan, "{:.3f}") == "–"
    assert capacity.cell_text({"mean": 0.5, "low": math.nan, "high": math.nan}, "{:.2f}") == "0.50"
    assert capacity.cell_text({"mean": 0.5, "low": 0.25, "high": 0.75}, "{:+.1f}") == (
        "+0.5 [+0.2, +0.8]"
    )


def test_estimate_measures_only_cells_on_the_full_data(capacity):
    """A 1m cell with the plan's model count on the quick data (24 texts) is not the full
    cell: the full one is scaled from it."""
    rate = 0.01
    plan = capacity.Plan(False, ("1m",), (10,), (0, 1), (0.0, 1.0))
    quick_cell = {"stage": "calibrate", "size": "1m", "epochs": 10, "params": 8e5, "models": 4,
                  "texts": 24, "seconds": rate * 4 * 12 * 24, "reused": 0,
                  "reused_build_seconds": 0.0}  # fmt: skip
    got = capacity.estimate_seconds([quick_cell], {"1m": 1e-4}, plan)
    assert got["calibrate"] == pytest.approx(rate * 4 * 12 * capacity.FULL_TEXTS)


def test_format_row_shows_the_columns_it_has_in_their_formats(capacity):
    row = {"auroc": 0.91234, "carry_over": 0.05, "r2": 0.5}
    assert capacity.format_row(row) == "r2 0.500, carry_over +0.050, auroc 0.912"


def summary_cell(size: str, epochs: int, params: float, **means: float) -> dict:
    """A summary entry with intervals mean +- 0.1 (none for nll)."""
    entry = {"size": size, "epochs": epochs, "params": params}
    for column, mean in means.items():
        half = math.nan if column == "nll" else 0.1
        entry[column] = {"mean": mean, "low": mean - half, "high": mean + half, "n": 2}
    return entry


def synthetic_results(reused: int) -> dict:
    summary = [
        summary_cell(s, e, p, r2=r2, r2_offset=r2 - 0.05, carry_over=0.2 - r2 / 4, auroc=0.9,
                     nll=nll)
        for (s, p), e, r2, nll in (
            (("1m", 852608), 10, 0.6, 1.1), (("1m", 852608), 30, 0.7, 0.6),
            (("4m", 4_205_001), 10, 0.8, 0.9), (("4m", 4_205_001), 30, 0.75, 0.3),
        )
    ]  # fmt: skip
    timings = [
        {"stage": "pretrain", "size": "4m", "built": True, "seconds": 3.0},
        {"stage": "calibrate", "size": "1m", "epochs": 10, "reused": reused,
         "reused_build_seconds": 1500.0 * bool(reused), "seconds": 9.0},
        {"stage": "calibrate", "size": "4m", "epochs": 10, "reused": 0,
         "reused_build_seconds": 0.0, "seconds": 9.0},
    ]  # fmt: skip
    return {
        "plan": {"quick": False, "sizes": ["1m", "4m"], "epochs": [10, 30], "seeds": [0, 1],
                 "fractions": [0.0, 0.1, 0.5, 1.0]},
        "summary": summary, "timings": timings, "seconds": 600.0, "machine": "x86_64, Linux",
        "full_estimate_seconds": {"total": 5400.0}, "command": "python benchmarks/capacity.py",
    }  # fmt: skip


def test_markdown_states_the_run_its_cache_and_each_cell(capacity):
    """The command line's minutes (600 s: 10.0), the models read from a cache and the minutes
    an earlier run built them in (1500 s: 25), the estimate (5400 s: 1.5 hours), one row per
    cell and Pearson's r of the cell means (scipy)."""
    results = synthetic_results(reused=24)
    text = capacity.markdown(results)
    assert text.endswith("(capacity.png)\n")
    assert (
        "Command: `python benchmarks/capacity.py` (10.0 minutes on x86_64, Linux, reading 24 "
        "models and generations that an earlier run built in 25 minutes; the full study from "
        "nothing: about 1.5 hours on one thread" in text
    )
    assert "k = 0%, 10%, 50%, 100%; seeds 0, 1." in text
    assert "| 1m | 0.85M | 10 | 0.600 [0.500, 0.700] | 0.550 [0.450, 0.650] | +0.050 " in text
    assert "| 4m | 4.21M | 30 | 0.750 [0.650, 0.850] |" in text and "| 0.30 |" in text
    means = {c: [s[c]["mean"] for s in results["summary"]] for c in ("carry_over", "nll", "r2")}
    carry = f"{stats.pearsonr(means['carry_over'], means['r2'])[0]:+.2f}"
    nll = f"{stats.pearsonr(means['nll'], means['r2'])[0]:+.2f}"
    assert f"Correlation over the 4 cells with mean D2 R²: of mean carry-over, {carry} " in text
    assert f"of mean training NLL, {nll} (negative:" in text
    unread = capacity.markdown(synthetic_results(reused=0))
    assert "(10.0 minutes on x86_64, Linux; the full study from nothing" in unread


def test_error_bars_are_the_distances_to_the_interval_ends_and_zero_without_one(capacity):
    points = [
        {"r2": {"mean": 0.5, "low": 0.25, "high": 0.875}},
        {"r2": {"mean": 0.7, "low": math.nan, "high": math.nan}},
    ]
    bars = capacity.error_bars(points, "r2")
    assert bars.shape == (2, 2)
    assert bars.tolist() == [[0.25, 0.0], [0.375, 0.0]]


def test_plot_draws_each_cells_means_and_intervals(capacity, tmp_path, monkeypatch):
    """Three panels against parameters (log scale), a line per epochs with the cells' means
    and their intervals as error bars; the fourth: D2 R² against training NLL, a labelled
    point per cell, its title with scipy's r of the means; 17 x 3.8 inches at 120 dpi."""
    results = synthetic_results(reused=0)
    results["summary"][3]["r2"]["low"] = results["summary"][3]["r2"]["high"] = math.nan
    figure, size = drawn(monkeypatch, lambda p: capacity.plot(results, p), tmp_path / "c.png")
    assert size == (2040, 456)
    axes = figure.axes
    assert axes[0].get_position().x0 < 0.1  # laid out tight (the default margin is 0.125)
    assert all(
        a.get_position().x1 < b.get_position().x0 for a, b in zip(axes[:-1], axes[1:], strict=True)
    )
    assert len(axes) == 4
    titles = ("D2 R²", "carry-over", "D1 AUROC")
    for ax, column, title in zip(axes[:3], ("r2", "carry_over", "auroc"), titles, strict=True):
        assert ax.get_title() == title and ax.title.get_fontsize() == 9
        assert ax.get_xscale() == "log" and ax.get_xlabel() == "base model parameters"
        assert ax.xaxis.get_gridlines()[0].get_alpha() == 0.3
        assert [c.get_label() for c in ax.containers] == ["10 epochs", "30 epochs"]
        for container, epochs in zip(ax.containers, (10, 30), strict=True):
            points = [s for s in results["summary"] if s["epochs"] == epochs]
            line, caps, (bars,) = container.lines
            assert line.get_marker() == "o" and caps[0].get_markersize() == 6  # capsize 3
            assert line.get_xdata().tolist() == [p["params"] for p in points]
            assert line.get_ydata().tolist() == [p[column]["mean"] for p in points]
            for segment, p in zip(bars.get_segments(), points, strict=True):
                interval = p[column]
                ends = (interval["low"], interval["high"])
                if math.isnan(interval["low"]):
                    ends = (interval["mean"], interval["mean"])
                assert segment[:, 1].tolist() == pytest.approx(ends)
    legend = axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["10 epochs", "30 epochs"]
    assert legend.get_texts()[0].get_fontsize() == 8
    memorisation = axes[3]
    assert memorisation.get_xlabel() == "training NLL (k = 100 %) (lower: more memorised)"
    means = [(s["nll"]["mean"], s["r2"]["mean"]) for s in results["summary"]]
    r = stats.pearsonr(*zip(*means, strict=True))[0]
    assert memorisation.get_title() == f"D2 R² against memorisation (means; r = {r:+.2f})"
    assert memorisation.title.get_fontsize() == 9
    assert memorisation.xaxis.get_gridlines()[0].get_alpha() == 0.3
    lines = memorisation.get_lines()
    assert [line.get_label() for line in lines] == ["10 epochs", "30 epochs"]
    for line, epochs in zip(lines, (10, 30), strict=True):
        expected = [(s["nll"]["mean"], s["r2"]["mean"]) for s in results["summary"]
                    if s["epochs"] == epochs]  # fmt: skip
        assert line.get_marker() == "o" and line.get_linestyle() == "None"
        assert list(zip(line.get_xdata(), line.get_ydata(), strict=True)) == expected
    notes = [(a.get_text(), a.xy, a.xyann, a.anncoords) for a in memorisation.texts]
    assert notes == [
        (s["size"], (s["nll"]["mean"], s["r2"]["mean"]), (4, 4), "offset points")
        for epochs in (10, 30) for s in results["summary"] if s["epochs"] == epochs
    ]  # fmt: skip


def test_interval_of_two_seeds_none_and_missing_values(capacity):
    """Two seeds have an interval; none give NaN and n = 0; a missing value (None) is left
    out like NaN."""
    low, high = stats.t.interval(0.95, 1, loc=0.5, scale=stats.sem([0.4, 0.6]))
    assert capacity.interval([0.4, 0.6]) == {
        "mean": pytest.approx(0.5), "low": pytest.approx(low), "high": pytest.approx(high),
        "n": 2,
    }  # fmt: skip
    empty = capacity.interval([])
    assert sorted(empty) == ["high", "low", "mean", "n"] and empty["n"] == 0
    assert all(math.isnan(empty[k]) for k in ("mean", "low", "high"))
    assert capacity.interval([0.4, None, 0.6]) == capacity.interval([0.4, 0.6])


def test_association_without_spread_is_nan_without_a_warning(capacity):
    summary = [
        {"r2": {"mean": r2}, "carry_over": {"mean": 0.5}} for r2 in (0.5, 0.7, 0.9)
    ]  # carry-over the same in every cell
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(capacity.association(summary))


def test_summary_of_one_seed_per_cell(capacity):
    rows = [
        {"size": "1m", "params": 8e5, "epochs": 10, "seed": 0, "r2": 0.6, "r2_offset": 0.5,
         "carry_over": 0.1, "auroc": 0.9, "nll": 1.0},
    ]  # fmt: skip
    (cell,) = capacity.summarise(rows)
    assert cell["params"] == 8e5 and cell["r2"]["mean"] == 0.6 and cell["r2"]["n"] == 1


def test_association_of_a_cell_whose_column_equals_its_r2(capacity):
    """Spread is per column: a cell whose carry-over equals its R² is an ordinary point."""
    pairs = ((0.5, 0.5), (0.2, 0.7), (0.9, 0.1))
    summary = [{"carry_over": {"mean": x}, "r2": {"mean": y}} for x, y in pairs]
    expected = stats.pearsonr(*zip(*pairs, strict=True))[0]
    assert capacity.association(summary) == pytest.approx(expected)
