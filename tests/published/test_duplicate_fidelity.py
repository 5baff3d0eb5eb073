"""The committed duplicate-fidelity study (``benchmarks/duplicate_fidelity.py``): its grid is the
one the script names, each table row is the mean and Student's t interval (scipy, computed
here) of the per-passage values in its results.json, and the sentence on the corpus's own
watermark reads the reference values."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from scipy import stats

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "duplicate_fidelity"


def mean_interval(values: list[float]) -> str:
    array = np.asarray(values, dtype=float)
    low, high = stats.t.interval(0.95, len(array) - 1, loc=array.mean(), scale=stats.sem(array))
    return f"{array.mean():.3f} [{low:.3f}, {high:.3f}]"


def load() -> tuple[dict, str]:
    return json.loads((FOLDER / "results.json").read_text()), (FOLDER / "results.md").read_text()


def test_the_full_grid_over_every_passage():
    results, _ = load()
    assert "--quick" not in results["command"]
    passages = results["owners"] * results["passages_per_owner"]
    grid = [(p["kind"], p["method"], p["kappa"], p.get("copy_bias")) for p in results["points"]]
    expected = [
        (kind, "paraphrase", kappa, None) for kind in ("exact", "semantic") for kappa in (0.5, 1, 2, 4)
    ] + [
        (kind, "substitution", kappa, bias)
        for kind in ("exact", "semantic") for kappa in (1, 2, 4) for bias in (2, 8)
    ]  # fmt: skip
    assert sorted(grid, key=str) == sorted(expected, key=str)
    for point in [results["reference"], *results["points"]]:
        assert len(point["fidelity"]) == len(point["strength"]) == passages
        assert all(0 <= f <= 1 for f in point["fidelity"])


def test_each_row_is_the_mean_and_t_interval_of_its_passages():
    results, text = load()
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| exact") or
            line.startswith("| semantic")]  # fmt: skip
    assert len(rows) == len(results["points"])
    for row, point in zip(rows, results["points"], strict=True):
        kind, method = row[0].removeprefix("| "), row[1]
        assert kind == point["kind"] and method.startswith(point["method"])
        assert f"kappa {point['kappa']:g}" in method
        if point["method"] == "substitution":
            assert method.endswith(f"copy_bias {point['copy_bias']:g}")
        assert row[2] == mean_interval(point["fidelity"])
        assert row[3].removesuffix(" |") == mean_interval(point["strength"])
    reference = results["reference"]
    sentence = re.search(r"reads fidelity (.*?\]) and strength (.*?\])\.", text)
    assert sentence[1] == mean_interval(reference["fidelity"])
    assert sentence[2] == mean_interval(reference["strength"])
    assert (FOLDER / "fidelity_strength.png").stat().st_size > 10_000
