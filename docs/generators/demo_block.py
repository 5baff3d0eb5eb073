"""The demo block of README.md and docs/concepts.md: the full demo's plot, results table
(means over its training runs), verdict and audits, with its measured run time and how far its
values moved on another machine, from the committed ``benchmarks/results/demo`` (``python
benchmarks/update_readme_demo.py`` runs the demo; ``docs/generators/update_docs.py`` writes the
block).

``demo/other_kernels/`` holds the same command's first run (one training run, seed 0) computed
under other CPU kernels than the demo's, with its ``run.json`` naming them: the built-in model
ships with the package and is the same everywhere, but fine-tuning and unlearning compute with
each processor's kernels, so values move between processors of one kind."""

from __future__ import annotations

import json
from typing import Any

from doc_blocks import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "demo"
RUN = RESULTS / "run.json"
OTHER_KERNELS = RESULTS / "other_kernels"


def render_demo() -> str:
    """The demo block from the committed ``report.md`` and ``run.json``."""
    run = json.loads(RUN.read_text()) if RUN.is_file() else None
    other_run = json.loads((OTHER_KERNELS / "run.json").read_text())
    report = json.loads((RESULTS / "report.json").read_text())
    rerun = machine_sentence(
        report,
        json.loads((OTHER_KERNELS / "report.json").read_text()),
        (run or {}).get("kernels", "unrecorded"),
        other_run["kernels"],
    )
    if run is not None:
        rerun += " " + time_sentence(run["seconds"], len(report["seeds"]), other_run["seconds"])
    return render((RESULTS / "report.md").read_text(), run, rerun)


def time_sentence(seconds: float, runs: int, other_seconds: float) -> str:
    """The kernels set the time too: the other kernels' one run against this demo's runs."""
    return (
        f"The kernels set the time too: that one run took {other_seconds / 60:.1f} minutes on "
        f"this machine, where this demo's {runs} runs took {seconds / 60:.1f} (torch on one "
        "thread in both; an AVX2 processor runs AVX2 kernels)."
    )


def machine_sentence(
    report: dict[str, Any], earlier: dict[str, Any], kernels: str, other_kernels: str
) -> str:
    """How far the first run's values moved under the other kernels, and whether those values
    lie inside this demo's intervals over runs."""
    comparison, runs = report["comparison"], report["runs"]
    moved, outside = [], []
    for name, result in earlier["models"].items():
        for key in ("forget", "retain"):
            here = runs[name][0][key]
            moved.append((abs(here - result[key]), f"{name}'s {key}"))
            low, high = comparison[f"{name}/{key}_ci_low"], comparison[f"{name}/{key}_ci_high"]
            if not low <= result[key] <= high:
                outside.append(f"{name}'s {key}")
    largest, which = max(moved)
    name, key = which.split("'s ")
    first = report["models"][name]
    half = (first[f"{key}_ci_high"] - first[f"{key}_ci_low"]) / 2
    seeds = len(report["seeds"])
    inside = (
        f"all {len(moved)} of those values lie inside the intervals over the {seeds} runs above"
        if not outside
        else f"{len(moved) - len(outside)} of its {len(moved)} values lie inside the intervals "
        f"over the {seeds} runs above ({', '.join(outside)} do not)"
    )
    link = (OTHER_KERNELS / "report.json").relative_to(ROOT)
    return (
        "A rerun on another processor moves these values, though the built-in model is the same "
        "everywhere (it ships with the package): fine-tuning and unlearning compute with the "
        f"processor's own CPU kernels. The same command under `{other_kernels}` kernels where "
        f"this run had `{kernels}` ([other_kernels/report.json]({link}), one run with seed 0) "
        f"read the first run's values differently by up to {largest:.3f} ({which}), "
        f"{largest / half:.1f} times the half-width of its interval over queries in one run; "
        f"{inside}."
    )


def render(report: str, run: dict[str, Any] | None, rerun: str = "") -> str:
    """The README excerpt: plot, table, verdict line, how far a rerun moved the values, and the
    run's time and machine (from ``run.json``; said to be unrecorded when there is none)."""
    lines = report.splitlines()
    results = report.split("\n## Results\n", 1)[-1].split("\n## ", 1)[0]  # not the settings'
    table = [line for line in results.splitlines() if line.startswith("|")]
    best = next((line for line in lines if line.startswith("**Closest to retraining")), "")
    relative = RESULTS.relative_to(ROOT)
    parts = [f"![benchmark plot]({relative}/benchmark.png)", "", *table, "", best]
    if rerun:
        parts += ["", rerun]
    audits = report.split("\n## Audits: does the unlearning hold?\n", 1)
    if len(audits) == 2:  # the forget table of the audits and their plot
        section = audits[1].split("\n## ", 1)[0].split("Retain values before", 1)[0]
        rows = [line for line in section.splitlines() if line.startswith("|")]
        parts += [
            "",
            "Does the unlearning hold? In the first training run (the audits run on it alone), "
            "each model's forget value before and after relearning on a "
            "slice of the forget set and after 8- and 4-bit quantization; excess: how far above "
            "the retrained model's value after the same audit (settings in the full report).",
            "",
            f"![audits plot]({relative}/audits.png)",
            "",
            *rows,
        ]
    report_link = f"Full report: [{relative}/report.md]({relative}/report.md)."
    if run is not None:
        parts += [
            "",
            f"Measured: {run['seconds'] / 60:.1f} minutes on {run['cpu_count']} CPU cores "
            f"({run['processor']}, `{run['kernels']}` kernels). {report_link}",
        ]
    else:
        parts += [
            "",
            f"Run time: not recorded (`{relative}/run.json` is written by a run). {report_link}",
        ]
    return "\n".join(parts)
