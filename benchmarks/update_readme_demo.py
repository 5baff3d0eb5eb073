"""Run the full ``waterdrum demo`` and put its benchmark plot and summary into the README.

    python benchmarks/update_readme_demo.py            # run the demo (cached stages reused)
    python benchmarks/update_readme_demo.py --no-run   # only re-render from an earlier run

It then runs the demo's first run again (one run, seed 0) in a child process under other CPU
kernels than this process's (AVX2 pinned where this machine has others, else PyTorch's plain
kernels with MKL's processor-independent path) and keeps that run's ``report.json`` and
``run.json`` in ``demo/other_kernels/``: how far the values move on another processor, with
the same built-in model (it ships with the package).

The demo writes to ``benchmarks/results/demo`` (its ``cache/`` is git-ignored) and its run
time to ``run.json`` there; then every generated block of the documentation is rewritten
(``python docs/generators/update_docs.py``, run as a command): the README's ``demo-report`` block gets the plot, the results
table and the best method of ``report.md``, the audits' forget table and plot, with the
measured time and the machine, so the README never shows numbers pasted by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "demo"
RUN = RESULTS / "run.json"
OTHER_KERNELS = RESULTS / "other_kernels"
"""Where the demo block (``docs/generators/demo_block.py``) reads the other kernels' run."""

PLAIN_KERNELS = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-run", action="store_true", help="re-render from the last run only")
    args = parser.parse_args()
    if not args.no_run:
        from waterdrum_hf.experiments.demo import DemoConfig, run_demo
        from waterdrum_hf.tiny import BUILD_KERNELS
        from waterdrum_hf.utils.torch_plumbing import cpu_kernels

        start = time.perf_counter()
        run_demo(DemoConfig(output_dir=str(RESULTS), show_progress=False))
        record(RUN, time.perf_counter() - start, cpu_kernels())
        other = BUILD_KERNELS if not cpu_kernels().startswith("avx2") else PLAIN_KERNELS
        run_under_other_kernels(other)
    if not (RESULTS / "report.md").is_file():
        raise SystemExit(f"{RESULTS / 'report.md'} does not exist: run without --no-run first")
    subprocess.run(
        [sys.executable, str(ROOT / "docs" / "generators" / "update_docs.py")], check=True
    )


def record(path: os.PathLike[str], seconds: float, kernels: str) -> None:
    """Write a run's time and machine (cores, processor, CPU kernels) to ``path``."""
    machine = {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "kernels": kernels,
    }
    with open(path, "w", encoding="utf-8") as file:
        file.write(json.dumps({"seconds": seconds, **machine}, indent=1) + "\n")


def run_under_other_kernels(kernels: dict[str, str]) -> None:
    """The demo's first run (one run, seed 0) under ``kernels``, in a child process (PyTorch
    reads its variable at import); its report.json and run.json go to ``OTHER_KERNELS``."""
    code = "import sys; from waterdrum_hf.scripts import main; sys.exit(main(sys.argv[1:]))"
    probe = "from waterdrum_hf.utils.torch_plumbing import cpu_kernels; print(cpu_kernels())"
    env = {**os.environ, **kernels}
    with tempfile.TemporaryDirectory() as scratch:
        start = time.perf_counter()
        argv = ["demo", "--num-seeds", "1", "--seed", "0", "--output_dir", scratch]
        subprocess.run([sys.executable, "-c", code, *argv, "--show_progress", "false"],
                       env=env, check=True)  # fmt: skip
        seconds = time.perf_counter() - start
        OTHER_KERNELS.mkdir(exist_ok=True)
        shutil.copy(os.path.join(scratch, "report.json"), OTHER_KERNELS / "report.json")
    named = subprocess.run([sys.executable, "-c", probe], env=env, check=True,
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    record(OTHER_KERNELS / "run.json", seconds, named)


if __name__ == "__main__":
    main()
