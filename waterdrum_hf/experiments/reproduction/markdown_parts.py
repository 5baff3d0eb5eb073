"""Pieces shared by the results files of the reproduction and of the scheme comparison: the
heading (command, machine, time), what ± means, numbers as the tables print them, the
forget-value split table, and a claim's verdict read from its interval over seeds."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from waterdrum_hf.utils.machine import machine_record


def heading(title: str, results: Mapping[str, Any], *, command: str) -> list[str]:
    """A results file's title, then the command, the machine that ran it (``results``'
    ``machine``; this one where a run did not record it) and the time it took."""
    ran_on = results.get("machine") or machine_record()
    return [
        f"# {title}",
        "",
        f"Command: `{command}`. Machine: {ran_on['machine']}, {ran_on['cpu_count']} CPU cores. "
        + run_time(results["seconds"]["total"], results["stages"]),
        "",
    ]


def first_of(seeds: int) -> str:
    """Which seed a section rests on when it reads one: "the first of the 3 seeds"."""
    return f"the first of the {seeds} seeds" if seeds > 1 else "one seed"


def seeds_sentence(seeds: int) -> str:
    """What a table's cell over seeds shows, or that one seed has no spread to report."""
    if seeds > 1:
        return (
            f"{seeds} seeds; each of our values is the mean over the seeds [its 95 % Student's t "
            "interval, cut to the range the measure can take]. "
        )
    return "One seed: no spread over seeds to report. "


AUROC_RANGE = (0.0, 1.0)
R2_RANGE = (-math.inf, 1.0)
MIA_RANGE = (-1.0, 1.0)
"""The ranges of D1 AUROC, D2 R² and the MIA value (2 AUROC - 1)."""


def over_seeds(
    mean: float | None,
    sd: float,
    seeds: int,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> str:
    """``mean [low, high]``: Student's 95 % t interval over ``seeds`` seeds from the population
    sd ``sd`` (ddof 0, as results.json keeps it), cut to ``bounds``; the mean alone with one
    seed (its spread is no measurement); "undefined" without a finite mean (e.g. MIA without a
    held-out set), as :func:`number`."""
    if mean is None or not math.isfinite(mean):
        return "undefined"
    if seeds < 2:
        return f"{mean:.3f}"
    from scipy import stats

    half = float(stats.t.ppf(0.975, seeds - 1)) * sd / math.sqrt(seeds - 1)  # sd * √(n/(n-1)) / √n
    low, high = max(mean - half, bounds[0]), min(mean + half, bounds[1])
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def summary_cell(
    summary: Mapping[str, Any],
    name: str,
    metric: str,
    seeds: int,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> str:
    """A metric's ``name`` measure (``auroc``, ``r2``, ``r2_offset``) from a setting's summary
    (:func:`~waterdrum_hf.experiments.reproduction.analysis.summarise`), over the seeds where
    it is defined (:func:`over_defined_seeds`)."""
    mean = summary[name].get(metric, math.nan)
    sd = summary[f"{name}_std"].get(metric, math.nan)
    defined = summary.get(f"{name}_seeds", {}).get(metric, seeds)  # without counts: every seed
    return over_defined_seeds(mean, sd, defined, seeds, bounds)


def over_defined_seeds(
    mean: float | None,
    sd: float,
    defined: int,
    seeds: int,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> str:
    """:func:`over_seeds` over the ``defined`` of the run's ``seeds`` seeds that gave a value;
    fewer than all are named ("(1 of 3 seeds)"), so one seed's value never reads as an
    interval of zero width."""
    cell = over_seeds(mean, sd, defined, bounds)
    return f"{cell} ({defined} of {seeds} seeds)" if 0 < defined < seeds else cell


def run_time(seconds: float, stages: Mapping[str, Any]) -> str:
    """How long the run took; a resumed run's own time is not the whole cost, so the build time
    of the stages it reused is added."""
    if not stages["reused"]:
        return f"Time: {seconds / 60:.1f} minutes."
    built = stages["reused_build_seconds"]
    return (
        f"Time: {seconds / 60:.1f} minutes in this run, which reused {stages['reused']} stages from "
        f"the cache that took {built / 60:.1f} minutes to build (from an empty cache: about "
        f"{(seconds + built) / 60:.0f} minutes)."
    )


def split_table(curves: Mapping[str, Any], *, label: str = "setting") -> list[str]:
    """WaterDrum's forget value per k, split into the forget queries trained on, the rest, and
    the rest at k = 0: one block of rows per curve (named in the ``label`` column)."""
    shares = next(iter(curves.values()))["share"]
    rows = [
        f"| {label} | forget queries | " + " | ".join(f"k = {s:.0%}" for s in shares) + " |",
        "|" + " --- |" * (len(shares) + 2),
    ]
    sides = {
        "trained": "trained on",
        "untrained": "not trained on",
        "untrained_at_k0": "not trained on, at k = 0",
    }
    for setting, curve in curves.items():
        for side, label in sides.items():
            cells = [
                f"{v:+.3f}" if v is not None and math.isfinite(v) else "–"  # JSON's null: NaN
                for v in curve["waterdrum_split"][side]
            ]
            rows.append(f"| {setting.replace('_', ' ')} | {label} | " + " | ".join(cells) + " |")
    return rows


def number(value: float | None) -> str:
    """Three decimals, or "undefined" for a missing or non-finite value."""
    return "undefined" if value is None or not math.isfinite(value) else f"{value:.3f}"


def gap_verdict(a: tuple[float, float], b: tuple[float, float], seeds: int) -> str:
    """Whether mean ``a[0]`` exceeds mean ``b[0]``, each over ``seeds`` seeds with population
    sd (ddof 0, as results.json keeps it) ``a[1]``, ``b[1]``: "holds" where Welch's 95 %
    interval of the gap lies above 0, "does not hold" where it lies below, "not shown" where
    it holds 0; with the gap and its interval (one seed: the gap and no verdict). ``b`` may be
    ``(0.0, 0.0)``: a mean against a fixed number."""
    from scipy import stats

    gap = a[0] - b[0]
    words = f"{seeds} seed{'s' if seeds != 1 else ''}"
    if seeds < 2:
        return f"gap {gap:+.3f} at one seed, which gives no interval: no verdict"
    variances = [(sd * sd * seeds / (seeds - 1)) / seeds for _, sd in (a, b)]
    se = math.sqrt(sum(variances))
    if se == 0:
        low = high = gap
    else:
        df = se**4 / sum(v * v / (seeds - 1) for v in variances if v > 0)
        half = float(stats.t.ppf(0.975, df)) * se
        low, high = gap - half, gap + half
    verdict = "holds" if low > 0 else "does not hold" if high < 0 else "not shown"
    return f"{verdict} over {words} (gap {gap:+.3f}, 95 % interval [{low:+.3f}, {high:+.3f}])"
