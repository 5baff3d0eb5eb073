"""``waterdrum demo``: the whole WaterDrum loop and an unlearning benchmark on the small model."""

from __future__ import annotations

import argparse
from typing import Any

from waterdrum_hf.cli.common import positive

DESCRIPTION = (
    "Watermark every owner's passages with its own key, fine-tune the built-in small model on "
    "them, retrain without the forget owners, unlearn them with each method, score every "
    "model, and write a report with plots. Offline; stages are cached in OUT/cache, so a "
    "re-run resumes."
)


def add_parser(commands: Any) -> argparse.ArgumentParser:
    from waterdrum_hf.experiments.demo import DEFAULT_METHODS

    parser = commands.add_parser("demo", help="run the WaterDrum loop on the built-in model", description=DESCRIPTION)
    parser.add_argument("--out", default="waterdrum_report", help="folder of the report and the cache")
    parser.add_argument("--owners", type=positive(2), help="data owners (default 6; 4 with --quick)")
    parser.add_argument("--forget", type=positive(), help="owners to forget, the last ones (default 2; 1 with --quick)")
    parser.add_argument("--passages-per-owner", type=positive(), help="passages per owner (default 10; 6 with --quick)")
    parser.add_argument("--methods", default=",".join(DEFAULT_METHODS), help="comma-separated unlearning methods")
    parser.add_argument("--quick", action="store_true", help="a smaller setting (about a minute on 2 CPU cores)")
    parser.add_argument("--seed", type=positive(0), default=0, help="seed of keys, training and sampling")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.set_defaults(run=run, parser=parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from waterdrum_hf.experiments.demo import DemoConfig, run_demo

    settings = {
        "output_dir": args.out,
        "methods": tuple(m.strip() for m in args.methods.split(",") if m.strip()),
        "seed": args.seed,
        "show_progress": False if args.no_progress else None,
    }
    for name in ("owners", "forget", "passages_per_owner"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    config = DemoConfig.quick(**settings) if args.quick else DemoConfig(**settings)
    report = run_demo(config, log=lambda line: print(line, flush=True))
    print()
    print(f"{'model':>12}  {'forget':>7}  {'retain':>7}  {'AUROC':>6}  forget p-value")
    for name, result in report["models"].items():
        cells = [f"{result[k]:+7.3f}" if k in result else f"{'–':>7}" for k in ("forget", "retain")]
        auroc = f"{result['separability_auroc']:6.3f}" if "separability_auroc" in result else f"{'–':>6}"
        p = f"{result['forget_p_value']:.3f}" if "forget_p_value" in result else "–"
        print(f"{name:>12}  {cells[0]}  {cells[1]}  {auroc}  {p}")
    print(f"\nReport: {config.output_dir}/report.md (total {sum(report['timings'].values()):.0f} s)")
    return 0
