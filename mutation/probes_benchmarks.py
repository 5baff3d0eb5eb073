"""Probes of the benchmark renderers' and studies' uncounted mutants (``docs/generators/*_block.py``,
``doc_blocks.py``, ``capacity.py``, ``dilution.py``, ``robustness.py``): see
``probes.py``. Each script is imported as the runner imported it
(``benchmarks.<name>`` or ``docs.generators.<name>``, with their folders on the path for the
scripts' own imports)."""

from __future__ import annotations

import importlib
import json
import math
from pathlib import Path
from typing import Any

from probe_kit import each

_B = "benchmarks."
_G = "docs.generators."
GENERATORS = {"trust_block", "doc_blocks", "demo_block", "gpu_block", "schemes_block"}
"""The documentation's generators (``docs/generators/``); the rest are studies of ``benchmarks/``."""


def _script(name: str) -> Any:
    return importlib.import_module((_G if name in GENERATORS else _B) + name)


def _exits(call: Any) -> Any:
    """``call``, with a SystemExit (a script's refusal, not an Exception) read as its type."""

    def run() -> Any:
        try:
            return call()
        except SystemExit:
            return "SystemExit"

    return run


def correlation(tmp: Path) -> Any:
    """The capacity correlation's sentence: four cells (one without a finite R²), two cells,
    and the committed study's."""
    trust = _script("trust_block")

    def cells(*pairs: tuple[float, float]) -> dict:
        return {"summary": [{"carry_over": {"mean": x}, "r2": {"mean": y}} for x, y in pairs]}

    return each(
        lambda: trust.correlation(cells((0.1, 0.5), (0.2, 0.7), (math.nan, 0.9), (0.4, 0.6))),
        lambda: trust.correlation(cells((0.1, 0.5), (0.2, 0.7))),
        lambda: trust.correlation(trust.load("capacity"), "nll"),
    )


def read_block(tmp: Path) -> Any:
    """A block, one whose end comes before its start, and texts with a marker missing or
    repeated."""
    blocks = _script("doc_blocks")
    start, end = "<!-- x:start -->", "<!-- x:end -->"
    return each(
        lambda: blocks.read_block(f"a\n{start}\n\n b \n\n{end}\nc {start[:-1]}", "x"),
        lambda: blocks.read_block(f"a {end} b {start} c", "x"),
        lambda: blocks.read_block(f"{start}{end}{end}", "x"),
        lambda: blocks.read_block("no markers", "x"),
    )


def replace_block(tmp: Path) -> Any:
    """A block replaced, one whose end comes before its start, a repeated marker."""
    blocks = _script("doc_blocks")
    start, end = "<!-- x:start -->", "<!-- x:end -->"
    return each(
        lambda: blocks.replace_block(f"a\n{start}\nold\n{end}\nb {end[:-1]}", "x", "new"),
        lambda: blocks.replace_block(f"a {end} b {start} c", "x", "new"),
        lambda: blocks.replace_block(f"{start}{start}{end}", "x", "new"),
    )


_REPORTS = (
    "\n".join(
        [
            "# Demo",
            "## Settings",
            "| s | v |",
            "## Results",
            "| model | forget |",
            "| a | 1 |",
            "**Closest to retraining:** `a`.",
            "## Audits: does the unlearning hold?",
            "| model | forget before |",
            "| a | 0.1 |",
            "Retain values before and after:",
            "| model | retain |",
            "Retain values before, again:",
            "| model | again |",
            "## Plots",
            "| p | x |",
            "## Results",
            "| late | 2 |",
            "## Audits: does the unlearning hold?",
            "| late |",
            "",
        ]
    ),  # fmt: skip
    "## Results\n| m |\n## Audits: does the unlearning hold?\n| f |\n## Plots\n| p |\n## M\n",
    "| model | forget |\n| a | 1 |\n",
)


def demo_render(tmp: Path) -> Any:
    """The demo block of the committed report and of reports with repeated headings, an
    audits section without a retain table, and no sections."""
    demo = _script("demo_block")
    committed = (demo.RESULTS / "report.md").read_text(encoding="utf-8")
    run = {"seconds": 90, "cpu_count": 2, "processor": "x86_64"}
    return each(
        lambda: demo.render(committed, run, "Moved."),
        *(lambda report=report: demo.render(report, None) for report in _REPORTS),
    )


def _floors(tmp: Path) -> Path:
    floors = tmp / "floors.txt"
    floors.write_text("# pins (torch==2.13.0 first)\nnumpy==1.25.0\ntorch==2.13.0\n# torch\n")
    return floors


def versions(tmp: Path) -> Any:
    """The committed runs' versions against the committed floors and against a floors file
    with comments."""
    gpu = _script("gpu_block")
    committed = gpu.versions()
    for run in gpu.RUNS:
        (tmp / run).mkdir()
        versions = {"torch": "2.11.0", "transformers": "5.17.0", "waterdrum-hf": "0.9.0"}
        (tmp / run / "results.json").write_text(json.dumps({"environment": {"versions": versions}}))
    gpu.RESULTS, gpu.FLOORS = tmp, _floors(tmp)  # this process only
    return [committed, gpu.versions()]


def attacked(tmp: Path) -> Any:
    """Samples of three queries (one with none) after a deletion, and unedited."""
    robustness = _script("robustness")
    samples = [["one two three four", "five six"], [], ["seven eight nine", "ten", "eleven"]]
    return each(
        lambda: robustness.attacked(samples, "deletion", 0.5, 3, {}),
        lambda: robustness.attacked(samples, "none", 0.5, 3, {}),
        lambda: robustness.attacked([], "deletion", 0.5, 3, {}),
    )


def plan(tmp: Path) -> Any:
    """The capacity plans: quick, full, and each refusal."""
    capacity = _script("capacity")
    return each(
        lambda: capacity.Plan.of(True, 3),
        lambda: capacity.Plan.of(False, 3),
        lambda: capacity.Plan.of(False, 3, ("4m",)),
        lambda: capacity.Plan.of(False, 0, ("1m",)),
    )


def render_schemes(tmp: Path) -> Any:
    """A folder without results, then one whose results.md names no command."""
    schemes = _script("schemes_block")
    schemes.SCHEMES = tmp  # this process only
    missing = each(_exits(schemes.render_schemes))
    (tmp / "results.json").write_text("{}")
    (tmp / "results.md").write_text("# Schemes\n")
    return [missing, each(_exits(schemes.render_schemes))]


def trust_files(tmp: Path) -> Any:
    """A study's results missing: refused."""
    trust = _script("trust_block")
    trust.RESULTS = tmp  # this process only
    return each(
        _exits(lambda: trust.load("capacity")),
        _exits(lambda: trust.table_rows(tmp / "d" / "results.md")),
    )


def capacity_plot(tmp: Path) -> Any:
    """The committed capacity study's figure (the PNG's bytes are the files compared)."""
    capacity = _script("capacity")
    results = json.loads((capacity.RESULTS / "results.json").read_text())
    capacity.plot(results, tmp / "capacity.png")
    return "capacity.png"


def robustness_plot(tmp: Path) -> Any:
    """The committed robustness study's figure, and one scheme's alone."""
    robustness = _script("robustness")
    results = json.loads((robustness.RESULTS / "results.json").read_text())
    robustness.plot(results, tmp / "both.png")
    results["plan"]["schemes"] = results["plan"]["schemes"][:1]
    robustness.plot(results, tmp / "one.png")
    return ["both.png", "one.png"]


PROBES = {
    _B + "capacity.x_plot": capacity_plot,
    _B + "robustness.x_plot": robustness_plot,
    _G + "trust_block.x_correlation": correlation,
    _G + "trust_block.x_load": trust_files,
    _G + "trust_block.x_table_rows": trust_files,
    _G + "doc_blocks.x_read_block": read_block,
    _G + "doc_blocks.x_replace_block": replace_block,
    _G + "demo_block.x_render": demo_render,
    _G + "gpu_block.x_versions": versions,
    _B + "robustness.x_attacked": attacked,
    _B + "capacity.xǁPlanǁof": plan,
    _G + "schemes_block.x_render_schemes": render_schemes,
}
