"""The parts of the reproduction's and the scheme comparison's results files that rest on the
seeds or are shared: the heading (command, machine, time), what ± means, the forget-value split
table, every cell over seeds (mean [t interval]) and every claim's verdict read from its
interval. :func:`reproduction_cells` and :func:`comparison_cells` compute all of them at once
from ``results.json``, before ``results_markdown`` and ``comparison`` lay them out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import fmean, pstdev
from typing import Any

from waterdrum_hf.scoring.seed_comparison import moments_interval, welch_interval
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
MEASURE_RANGES = {"auroc": AUROC_RANGE, "r2": R2_RANGE, "r2_offset": R2_RANGE}
"""The range of each measure of a setting's summary that a table shows."""


def over_seeds(mean: float | None, sd: float, seeds: int, bounds: tuple[float, float]) -> str:
    """``mean [low, high]``: Student's 95 % t interval over ``seeds`` seeds from the population
    sd ``sd`` (ddof 0, as results.json keeps it), cut to ``bounds``; the mean alone with one
    seed (its spread is no measurement); "undefined" without a finite mean (e.g. MIA without a
    held-out set), as :func:`number`."""
    if mean is None or not math.isfinite(mean):
        return "undefined"
    cell = moments_interval(mean, _sample_sd(sd, seeds), seeds, bounds=bounds)
    if cell.ci_low is None or cell.ci_high is None:
        return f"{mean:.3f}"
    return f"{mean:.3f} [{cell.ci_low:.3f}, {cell.ci_high:.3f}]"


def _sample_sd(sd: float, seeds: int) -> float:
    """The sample sd (ddof 1) of ``seeds`` values from their population sd (ddof 0)."""
    return sd * math.sqrt(seeds / (seeds - 1)) if seeds > 1 else math.nan


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
    mean: float | None, sd: float, defined: int, seeds: int, bounds: tuple[float, float]
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
    gap = welch_interval(
        (a[0], _sample_sd(a[1], seeds), seeds), (b[0], _sample_sd(b[1], seeds), seeds)
    )
    if gap.ci_low is None or gap.ci_high is None:
        return f"gap {gap.value:+.3f} at one seed, which gives no interval: no verdict"
    low, high = gap.ci_low, gap.ci_high
    verdict = "holds" if low > 0 else "does not hold" if high < 0 else "not shown"
    words = f"{seeds} seed{'s' if seeds != 1 else ''}"
    return f"{verdict} over {words} (gap {gap.value:+.3f}, 95 % interval [{low:+.3f}, {high:+.3f}])"


def reproduction_cells(results: Mapping[str, Any], *, title: str, command: str) -> dict[str, Any]:
    """Everything of a reproduction's ``results.md`` that rests on the seeds, as its tables
    print it: the heading and the words on the seeds; per setting, every measure's cells
    (``summaries[setting][measure][metric]``), the MIA on the original and the retrained model,
    and the claims of the expected outcome (WaterDrum's AUROC and R² above 0.9, by
    :func:`gap_verdict`); each metric's meta-evaluation measures; each model's Forget Quality
    per setting; the forget-value split table."""
    seeds = len(results["config"]["seeds"])
    meta = results.get("meta_evaluation") or {}
    quality = results.get("forget_quality") or {}
    return {
        "heading": heading(title, results, command=command),
        "seeds_sentence": seeds_sentence(seeds),
        "first_of": first_of(seeds),
        "summaries": {
            setting: _summary_cells(summary, seeds)
            for setting, summary in results["settings"].items()
        },
        "claims": {
            setting: _threshold_claims(summary, seeds)
            for setting, summary in results["settings"].items()
        },
        "mia": {
            setting: {
                model: over_seeds(m[model], m[f"{model}_std"], seeds, MIA_RANGE)
                for model in ("original", "retrained")
            }
            for setting, m in results["mia"].items()
        },
        "meta_evaluation": {
            metric: {
                name: over_defined_seeds(
                    measure["mean"],
                    measure["std"],
                    sum(v is not None and math.isfinite(v) for v in measure["per_seed"]),
                    seeds,
                    AUROC_RANGE,
                )
                for name, measure in measures.items()
            }
            for metric, measures in meta.get("metrics", {}).items()
        },
        "forget_quality": {
            setting: {
                model: over_seeds(fmean(values), pstdev(values), seeds, AUROC_RANGE)
                for model, values in models.items()
            }
            for setting, models in quality.items()
        },
        "split": split_table(results["curves"]),
    }


def comparison_cells(
    results: Mapping[str, Any],
    curves: Mapping[str, Any],
    *,
    title: str,
    command: str,
) -> dict[str, Any]:
    """Everything of a scheme comparison's ``results.md`` that rests on the seeds, as its
    tables print it: the heading and the words on the seeds; every measure's cells per scheme
    and setting (``summaries[scheme][setting][measure][metric]``); the verdict (by
    :func:`gap_verdict`) that one scheme's WaterDrum AUROC or R² exceeds another's
    (``exceeds[setting, measure, a, b]``) and that a scheme's R² lies below 0
    (``below_zero[setting, scheme]``); the forget-value split table of ``curves`` (its rows'
    labels to curves)."""
    schemes = results["schemes"]
    seeds = len(results["config"]["seeds"])

    def waterdrum(scheme: str, setting: str, measure: str) -> tuple[float, float]:
        summary = schemes[scheme][setting]
        return summary[measure]["waterdrum"], summary[f"{measure}_std"]["waterdrum"]

    return {
        "heading": heading(title, results, command=command),
        "seeds_sentence": seeds_sentence(seeds),
        "summaries": {
            scheme: {setting: _summary_cells(s, seeds) for setting, s in per_setting.items()}
            for scheme, per_setting in schemes.items()
        },
        "exceeds": {
            (setting, measure, a, b): gap_verdict(
                waterdrum(a, setting, measure), waterdrum(b, setting, measure), seeds
            )
            for a in schemes
            for b in schemes
            if a != b
            for setting in schemes[a]
            if setting in schemes[b]
            for measure in ("auroc", "r2")
        },
        "below_zero": {
            (setting, scheme): gap_verdict((0.0, 0.0), waterdrum(scheme, setting, "r2"), seeds)
            for scheme, per_setting in schemes.items()
            for setting in per_setting
        },
        "split": split_table(curves, label="scheme, setting"),
    }


def _summary_cells(summary: Mapping[str, Any], seeds: int) -> dict[str, dict[str, str]]:
    """Every metric's cell of each measure a setting's summary has (:func:`summary_cell`)."""
    return {
        measure: {
            metric: summary_cell(summary, measure, metric, seeds, bounds)
            for metric in summary[measure]
        }
        for measure, bounds in MEASURE_RANGES.items()
        if measure in summary
    }


def _threshold_claims(summary: Mapping[str, Any], seeds: int) -> list[str]:
    """WaterDrum's AUROC and R² above 0.9, each with its verdict over the seeds."""
    claims = []
    for name, label in (("auroc", "AUROC"), ("r2", "R²")):
        mean, sd = summary[name]["waterdrum"], summary[f"{name}_std"]["waterdrum"]
        verdict = gap_verdict((mean, sd), (0.9, 0.0), seeds) if math.isfinite(mean) else ""
        claims.append(f"WaterDrum {label} {number(mean)} above 0.9: {verdict or 'undefined'}")
    return claims
