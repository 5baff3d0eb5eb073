"""The README's demo block: the full demo's plot, results table, best method and audits, with
its measured run time, from the committed ``benchmarks/results/demo`` (``python
benchmarks/update_readme_demo.py`` runs the demo; ``benchmarks/update_docs.py`` writes the
block)."""

from __future__ import annotations

import json
from typing import Any

from doc_blocks import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "demo"
RUN = RESULTS / "run.json"


def render_demo() -> str:
    """The README's demo block from the committed ``report.md`` and ``run.json``."""
    run = json.loads(RUN.read_text()) if RUN.is_file() else None
    return render((RESULTS / "report.md").read_text(), run)


def render(report: str, run: dict[str, Any] | None) -> str:
    """The README excerpt: plot, table, verdict line, and the run's time and machine (from
    ``run.json``; said to be unrecorded when there is none)."""
    lines = report.splitlines()
    results = report.split("\n## Results\n", 1)[-1].split("\n## ", 1)[0]  # not the settings'
    table = [line for line in results.splitlines() if line.startswith("|")]
    best = next((line for line in lines if line.startswith("**Closest to retraining")), "")
    relative = RESULTS.relative_to(ROOT)
    parts = [f"![benchmark plot]({relative}/benchmark.png)", "", *table, "", best]
    audits = report.split("\n## Audits: does the unlearning hold?\n", 1)
    if len(audits) == 2:  # the forget table of the audits and their plot
        section = audits[1].split("\n## ", 1)[0].split("Retain values before", 1)[0]
        rows = [line for line in section.splitlines() if line.startswith("|")]
        parts += [
            "",
            "Does the unlearning hold? Each model's forget value before and after relearning on a "
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
            f"({run['processor']}), tiny model already cached. {report_link}",
        ]
    else:
        parts += [
            "",
            f"Run time: not recorded (`{relative}/run.json` is written by a run). {report_link}",
        ]
    return "\n".join(parts)
