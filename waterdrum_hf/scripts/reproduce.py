"""``waterdrum reproduce``: the paper's claims at small scale.

Reproduce the paper's separability (D1), calibration (D2), benchmark and resilience experiments
under the three similarity settings, on the built-in corpus and small model (a CPU suffices) or
on WaterDrum-Ax / WaterDrum-TOFU with --model-name-or-path and --watermark-tokenizer. Writes results.json,
results.md and plots into --output-dir; every model is cached there, so runs resume. Every
ReproductionConfig field is a flag; with --schemes the defaults are a scheme comparison's.
"""

from __future__ import annotations

import sys

from waterdrum_hf.experiments.reproduction.config import ReproductionConfig
from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.files import (
    OverwriteArguments,
    check_finished_report,
    check_output_folder,
)
from waterdrum_hf.scripts.parser import ScriptParser
from waterdrum_hf.scripts.scoring_arguments import check_null_keys
from waterdrum_hf.utils.fields import shortest_command

RESUMES = True
"""Every model is cached in the output folder: an interrupted run resumes."""


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser(
        (ReproductionConfig, OverwriteArguments),
        prog=prog,
        description=__doc__,
        quick_defaults=ReproductionConfig.QUICK,
    )


def main(config: ReproductionConfig, existing: OverwriteArguments) -> int:
    from dataclasses import asdict
    from pathlib import Path

    from waterdrum_hf.experiments.reproduction import run_reproduction

    check_output_folder(config.output_dir, "--output-dir")
    check_finished_report(
        Path(config.output_dir) / "results.json",
        "config",
        asdict(config),
        overwrite=existing.overwrite,
        ignored=("output_dir", "show_progress"),
    )
    queries = config.owners * (config.passages_per_owner + config.holdout_per_owner)
    check_null_keys(config.null_keys, queries * config.num_samples)  # the toy corpus's count
    results = run_reproduction(
        config, log=lambda line: print(line, flush=True), command=reproduce_command(config)
    )
    for scheme, per_setting in results.get("schemes", {}).items():
        for setting, summary in per_setting.items():
            print(
                f"{scheme:>10} {setting}: WaterDrum AUROC {summary['auroc']['waterdrum']:.3f}, "
                f"R² {summary['r2']['waterdrum']:.3f}; verification "
                f"{1000 * summary['verify_seconds_per_text']:.2f} ms per text"
            )
    for setting, summary in results.get("settings", {}).items():
        print(
            f"{setting:>20}: WaterDrum AUROC {summary['auroc']['waterdrum']:.3f}, R² {summary['r2']['waterdrum']:.3f}; "
            f"ROUGE-L AUROC {summary['auroc']['rouge_l']:.3f}"
        )
    print(
        f"Results: {config.output_dir}/results.md ({results['seconds']['total'] / 60:.1f} minutes)"
    )
    return 0


def reproduce_command(config: ReproductionConfig) -> str:
    """The shortest ``waterdrum reproduce`` command that runs ``config`` (results.md names it,
    so a reader can run it again, whether it came from flags or a ``--config`` file)."""
    comparison = ReproductionConfig.COMPARISON if config.schemes else {}
    return shortest_command(["waterdrum", "reproduce"], config, comparison)


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum reproduce"))
