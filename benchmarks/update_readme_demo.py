"""Run the full ``waterdrum demo`` and put its benchmark plot and summary into the README.

    python benchmarks/update_readme_demo.py            # run the demo (cached stages reused)
    python benchmarks/update_readme_demo.py --no-run   # only re-render from an earlier run

The demo writes to ``benchmarks/results/demo`` (its ``cache/`` is git-ignored); the README's
block between the ``demo-report`` markers is replaced by the plot, the results table and the
best method of ``report.md``, the audits' forget table and plot, with the measured time and the machine, so the README never
shows numbers pasted by hand.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "demo"
START, END = "<!-- demo-report:start -->", "<!-- demo-report:end -->"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-run", action="store_true", help="re-render from the last run only")
    args = parser.parse_args()
    seconds = None
    if not args.no_run:
        from waterdrum_hf.experiments.demo import DemoConfig, run_demo

        start = time.perf_counter()
        run_demo(DemoConfig(output_dir=str(RESULTS), show_progress=False))
        seconds = time.perf_counter() - start
    summary = RESULTS / "report.md"
    if not summary.is_file():
        raise SystemExit(f"{summary} does not exist: run without --no-run first")
    readme = ROOT / "README.md"
    text = readme.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"README.md has no {START} ... {END} block")
    head, rest = text.split(START, 1)
    previous = re.search(r"^Measured: .*$", rest.split(END, 1)[0], re.MULTILINE)
    block = render(summary.read_text(), seconds, previous.group(0) if previous else None)
    readme.write_text(head + START + "\n" + block + "\n" + END + rest.split(END, 1)[1])
    print(f"README.md updated from {summary}")


def render(report: str, seconds: float | None, measured: str | None) -> str:
    """The README excerpt: plot, table, verdict line, and the run's time and machine (a new
    measurement after a run, else the one the README already had)."""
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
    if seconds is not None:
        cores = os.cpu_count()
        parts += [
            "",
            f"Measured: {seconds / 60:.1f} minutes on {cores} CPU cores "
            f"({platform.processor() or platform.machine()}), tiny model already cached. "
            f"Full report: [{relative}/report.md]({relative}/report.md).",
        ]
    elif measured:
        parts += ["", measured]
    return "\n".join(parts)


if __name__ == "__main__":
    main()
