"""Repeated timing for the benchmarks: warm-up runs, then repeats, reported as median and
range; the thread counts set explicitly; the results written by the script that measured them.

Every timing benchmark under ``benchmarks/`` uses this module, so that each published speed is
the median of several runs with its spread beside it, and comes from a results file the script
wrote (``benchmarks/results/<name>.json``), never from a hand edit.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Timing:
    """Seconds of each timed repeat (warm-up runs excluded)."""

    seconds: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def low(self) -> float:
        return min(self.seconds)

    @property
    def high(self) -> float:
        return max(self.seconds)

    def rate(self, amount: float) -> Timing:
        """``amount`` per second of each repeat, as a Timing of rates (median/min/max apply)."""
        return Timing(tuple(amount / s for s in self.seconds))

    def per(self, amount: float) -> Timing:
        """Each repeat's seconds divided by ``amount`` (time per item)."""
        return Timing(tuple(s / amount for s in self.seconds))

    def describe(self, unit: str = "s", digits: int = 3) -> str:
        """``median unit (min-max, n repeats)``."""
        return (
            f"{self.median:.{digits}f} {unit} ({self.low:.{digits}f}-{self.high:.{digits}f}, "
            f"{len(self.seconds)} repeats)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"median": self.median, "min": self.low, "max": self.high, "runs": self.seconds}


def repeat(run: Callable[[], object], repeats: int, warmup: int = 1) -> Timing:
    """Call ``run`` ``warmup`` times untimed, then ``repeats`` times timed."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats}, {warmup}")
    for _ in range(warmup):
        run()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return Timing(tuple(seconds))


def interleaved(
    runs: dict[str, Callable[[], object]], repeats: int, warmup: int = 1
) -> dict[str, Timing]:
    """Like ``repeat`` for several settings, taking turns, so that a slow spell of a shared
    machine falls on every setting alike rather than on one."""
    for _ in range(warmup):
        for run in runs.values():
            run()
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - start)
    return {name: Timing(tuple(values)) for name, values in seconds.items()}


def add_arguments(parser: argparse.ArgumentParser, repeats: int = 5, threads: int = 2) -> None:
    """The options every timing benchmark shares."""
    parser.add_argument("--repeats", type=int, default=repeats, help="timed runs per setting")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs before them")
    parser.add_argument("--threads", type=int, default=threads, help="torch and numba threads")
    parser.add_argument(
        "--results", type=Path, help="results file (default: benchmarks/results/<script>.json)"
    )


def set_threads(threads: int) -> None:
    """Fix torch's and numba's thread counts (before anything is timed)."""
    import torch

    torch.set_num_threads(threads)
    try:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    except ImportError:  # numba is optional: the numpy fallback has no threads
        pass


def machine() -> dict[str, Any]:
    """What the timings ran on."""
    return {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
    }


def write_results(
    args: argparse.Namespace, script: str, results: dict[str, Any], lines: list[str]
) -> Path:
    """Print ``lines`` and write them with ``results``, the command and the machine to the
    script's results file; returns its path."""
    path = args.results or RESULTS / f"{Path(script).stem}.json"
    record = {
        "command": " ".join(["python", f"benchmarks/{Path(script).name}", *sys.argv[1:]]),
        "machine": machine(),
        "repeats": args.repeats,
        "warmup": args.warmup,
        "threads": args.threads,
        "results": results,
        "printed": lines,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n")
    print("\n".join(lines))
    print(f"written: {path}")
    return path
