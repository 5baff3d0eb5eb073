"""``waterdrum demo``: the whole WaterDrum loop and an unlearning benchmark on the small model.

Watermark every owner's passages with its own key, fine-tune the built-in small model on them,
retrain without the forget owners, unlearn them with each method, score every model, and write
a report with plots. Offline; stages are cached in OUT/cache, so a re-run resumes. Every
DemoConfig field is a flag.
"""

from __future__ import annotations

import sys
from typing import Any

from waterdrum_hf.experiments.demo_config import DemoConfig
from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.files import (
    OverwriteArguments,
    check_finished_report,
    check_output_folder,
)
from waterdrum_hf.scripts.parser import ScriptParser
from waterdrum_hf.scripts.scoring_arguments import check_null_keys

RESUMES = True
"""Every stage is cached in the output folder: an interrupted run resumes."""


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser(
        (DemoConfig, OverwriteArguments),
        prog=prog,
        description=__doc__,
        quick_defaults=DemoConfig.QUICK,
    )


UNSCORED = ("output_dir", "write_keys", "show_progress")
"""DemoConfig fields that change no value of the report (a rerun may change them freely)."""


def main(config: DemoConfig, existing: OverwriteArguments) -> int:
    from dataclasses import asdict
    from pathlib import Path

    from waterdrum_hf.experiments.demo import run_demo

    check_output_folder(config.output_dir, "--output-dir")
    check_finished_report(
        Path(config.output_dir) / "report.json",
        "settings",
        asdict(config),
        overwrite=existing.overwrite,
        ignored=UNSCORED,
    )
    check_null_keys(
        config.null_keys, config.owners * config.passages_per_owner * config.num_samples
    )
    report = run_demo(config, log=lambda line: print(line, flush=True))
    print()
    if config.num_seeds > 1:
        from waterdrum_hf.report import run_comparison
        from waterdrum_hf.scripts.compare import print_comparison

        print_comparison(run_comparison(report))
        print(f"\nThe first run (seed {config.seed}) in detail:")
    print_models(report["models"], config.null_keys)
    audits = report.get("audits")
    if audits is not None:
        print_audits(audits)
    print(
        f"\nReport: {config.output_dir}/report.md (total {sum(report['timings'].values()):.0f} s)"
    )
    for line in report["next"]:  # what to run next: score the models from the command line
        print(line)
    return 0


def print_models(models: dict[str, Any], null_keys: int) -> None:
    """Each model's forget and retain values, its separability AUROC and its forget p-value (at
    its precision; a p-value on the floor an empirical null of ``null_keys`` keys sets is
    marked, and the mark said once below the table)."""
    from waterdrum_hf.report.formatting import on_null_floor

    marked = False
    print(f"{'model':>12}  {'forget':>7}  {'retain':>7}  {'AUROC':>6}  forget p-value")
    for name, result in models.items():
        cells = [f"{s.value:+7.3f}" if s else f"{'–':>7}" for s in (result.forget, result.retain)]
        auroc = (
            f"{result.separability_auroc:6.3f}"
            if result.separability_auroc is not None
            else f"{'–':>6}"
        )
        p_value = result.forget.p_value if result.forget else None
        p = "–" if p_value is None else f"{p_value:.2g}"
        if p_value is not None and on_null_floor(p_value, null_keys):
            p, marked = f"{p_value:.2g}*", True
        print(f"{name:>12}  {cells[0]}  {cells[1]}  {auroc}  {p}")
    if marked:
        print(
            f"* the smallest p-value {null_keys} null keys can give, 1 / (1 + {null_keys}): "
            "those models are not ranked by it"
        )


def print_audits(audits: Any) -> None:
    """Each model's forget value before and after each audit, with its excess over the
    retrained model's after the same audit."""
    names = audits.audits()
    print("\nAudits: forget value before and after each (excess over the retrained model)")
    print(f"{'model':>12}  {'before':>7}" + "".join(f"  {name:>17}" for name in names))
    for model in audits.models:
        cells = []
        for name in names:
            value, excess = audits.forget(model, name), audits.excess(model, name)
            shown = "–" if value is None else f"{value:+.3f}"
            if excess is not None and model != audits.retrained:
                shown += f" ({excess:+.3f})"
            cells.append(f"  {shown:>17}")
        before = audits.forget(model, "before")
        print(f"{model:>12}  {'–' if before is None else f'{before:+7.3f}':>7}" + "".join(cells))


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum demo"))
