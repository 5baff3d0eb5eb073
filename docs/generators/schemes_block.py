"""The watermarking guide's "Choosing a scheme" table: every data owner's scheme at our scale
beside the paper's Table 5, rendered from the committed scheme comparison (``waterdrum
reproduce --schemes waterfall kgw synthid exp_edit --output-dir benchmarks/results/schemes``);
``docs/generators/update_docs.py`` writes it."""

from __future__ import annotations

import json
import re
from typing import Any

from doc_blocks import RESULTS

from waterdrum_hf.experiments.reproduction.comparison import PAPER_TABLE_5, SCHEME_LABELS
from waterdrum_hf.experiments.reproduction.markdown_parts import (
    AUROC_RANGE,
    R2_RANGE,
    over_seeds,
)

SCHEMES = RESULTS / "schemes"
SETTING = "no_duplicate"


def render_schemes() -> str:
    """The block from ``results.json`` and the command line of ``results.md``."""
    for name in ("results.json", "results.md"):
        if not (SCHEMES / name).is_file():
            raise SystemExit(f"{SCHEMES / name} does not exist: run the command in this module")
    header = (SCHEMES / "results.md").read_text()
    command = re.search(r"Command: `([^`]+)`\. Machine: ([^.]+)\.", header)
    if command is None:
        raise SystemExit(f"{SCHEMES / 'results.md'} names no command and machine")
    results = json.loads((SCHEMES / "results.json").read_text())
    return render(results, command.group(1), command.group(2))


def render(results: dict[str, Any], command: str, machine: str) -> str:
    """One row per scheme: D1 AUROC and D2 R² (mean [t interval] over seeds) beside the paper's, the
    null-corrected R², the forget value of the retrained model (where an unwatermarked text
    reads), and the verification time per text beside the paper's."""
    seeds = len(results["config"]["seeds"])
    minutes = results["seconds"]["total"] / 60
    lines = [
        f"`{command}` ({minutes:.1f} minutes on {machine}; {seeds} seeds, each value the mean "
        "over them [its 95 % Student's t interval, cut to the range the measure can take]; the "
        "built-in corpus and small model; the paper's numbers are WaterDrum-Ax on Llama-2-7B):",
        "",
        "| scheme | D1 AUROC (ours / paper) | D2 R² (ours / paper) | D2 R², null-corrected "
        "(ours) | retrained model's forget value (ours) | verification per text (ours, CPU / "
        "paper) | paper's verification needs a GPU |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, settings in results["schemes"].items():
        run = settings[SETTING]
        auroc, r2, time, gpu = PAPER_TABLE_5[name]
        forget = run["curve"]["waterdrum"]
        lines.append(
            f"| {SCHEME_LABELS[name]} "
            f"| {_cell(run, 'auroc', seeds)} / {auroc} "
            f"| {_cell(run, 'r2', seeds)} / {r2} "
            f"| {_cell(run, 'r2', seeds, 'waterdrum_null_corrected')} "
            f"| {over_seeds(forget['mean'][0], forget['std'][0], seeds, (-1.0, 1.0))} "
            f"| {1000 * run['verify_seconds_per_text']:.2f} ms / {time} "
            f"| {gpu} |"
        )
    return "\n".join(lines)


def _cell(run: dict[str, Any], what: str, seeds: int, value: str = "waterdrum") -> str:
    bounds = AUROC_RANGE if what == "auroc" else R2_RANGE
    return over_seeds(run[what][value], run[what + "_std"][value], seeds, bounds)
