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

from demo_block import RESULTS, RUN


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
    from update_docs import BLOCKS  # the demo block among them (demo_block.py)

    print("rewritten:", ", ".join(update(BLOCKS)) or "nothing (every block was up to date)")


if __name__ == "__main__":
    main()
