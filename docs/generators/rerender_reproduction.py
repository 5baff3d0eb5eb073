"""Rewrite the committed reproduction results (``results.md``) from their ``results.json``.

``waterdrum reproduce`` writes both at the end of a run (about 55 minutes for ``reproduction/`` from an empty cache);
when only the wording of ``results.md`` changes (a renamed flag in its command line, a
sentence), this renders it again from the committed numbers, with the command rebuilt from
the recorded config (``reproduce_command``), so no number is touched by hand.

    python docs/generators/rerender_reproduction.py     # seconds

A run made before results recorded their machine has it added to ``results.json`` once, read
from the heading of the ``results.md`` it wrote then ("Machine: x86_64, 2 CPU cores.").
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from doc_blocks import ROOT

from waterdrum_hf.experiments.reproduction import ReproductionConfig
from waterdrum_hf.experiments.reproduction.comparison import comparison_markdown
from waterdrum_hf.experiments.reproduction.results_markdown import markdown
from waterdrum_hf.report.files import json_text
from waterdrum_hf.scripts.reproduce import reproduce_command

RESULTS = ROOT / "benchmarks" / "results"
RUNS = ("reproduction", "reproduction_qa", "substitution", "schemes")
MACHINE = re.compile(r"Machine: (\S+), (\d+) CPU cores\.")


def as_run_held(value: Any) -> Any:
    """``results.json`` as the run held it: its ``null`` numbers were NaN (the config's
    ``None`` stays)."""
    if isinstance(value, dict):
        return {k: v if k == "config" else as_run_held(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_run_held(v) for v in value]
    return math.nan if value is None else value


def rerender(folder: Path) -> bool:
    """Render ``folder``'s results.md again; whether it changed."""
    saved = json.loads((folder / "results.json").read_text())
    old = (folder / "results.md").read_text()
    if "machine" not in saved:
        found = MACHINE.search(old)
        if found is None:
            raise SystemExit(f"{folder}/results.md names no machine and results.json has none")
        saved["machine"] = {"machine": found[1], "cpu_count": int(found[2])}
        (folder / "results.json").write_text(json_text(saved))
    config = ReproductionConfig(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in saved["config"].items()}
    )
    results = as_run_held(saved)
    render = comparison_markdown if "schemes" in results else markdown
    text = render(results, command=reproduce_command(config))
    (folder / "results.md").write_text(text)
    return text != old


def main() -> None:
    for name in RUNS:
        changed = rerender(RESULTS / name)
        print(f"{name}/results.md: {'rewritten' if changed else 'unchanged'}")


if __name__ == "__main__":
    main()
