"""``waterdrum reproduce``: the paper's claims at small scale (see waterdrum_hf.experiments.reproduction)."""

from __future__ import annotations

import argparse
import functools
import shlex
from typing import Any

from waterdrum_hf.scripts.files import check_output_folder
from waterdrum_hf.cli.parsing import (
    Reading,
    add_quick_config_command,
    config_from_options,
    positive,
)
from waterdrum_hf.cli.scoring_options import check_null_keys

DESCRIPTION = (
    "Reproduce the paper's separability (D1), calibration (D2), benchmark and resilience "
    "experiments under the three similarity settings, on the built-in corpus and small model "
    "(a CPU suffices) or on WaterDrum-Ax / WaterDrum-TOFU with --model and --watermark-tokenizer. Writes "
    "results.json, results.md and plots into --out; every model is cached there, so runs resume. "
    "Every ReproductionConfig field is a flag."
)

SEED_COUNT = Reading(
    read=lambda text: tuple(range(positive()(text))),
    show=lambda seeds: str(len(seeds)),
    metavar="N",
)
"""``--seeds N`` runs the seeds 0..N-1 (the flag has always counted; the field lists them)."""


def add_parser(commands: Any) -> argparse.ArgumentParser:
    from waterdrum_hf.experiments.reproduction import ReproductionConfig

    parser = add_quick_config_command(
        commands, "reproduce", ReproductionConfig, run, help="reproduce the paper's claims at small scale",
        description=DESCRIPTION, readings={"seeds": SEED_COUNT},
        quick_help="one seed, three calibration points (about 3 minutes on 2 CPU cores)",
    )  # fmt: skip
    parser.set_defaults(resumes=True)  # every model is cached: an interrupted run resumes
    return parser


def run(args: argparse.Namespace) -> int:
    from waterdrum_hf.experiments.reproduction import ReproductionConfig, run_reproduction

    if getattr(args, "schemes", ()):  # a scheme comparison: its own defaults
        config = config_from_options(
            ReproductionConfig,
            args,
            factory=functools.partial(ReproductionConfig.comparison, quick=args.quick),
        )
    else:
        config = config_from_options(ReproductionConfig, args, quick=args.quick)
    check_output_folder(config.output_dir, "--out")
    queries = config.owners * (config.passages_per_owner + config.holdout_per_owner)
    check_null_keys(config.null_keys, queries * config.num_samples)  # the toy corpus's count
    command = " ".join(["waterdrum", *(shlex.quote(a) for a in args.argv)])
    results = run_reproduction(config, log=lambda line: print(line, flush=True), command=command)
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
