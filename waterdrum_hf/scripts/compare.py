"""``waterdrum compare``: models compared over several training runs (seeds), from the reports
``waterdrum score`` (or ``waterdrum demo``) wrote.

Give the report of every run with --reports (report.json, or the folder holding it, as
`waterdrum score --output-dir` writes it); a model's runs are its entries in the reports in the order
given, so give each seed's reports in the same order for every model (run i of every model
shares seed i: differences are then paired). A demo report with several runs counts as all of
them. Prints each model's mean over its runs with Student's t interval over runs (it covers a
rerun, where one run's interval over queries does not), the distance of each method to the
retrained model, and the method closest to retraining only when the runs separate it from every
other; else the methods that tie. Reports scored differently (other samples per query, query
length, tokens per sample, scheme, pooling or null, as each report's ``settings`` records them)
are refused: their values do not measure the same thing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from waterdrum_hf.scoring.seed_comparison import SeedComparison
from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.files import check_output_file
from waterdrum_hf.scripts.parser import CliError, ScriptParser
from waterdrum_hf.utils.fields import flag


@dataclass
class CompareArguments:
    """The reports of the runs, and how their models are compared."""

    reports: list[str] = flag(help="report.json files or folders holding one, every run's.")
    confidence: float = flag(0.95, "Level of every interval (0 to 1).")
    unpaired: bool = flag(
        False, "The runs of different models share no seed: Welch's unpaired intervals."
    )
    reference: str = flag("retrained", "The model unlearning should match.")
    baseline: str = flag("original", "The model unlearning starts from (not ranked).")
    output_file: str | None = flag(None, "Also write the comparison's flat values to this JSON.")
    overwrite: bool = flag(False, "Replace an existing --output-file.")


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser((CompareArguments,), prog=prog, description=__doc__)


def main(args: CompareArguments) -> int:
    from waterdrum_hf.report import json_text
    from waterdrum_hf.scoring.seed_comparison import compare_seeds

    if args.output_file:
        check_output_file(args.output_file, "--output-file", overwrite=args.overwrite)
    runs = read_runs(args.reports)
    comparison = compare_seeds(
        runs,
        confidence=args.confidence,
        paired=not args.unpaired,
        reference=args.reference,
        baseline=args.baseline,
    )
    print_comparison(comparison)
    for line in single_run_detection(comparison, runs):
        print(line)
    if args.output_file:
        Path(args.output_file).write_text(json_text(comparison.to_dict()))
        print(f"Comparison: {args.output_file}")
    return 0


SCORED_WITH = ("num_samples", "prefix_tokens", "max_new_tokens")
"""The settings of a report (besides its scoring configuration) that its values depend on."""


def read_runs(paths: Sequence[str]) -> dict[str, list[Any]]:
    """Each model's results over the reports, in the order given (a report's ``runs``, where it
    has them, else its ``models``); reports scored differently are refused."""
    runs: dict[str, list[Any]] = {}
    recorded: dict[str, tuple[str, Any]] = {}  # each setting: the first report giving it
    for given in paths:
        path = Path(given)
        file = path / "report.json" if path.is_dir() else path
        if not file.is_file():
            raise CliError(f"{given}: no such report (a report.json or a folder holding one)")
        try:
            report = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise CliError(f"{given}: not a JSON report ({error})") from None
        if not isinstance(report, dict) or not isinstance(report.get("models"), dict):
            raise CliError(f"{given}: not a WaterDrum report (it has no 'models')")
        check_scored_alike(recorded, given, scored_with(report))
        check_named(report, given)
        own = report.get("runs") or {name: [m] for name, m in report["models"].items()}
        for name, results in own.items():
            runs.setdefault(name, []).extend(results)
    return runs


def check_named(report: dict[str, Any], path: str) -> None:
    """Refuse a ``waterdrum score`` report whose model kept the default name: runs are grouped
    by name, so every unnamed model would be one method called "model"."""
    from waterdrum_hf.scripts.score import ScoreArguments

    default = ScoreArguments.name
    if (report.get("settings") or {}).get("name") == default and default in report["models"]:
        raise CliError(
            f"{path}: its model has the default name {default!r}; score it with --name "
            "METHOD (the same name in every run's report) to compare it"
        )


def scored_with(report: dict[str, Any]) -> dict[str, Any]:
    """What a report's values depend on, from its ``settings``: :data:`SCORED_WITH` and the
    scoring configuration but its intervals (which move no value). Settings a report does not
    record are left out (a report written by hand records none)."""
    settings = report.get("settings") or {}
    scored = {key: settings[key] for key in SCORED_WITH if key in settings}
    scoring = settings.get("scoring")
    if isinstance(scoring, dict):
        scored.update({f"scoring.{k}": v for k, v in scoring.items() if k != "interval"})
    return scored


def check_scored_alike(
    recorded: dict[str, tuple[str, Any]], path: str, scored: dict[str, Any]
) -> None:
    """Refuse the report at ``path`` if a setting differs from the first report that recorded
    it (``recorded``, which gains the settings seen first here)."""
    for key, value in scored.items():
        first, known = recorded.setdefault(key, (path, value))
        if known != value:
            raise CliError(
                f"{path} was scored with other settings than {first} ({key}: {value!r} "
                f"there, {known!r} here): values scored differently cannot be compared; score "
                "both the same way"
            )


def single_run_detection(comparison: SeedComparison, runs: dict[str, list[Any]]) -> list[str]:
    """Where the verdict rests on one run: whether the forgotten owners' watermark is still
    detected in the run of the method it names (closest is not close enough when it is)."""
    from waterdrum_hf.report.findings import DETECTION_LEVEL, detected
    from waterdrum_hf.scoring import WaterDrumResult

    closest = comparison.closest
    if closest is None or closest.num_seeds != 1:
        return []
    name = closest.names[0]  # the one a one-run verdict names
    forget = WaterDrumResult.from_dict(runs[name][0]).forget
    found = detected(forget)
    if found is None:
        return [
            f"{name}: its report has no null, so whether the forgotten owners' watermark is "
            "still detected is unknown (score it with a null)"
        ]
    assert forget is not None and forget.p_value is not None  # detected() said so
    status = "still detected" if found else "not detected"
    return [
        f"{name}: the forgotten owners' watermark is {status} in its run (forget "
        f"{forget.value:+.3f}, p = {forget.p_value:.3g}; detected at p <= {DETECTION_LEVEL})"
    ]


def print_comparison(comparison: SeedComparison) -> None:
    """Each model's mean over runs with its interval, its distance to the reference, and the
    verdict: the closest method, or the methods that tie."""
    from waterdrum_hf.report.text import runs_cell, value_cell
    from waterdrum_hf.report.verdict import closest_line

    level = f"{100 * comparison.confidence:g}%"
    print(f"Mean over runs [{level} interval over runs; of one run, over its queries]")
    print(f"{'model':>12}  {'forget':>24}  {'retain':>24}  {'distance':>22}  runs")
    for name, sets in comparison.values.items():
        cells = "  ".join(
            f"{value_cell(sets.get(key), '+.3f'):>24}" for key in ("forget", "retain")
        )
        distance = value_cell(comparison.distances.get(name), ".3f")
        print(f"{name:>12}  {cells}  {distance:>22}  {runs_cell(sets)}")
    if comparison.closest is not None:
        print()
        print(closest_line(comparison).replace("**", "").replace("`", ""))


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum compare"))
