"""Run the full ``waterdrum demo`` and put its benchmark plot and summary into the README.

    python benchmarks/update_readme_demo.py            # run the demo (cached stages reused)
    python benchmarks/update_readme_demo.py --no-run   # only re-render from an earlier run

The demo writes to ``benchmarks/results/demo`` (its ``cache/`` is git-ignored) and its run
time to ``run.json`` there; then every generated block of the documentation is rewritten
(``benchmarks/update_docs.py``): the README's ``demo-report`` block gets the plot, the results
table and the best method of ``report.md``, the audits' forget table and plot, with the
measured time and the machine, so the README never shows numbers pasted by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "demo"
RUN = RESULTS / "run.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-run", action="store_true", help="re-render from the last run only")
    args = parser.parse_args()
    if not args.no_run:
        from waterdrum_hf.experiments.demo import DemoConfig, run_demo

        start = time.perf_counter()
        run_demo(DemoConfig(output_dir=str(RESULTS), show_progress=False))
        seconds = time.perf_counter() - start
        machine = {
            "cpu_count": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
        }
        RUN.write_text(json.dumps({"seconds": seconds, **machine}, indent=1) + "\n")
    if not (RESULTS / "report.md").is_file():
        raise SystemExit(f"{RESULTS / 'report.md'} does not exist: run without --no-run first")
    from doc_blocks import update
    from update_docs import BLOCKS

    print("rewritten:", ", ".join(update(BLOCKS)) or "nothing (every block was up to date)")


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


if __name__ == "__main__":
    main()
