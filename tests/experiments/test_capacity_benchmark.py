"""benchmarks/capacity.py's pure parts: carry-over, intervals, the summary and the estimate."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from waterdrum_hf import tiny

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "capacity.py"


@pytest.fixture(scope="module")
def capacity():
    spec = importlib.util.spec_from_file_location("capacity_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up while being made
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


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
