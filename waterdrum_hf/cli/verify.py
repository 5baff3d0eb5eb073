"""``waterdrum verify``: score texts in a file with their owners' watermark keys.

Score texts (JSON Lines, JSON, CSV, Parquet, or plain text with one text per line) for
Waterfall watermarks: per-text scores, then each set's value with a null-based p-value of 'no
watermark'.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from waterdrum_hf.cli.files import check_output_file, read_table
from waterdrum_hf.cli.models import load_tokenizer_option, watermark_ids
from waterdrum_hf.cli.parsing import positive
from waterdrum_hf.cli.scoring_options import (
    add_scoring_options,
    check_n_gram,
    scoring_config,
)
from waterdrum_hf.cli.texts import add_text_and_owner_options, texts_and_owner_ids

if TYPE_CHECKING:
    from waterdrum_hf.metric import WaterDrumResult


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser("verify", help="score texts for watermarks", description=__doc__)
    add_text_and_owner_options(parser)
    parser.add_argument(
        "--forget-ids", nargs="+", metavar="ID", help="owners to report as the forget set"
    )
    parser.add_argument(
        "--forget-ids-file",
        help="file with one forget id per line (keeps ids off the command line)",
    )
    add_scoring_options(parser, intervals=False)
    parser.add_argument(
        "--max-rows", type=positive(), default=20, help="per-text scores printed at most"
    )
    parser.add_argument("--output", help="write the full result (JSON, with per-text scores) here")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    parser.set_defaults(run=run, parser=parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from waterdrum_hf.cli.owners import print_owners
    from waterdrum_hf.metric import waterdrum_result

    if args.output:
        check_output_file(args.output, "--output", overwrite=args.overwrite)
    texts, ids = texts_and_owner_ids(read_table(args.file), args)
    config = scoring_config(args, len(texts))
    tokenizer = load_tokenizer_option(args.watermark_tokenizer, "watermark tokenizer")
    check_n_gram(args.n_gram, texts, tokenizer)
    result = waterdrum_result(
        texts,
        ids,
        tokenizer,
        config=config,
        forget_ids=watermark_ids(args.forget_ids, args.forget_ids_file, "forget ids", ids),
        return_details=True,
    )
    print_scores(list(result.scores or ()), args.max_rows)  # set with return_details
    print_summary(result)
    print_owners(result, config.null)
    if args.output:
        from waterdrum_hf.report import json_text

        with open(args.output, "w") as handle:
            handle.write(json_text(result.to_dict()))  # unscored texts: null, not NaN
        print(f"Full result: {args.output}")
    return 0


def print_scores(scores: list[float], limit: int) -> None:
    print(f"{'row':>6}  score")
    for row, score in enumerate(scores[:limit]):
        print(f"{row:>6}  {'   n/a (nothing to count)' if score != score else f'{score:+.4f}'}")
    if len(scores) > limit:
        print(f"   ... {len(scores) - limit} more rows (all in --output)")


def print_summary(result: WaterDrumResult) -> None:
    """The flat scalars, 4 decimals, with a plain-words verdict per set."""
    print()
    for name, value in result.scalars().items():
        print(f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}")
    for name, set_value in result.sets().items():
        if set_value.p_value is not None:
            found = set_value.p_value <= 0.05
            print(
                f"{name}: watermark {'detected' if found else 'not detected'} at the 5 % level "
                f"(p = {set_value.p_value:.4f})"
            )
