"""The ``waterdrum`` command line: ``waterdrum demo`` and ``waterdrum verify``."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence


def _demo(argv: Sequence[str]) -> int:
    from transformers import HfArgumentParser

    from .demo import DemoConfig, run_demo

    parser = HfArgumentParser(
        DemoConfig, prog="waterdrum demo", description="The whole WaterDrum loop on the built-in small model."
    )
    (config,) = parser.parse_args_into_dataclasses(args=list(argv))
    report = run_demo(config)
    for name, result in report["models"].items():
        auroc = result.get("separability_auroc")
        print(
            f"{name:>9} model: forget {result['forget']:+.3f}  retain {result['retain']:+.3f}"
            + (f"  AUROC {auroc:.3f}" if auroc is not None else "")
        )
    print(f"Report: {config.output_dir}/report.md")
    return 0


def _verify(argv: Sequence[str]) -> int:
    from datasets import load_dataset

    from .metric import compute_waterdrum

    parser = argparse.ArgumentParser(
        prog="waterdrum verify",
        description="Score generated texts (a JSON Lines, CSV or Parquet file) with their "
        "owners' watermark keys. Prints set-level values only; per-owner results and "
        "per-text scores go to --output.",
    )
    parser.add_argument("data_file", help="file with a text column and an owner-id column")
    parser.add_argument("--tokenizer", required=True, help="watermarking tokenizer (name or path)")
    parser.add_argument("--text-column", default="text")
    parser.add_argument("--id-column", default="owner_id", help="column holding each row's watermark id")
    parser.add_argument("--forget-ids-file", help="file with one forget id per line (kept off the command line)")
    parser.add_argument("--k-p", type=int, default=1)
    parser.add_argument("--n-gram", type=int, default=2)
    parser.add_argument("--vocab-size", type=int, help="expected watermark vocabulary size (checked)")
    parser.add_argument("--null-keys", type=int, default=0)
    parser.add_argument("--output", help="write the full result (JSON) here")
    args = parser.parse_args(list(argv))

    extension = args.data_file.rsplit(".", 1)[-1].lower()
    builder = {"jsonl": "json", "json": "json", "csv": "csv", "parquet": "parquet"}.get(extension)
    if builder is None:
        parser.error("data_file must end in .jsonl, .json, .csv or .parquet")
    data = load_dataset(builder, data_files=args.data_file, split="train")
    for column in (args.text_column, args.id_column):
        if column not in data.column_names:
            parser.error(f"column {column!r} not in {data.column_names}")
    forget_ids = None
    if args.forget_ids_file:
        with open(args.forget_ids_file) as handle:
            forget_ids = [int(line) for line in handle if line.strip()]
    result = compute_waterdrum(
        data[args.text_column],
        data[args.id_column],
        args.tokenizer,
        forget_ids=forget_ids,
        k_p=args.k_p,
        n_gram=args.n_gram,
        vocab_size=args.vocab_size,
        null_keys=args.null_keys,
        return_details=args.output is not None,
    )
    for name, value in result.items():
        if isinstance(value, float):
            print(f"{name}: {value:.4f}")
        elif isinstance(value, int):
            print(f"{name}: {value}")
    if args.output:
        with open(args.output, "w") as handle:
            json.dump(result, handle, indent=2)
        print(f"Full result: {args.output}")
    return 0


COMMANDS = {"demo": _demo, "verify": _verify}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``waterdrum`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print("usage: waterdrum {demo,verify} [--help]", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
