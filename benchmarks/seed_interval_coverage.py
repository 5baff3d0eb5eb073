"""How often each interval holds the true mean of a value that moves between training runs:
one run's bootstrap over queries (what the README printed before), a two-level bootstrap (runs,
then queries within each run) and Student's t over runs (``waterdrum_hf.compare_seeds``).

Each simulated experiment has ``S`` runs of one method; run ``s`` reads ``mu + b_s`` plus the
mean of its queries' noise, where ``b_s ~ N(0, seed_sd)`` is the run's effect (the demo's values
moved by up to 0.13 between two machines: ``seed_sd`` 0.07 matches that) and each of
``owners x queries`` query values has noise of sd ``query_sd`` around its owner's own offset.
Intervals at 95 %; coverage is the share of experiments whose interval holds ``mu``, with a
binomial 95 % band. Writes ``benchmarks/results/seed_interval_coverage.{json,md}``.

    python benchmarks/seed_interval_coverage.py
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from waterdrum_hf import SetValue, WaterDrumResult, compare_seeds
from waterdrum_hf.bootstrap import (
    bootstrap_replicates,
    percentile_interval,
    stratified_multiplicities,
)

RESULTS = Path(__file__).resolve().parent / "results" / "seed_interval_coverage"
CONFIDENCE = 0.95
MU = 0.25


def run_queries(rng: np.random.Generator, args: argparse.Namespace, seed_sd: float) -> np.ndarray:
    """``(runs, owners * queries)`` query values of one experiment."""
    owners = rng.normal(0, args.owner_sd, args.owners)  # fixed by the data: shared by runs
    runs = rng.normal(0, seed_sd, (args.runs_max, 1))
    noise = rng.normal(0, args.query_sd, (args.runs_max, args.owners * args.queries))
    values: np.ndarray = MU + runs + np.repeat(owners, args.queries) + noise
    return values - owners.mean()  # mu is the mean over these owners


def query_interval(values: np.ndarray, strata: np.ndarray, resamples: int, seed: int) -> tuple:
    """One run's stratified bootstrap interval over queries (the metric's ``confidence=``)."""
    mask = np.ones(len(values), dtype=bool)
    replicates, _ = bootstrap_replicates(
        values, strata, {"all": mask}, resamples=resamples, seed=seed
    )
    found = percentile_interval(replicates["all"], CONFIDENCE)
    return found.low, found.high


def two_level_interval(
    values: np.ndarray, strata: np.ndarray, resamples: int, rng: np.random.Generator
) -> tuple:
    """Runs resampled with replacement, then queries within owners within each chosen run."""
    runs = len(values)
    chosen = rng.integers(0, runs, (resamples, runs)).ravel()
    counts = stratified_multiplicities(strata, resamples * runs, rng)
    run_means = (counts * values[chosen]).sum(axis=1) / len(strata)
    means = run_means.reshape(resamples, runs).mean(axis=1)
    low, high = np.quantile(means, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return low, high


def t_interval(values: np.ndarray) -> tuple:
    """``compare_seeds`` on the runs' values (each a result, as the metric returns them)."""
    results = [
        WaterDrumResult(overall=SetValue(float(v)), num_queries=0, num_scored=0, num_skipped=0)
        for v in values.mean(axis=1)
    ]
    value = compare_seeds({"method": results}, confidence=CONFIDENCE).values["method"]["overall"]
    return value.ci_low, value.ci_high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=int, default=4000)
    parser.add_argument(
        "--seed-sds", default="0,0.035,0.07", help="run-to-run sds, comma-separated"
    )
    parser.add_argument("--runs", default="2,3,5", help="runs per experiment, comma-separated")
    parser.add_argument("--owners", type=int, default=6)
    parser.add_argument("--queries", type=int, default=10, help="queries per owner")
    parser.add_argument("--query-sd", type=float, default=0.2)
    parser.add_argument("--owner-sd", type=float, default=0.05)
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples")
    parser.add_argument("--two-level-experiments", type=int, default=2000)
    args = parser.parse_args()
    start = time.perf_counter()
    seed_sds = [float(x) for x in args.seed_sds.split(",")]
    run_counts = [int(x) for x in args.runs.split(",")]
    args.runs_max = max(run_counts)
    strata = np.repeat(np.arange(args.owners), args.queries)
    rows = []
    for seed_sd in seed_sds:
        for runs in run_counts:
            rng = np.random.default_rng(1000 * runs + round(1000 * seed_sd))
            hits = {"queries (1 run)": [], "t over runs": [], "two-level bootstrap": []}
            for e in range(args.experiments):
                values = run_queries(rng, args, seed_sd)[:runs]
                low, high = t_interval(values)
                hits["t over runs"].append(low <= MU <= high)
                low, high = query_interval(values[0], strata, args.resamples, e)
                hits["queries (1 run)"].append(low <= MU <= high)
                if e < args.two_level_experiments:
                    low, high = two_level_interval(values, strata, args.resamples, rng)
                    hits["two-level bootstrap"].append(low <= MU <= high)
            for method, hit in hits.items():
                n = len(hit)
                rate = float(np.mean(hit))
                band = 1.96 * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / n)
                rows.append(
                    {
                        "seed_sd": seed_sd,
                        "runs": runs,
                        "interval": method,
                        "experiments": n,
                        "coverage": rate,
                        "band": [CONFIDENCE - band, CONFIDENCE + band],
                        "within_band": abs(rate - CONFIDENCE) <= band,
                    }
                )
                print(f"seed sd {seed_sd:.3f}, {runs} runs, {method:>20}: {rate:.3f} (n = {n})")
    RESULTS.mkdir(parents=True, exist_ok=True)
    command = " ".join(["python", "benchmarks/seed_interval_coverage.py", *sys.argv[1:]])
    record = {
        "command": command,
        "seconds": time.perf_counter() - start,
        "settings": dict(vars(args)),
        "rows": rows,
    }
    (RESULTS / "results.json").write_text(json.dumps(record, indent=1) + "\n")
    (RESULTS / "results.md").write_text(markdown(record))
    print(f"written: {RESULTS}")


def markdown(record: dict) -> str:
    """The coverage table, with what it shows."""
    s = record["settings"]
    lines = [
        "# Coverage of intervals over training runs",
        "",
        f"`{record['command']}`. Each experiment: a method's value over S runs, each run "
        f"{s['owners']} owners x {s['queries']} queries (query sd {s['query_sd']}, owner sd "
        f"{s['owner_sd']}), run effect of sd `seed_sd`; 95 % intervals; coverage = share of "
        "experiments whose interval holds the true mean, with its binomial 95 % band. The "
        f"two-level bootstrap ran on the first {s['two_level_experiments']} experiments of each "
        f"cell (it is slow); {s['resamples']} bootstrap resamples.",
        "",
        "| seed sd | runs | interval | experiments | coverage | binomial band | within |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in record["rows"]:
        low, high = r["band"]
        lines.append(
            f"| {r['seed_sd']:g} | {r['runs']} | {r['interval']} | {r['experiments']} | "
            f"{r['coverage']:.3f} | [{low:.3f}, {high:.3f}] | {'yes' if r['within_band'] else 'no'} |"
        )
    lines += ["", "What it shows:", ""]
    for method in dict.fromkeys(r["interval"] for r in record["rows"]):
        rows = [r for r in record["rows"] if r["interval"] == method]
        within = sum(r["within_band"] for r in rows)
        coverages = [r["coverage"] for r in rows]
        lines.append(
            f"- {method}: coverage {min(coverages):.3f} to {max(coverages):.3f}; within the "
            f"binomial band in {within} of {len(rows)} cells."
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
