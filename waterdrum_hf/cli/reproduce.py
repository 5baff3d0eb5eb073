"""``waterdrum reproduce``: the paper's claims at small scale (see waterdrum_hf.experiments.reproduction)."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from waterdrum_hf.cli.common import CliError, positive

DESCRIPTION = (
    "Reproduce the paper's separability (D1), calibration (D2), benchmark and resilience "
    "experiments under the three similarity settings, on the built-in corpus and small model "
    "(a CPU suffices) or on WaterDrum-Ax / WaterDrum-TOFU with --model and --watermark-tokenizer. Writes "
    "results.json, results.md and plots into --out; every model is cached there, so runs resume."
)


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser("reproduce", help="reproduce the paper's claims at small scale", description=DESCRIPTION)
    parser.add_argument("--out", default="reproduction", help="folder of the results and the cache")
    parser.add_argument("--quick", action="store_true", help="one seed, three calibration points (about 3 minutes on 2 CPU cores)")
    parser.add_argument("--seeds", type=positive(1), help="number of seeds (default 3; 1 with --quick)")
    parser.add_argument("--fractions", help="comma-separated shares of the forget set for calibration (default 0,0.1,...,1)")
    parser.add_argument("--settings", help="comma-separated similarity settings (default: all three)")
    parser.add_argument("--methods", help="comma-separated unlearning methods for the benchmark")
    parser.add_argument("--dataset", choices=["toy", "waterdrum-ax", "waterdrum-tofu"], default="toy", help="the data")
    parser.add_argument("--dataset-config", help="configuration of a published dataset (default forget_01 for Ax, forget_10 for TOFU)")
    parser.add_argument("--dataset-path", help="local copy of the dataset's Hub repository")
    parser.add_argument("--max-rows-per-owner", type=positive(), help="subsample a published dataset")
    parser.add_argument(
        "--watermarking", choices=["paraphrase", "substitution"], default="paraphrase",
        help="how the built-in corpus is watermarked: the small model's Waterfall paraphrase, or token "
        "substitutions that stay close to the source (a faithful-paraphraser stand-in)",
    )
    parser.add_argument("--model", help="base model to fine-tune (default: the built-in small model)")
    parser.add_argument("--watermark-tokenizer", help="tokenizer that watermarked a published dataset")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.set_defaults(run=run, parser=parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from waterdrum_hf.experiments.reproduction import ReproductionConfig, run_reproduction

    settings: dict[str, Any] = {
        "output_dir": args.out, "dataset": args.dataset, "dataset_config": args.dataset_config,
        "dataset_path": args.dataset_path, "max_rows_per_owner": args.max_rows_per_owner,
        "model": args.model, "watermark_tokenizer": args.watermark_tokenizer,
        "watermarking": args.watermarking, "show_progress": False if args.no_progress else None,
    }
    if args.seeds:
        settings["seeds"] = tuple(range(args.seeds))
    if args.fractions:
        try:
            settings["fractions"] = tuple(float(f) for f in args.fractions.split(","))
        except ValueError:
            raise CliError("--fractions must be comma-separated numbers, e.g. 0,0.5,1") from None
    for name in ("settings", "methods"):
        if getattr(args, name):
            settings[name] = tuple(v.strip() for v in getattr(args, name).split(",") if v.strip())
    config = ReproductionConfig.quick(**settings) if args.quick else ReproductionConfig(**settings)
    command = " ".join(["waterdrum", *(shlex.quote(a) for a in args.argv)])
    results = run_reproduction(config, log=lambda line: print(line, flush=True), command=command)
    for setting, summary in results["settings"].items():
        print(f"{setting:>20}: WaterDrum AUROC {summary['auroc']['waterdrum']:.3f}, R² {summary['r2']['waterdrum']:.3f}; "
              f"ROUGE-L AUROC {summary['auroc']['rouge_l']:.3f}")
    print(f"Results: {config.output_dir}/results.md ({results['seconds']['total'] / 60:.1f} minutes)")
    return 0
