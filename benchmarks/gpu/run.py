"""Run the GPU measurements (or, with ``--smoke``, all of them on the CPU at a tiny shape).

    python -m benchmarks.gpu --only training,generation --output-dir DIR
    python -m benchmarks.gpu --smoke --output-dir DIR        # every step but fsdp, about a minute

Each step runs within its own time budget (a setting that would start past it is recorded as
skipped), so that one device command stays under 8 minutes; a step that fails is recorded with
its error and the others still run. After every step, ``results.json`` (command, device,
versions, every step's rows) and ``results.md`` (one table per step) are rewritten in ``--output-dir``
(default: ``$OUT``), so a command stopped from outside keeps what it measured.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import shlex
import sys
import time
import traceback
from collections.abc import Callable
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

STEPS = ("training", "generation", "callback", "verification", "score", "fsdp")
"""Every step, in the order to run them; ``fsdp`` runs only when named."""
DEFAULT_STEPS = STEPS[:-1]
PACKAGES = (
    "torch", "transformers", "peft", "accelerate", "trl", "datasets", "evaluate", "waterfall",
    "numba", "numpy", "tokenizers", "waterdrum-hf",
)  # fmt: skip


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        default=",".join(DEFAULT_STEPS),
        help=f"comma-separated steps to run, of {', '.join(STEPS)} (default: all but fsdp)",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="tiny shape on the CPU, every step in about a minute"
    )
    parser.add_argument(
        "--output-dir", default=os.environ.get("OUT"), help="results folder (default: $OUT)"
    )
    parser.add_argument(
        "--budget-scale",
        type=float,
        default=1.0,
        help="multiply every step's time budget (e.g. 0.5 when little device time is left)",
    )
    parser.add_argument("--threads", type=int, help="torch threads (default: 1 with --smoke)")
    parser.add_argument(
        "--batches",
        help="generation's batches in the order to time them, 'auto' among them "
        "(default: auto,32,160)",
    )
    parser.add_argument(
        "--queries-per-owner",
        help="the callback's max_queries_per_owner values, comma-separated (default: 4,16,64)",
    )
    args = parser.parse_args(argv)
    steps = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown or not steps:
        parser.error(f"--only: unknown steps {unknown}; choose from {', '.join(STEPS)}")
    if not args.output_dir:
        parser.error("--output-dir is required where $OUT is not set")
    args.steps = steps
    args.sizes = {}
    try:
        if args.batches:
            args.sizes["batches"] = tuple(
                b if b == "auto" else positive_int(b) for b in split(args.batches)
            )
        if args.queries_per_owner:
            args.sizes["queries_per_owner"] = tuple(
                positive_int(q) for q in split(args.queries_per_owner)
            )
    except ValueError as error:
        parser.error(str(error))
    return args


def split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def versions() -> dict[str, str | None]:
    """Each package's installed version; this library's own from the package itself (it may
    run from a source tree that pip never installed)."""
    import waterdrum_hf

    found: dict[str, str | None] = {}
    for package in PACKAGES:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    found["waterdrum-hf"] = waterdrum_hf.__version__
    return found


def environment(setup: Any, argv: list[str]) -> dict[str, Any]:
    import torch

    device = torch.cuda.get_device_name(setup.device) if setup.cuda else platform.processor()
    return {
        "command": " ".join(shlex.quote(a) for a in ["python", "-m", "benchmarks.gpu", *argv]),
        "device": device or "cpu",
        "device_type": setup.device.type,
        "gpu_memory_gib": (
            torch.cuda.get_device_properties(setup.device).total_memory / 2**30
            if setup.cuda
            else None
        ),
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "shape": setup.shape.name,
        "dtype": str(setup.dtype),
        "smoke": setup.smoke,
        "versions": versions(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def run_step(name: str, setup: Any, scale: float) -> dict[str, Any]:
    """One step within its budget: its result, or its error (the other steps still run)."""
    from benchmarks.gpu.common import Budget, release

    budget = Budget(setup.sizes.budgets[name] * scale)
    step: Callable[..., dict[str, Any]] = import_module(f"benchmarks.gpu.{name}").run
    try:
        result = step(setup, budget)
        result["status"] = "ok"
    except Exception as error:  # recorded, so that the remaining steps still run
        result = {"status": "error", "error": f"{type(error).__name__}: {error}", "rows": []}
        result["traceback"] = traceback.format_exc()[-4000:]
        release(setup.device)
    result["seconds"] = budget.used
    result["budget_s"] = budget.seconds
    return result


def cell(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, list):
        return " ".join(cell(v) for v in value)
    return str(value).replace("|", "/")


def markdown(report: dict[str, Any]) -> str:
    env = report["environment"]
    lines = [
        f"# GPU measurements: {env['device']} ({env['device_type']})",
        "",
        f"Command: `{env['command']}`  ",
        f"Shape {env['shape']}, {env['dtype']}; Python {env['python']}, CUDA {env['cuda']}; "
        + ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v),
        "",
        "| step | status | seconds | budget s | rows |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, step in report["steps"].items():
        lines.append(
            f"| {name} | {step['status']} | {step['seconds']:.1f} | {step['budget_s']:.0f} | "
            f"{len(step['rows'])} |"
        )
    for name, step in report["steps"].items():
        lines += ["", f"## {name}", ""]
        lines += [f"- {note}" for note in step.get("notes", [])]
        if step["status"] != "ok":
            lines.append(f"- error: `{step['error']}`")
        columns = list(dict.fromkeys(key for row in step["rows"] for key in row))
        if columns:
            lines += ["", "| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
            for row in step["rows"]:
                lines.append("| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def write(report: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    (out / "results.md").write_text(markdown(report))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    import torch

    from benchmarks.gpu.common import Setup

    threads = args.threads or (1 if args.smoke else None)
    if threads:
        torch.set_num_threads(threads)
    setup = Setup.create(args.smoke)
    setup.sizes = dataclasses.replace(setup.sizes, **args.sizes)
    report: dict[str, Any] = {"environment": environment(setup, argv), "steps": {}}
    out = Path(args.output_dir)
    for name in args.steps:
        print(f"[{time.strftime('%H:%M:%S')}] {name} ...", flush=True)
        report["steps"][name] = run_step(name, setup, args.budget_scale)
        step = report["steps"][name]
        print(f"[{time.strftime('%H:%M:%S')}] {name}: {step['status']} in {step['seconds']:.1f} s")
        if step["status"] != "ok":
            print(step["traceback"], file=sys.stderr)
        write(report, out)
    print(markdown(report))
    return 0 if all(s["status"] == "ok" for s in report["steps"].values()) else 1
