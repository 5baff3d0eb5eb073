"""Every claim the committed results check in words ("holds", "does not hold", "not shown")
says what its interval over seeds supports: each such sentence is read back, its interval
recomputed from results.json (Welch's 95 % t interval of the gap; results.json keeps each
mean's population sd over seeds), and its verdict read off that interval."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from scipy import stats

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
VERDICT = re.compile(
    r"(holds|does not hold|not shown) over (\d+) seeds \(gap ([+-][\d.]+), 95 % interval "
    r"\[([+-][\d.]+), ([+-][\d.]+)\]\)"
)
CHECKED_WORDS = re.compile(r"\b(holds|checked)\b")


def welch(a: tuple[float, float], b: tuple[float, float], seeds: int) -> tuple[float, float]:
    """Welch's 95 % interval of mean a - mean b, each over ``seeds`` seeds with population sd."""
    variances = [sd * sd / (seeds - 1) for _, sd in (a, b)]  # sd**2 * n / (n - 1) / n
    gap, se = a[0] - b[0], math.sqrt(sum(variances))
    if se == 0:
        return gap, gap
    df = se**4 / sum(v * v / (seeds - 1) for v in variances if v > 0)
    half = float(stats.t.ppf(0.975, df)) * se
    return gap - half, gap + half


def verdict_of(low: float, high: float) -> str:
    return "holds" if low > 0 else "does not hold" if high < 0 else "not shown"


def claims(name: str) -> list[tuple[str, re.Match[str]]]:
    """The claim lines of a results.md with their verdicts."""
    text = (RESULTS / name / "results.md").read_text()
    lines = text.split("## Expected outcome, checked", 1)[-1].splitlines()
    return [(line, m) for line in lines for m in VERDICT.finditer(line)]


def test_every_verdict_word_is_its_intervals():
    """In every committed results file, a verdict is "holds" exactly where the interval lies
    above 0, "does not hold" below, "not shown" where it holds 0; and no sentence says holds
    or checked without its interval (the section's heading aside)."""
    for name in ("reproduction", "reproduction_qa", "substitution", "schemes"):
        found = claims(name)
        seeds = len(json.loads((RESULTS / name / "results.json").read_text())["config"]["seeds"])
        assert bool(found) == (seeds > 1), name  # one seed: no interval, no verdict
        for line, match in found:
            word, low, high = match[1], float(match[4]), float(match[5])
            assert word == verdict_of(low, high), (name, line)
        text = (RESULTS / name / "results.md").read_text()
        for line in text.split("## Expected outcome, checked", 1)[-1].splitlines():
            if CHECKED_WORDS.search(line):
                assert VERDICT.search(line), (name, line)


def test_the_scheme_comparisons_intervals_are_welchs_from_its_results():
    """Table 5's ordering claims (Waterfall more separable, KGW better calibrated): each
    interval recomputed from the two schemes' means and sds in results.json."""
    results = json.loads((RESULTS / "schemes" / "results.json").read_text())
    schemes, seeds = results["schemes"], len(results["config"]["seeds"])
    lines = {line.split(" (paper")[0]: match for line, match in claims("schemes")}
    for setting in schemes["waterfall"]:
        for name, claim, better, other in (
            ("auroc", "Waterfall more separable", "waterfall", "kgw"),
            ("r2", "adapted KGW better calibrated", "kgw", "waterfall"),
        ):
            match = lines[f"- {setting}, {claim}"]
            a = [schemes[better][setting][key]["waterdrum"] for key in (name, f"{name}_std")]
            b = [schemes[other][setting][key]["waterdrum"] for key in (name, f"{name}_std")]
            low, high = welch((a[0], a[1]), (b[0], b[1]), seeds)
            assert int(match[2]) == seeds
            assert float(match[3]) == pytest.approx(a[0] - b[0], abs=5e-4)
            assert (float(match[4]), float(match[5])) == pytest.approx((low, high), abs=5e-4)


@pytest.mark.parametrize("run", ["reproduction", "reproduction_qa"])
def test_the_reproductions_threshold_claims_are_their_intervals_over_seeds(run):
    """ "WaterDrum AUROC ... above 0.9": the mean's t interval over seeds less 0.9."""
    results = json.loads((RESULTS / run / "results.json").read_text())
    seeds = len(results["config"]["seeds"])
    found = claims(run)
    for setting, summary in results["settings"].items():
        line = next(line for line, _ in found if line.startswith(f"- {setting}:"))
        for name, label in (("auroc", "AUROC"), ("r2", "R²")):
            mean, sd = summary[name]["waterdrum"], summary[f"{name}_std"]["waterdrum"]
            part = line.split(f"WaterDrum {label} ", 1)[1]
            match = VERDICT.search(part)
            low, high = welch((mean, sd), (0.9, 0.0), seeds)
            assert (float(match[4]), float(match[5])) == pytest.approx((low, high), abs=5e-4)
            assert match[1] == verdict_of(low, high)
