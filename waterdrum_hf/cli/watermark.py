"""``waterdrum watermark``: paraphrase a file's texts under their owners' Waterfall keys.

Watermark every row's text with its owner's key by paraphrasing it with --model
(waterdrum_hf.WatermarkedDataset). The output keeps every column, the original text (<text-
column>_original) and the watermark self-check score (watermark_score). Every
WatermarkingConfig field is a flag.
"""

from __future__ import annotations

import argparse
from typing import Any

from waterdrum_hf.scripts.files import (
    TABLE_OUTPUT_SUFFIXES,
    check_output_file,
    read_table,
    require_columns,
    write_table,
)
from waterdrum_hf.scripts.models import load_model, watermark_ids
from waterdrum_hf.cli.parsing import CliError, add_no_progress, config_from_options, config_parser
from waterdrum_hf.cli.scoring_options import check_n_gram
from waterdrum_hf.keys import watermark_id_from_text


def add_parser(commands: Any) -> argparse.ArgumentParser:
    from waterdrum_hf.watermarking.config import WatermarkingConfig

    parser = commands.add_parser(
        "watermark",
        help="watermark texts by paraphrasing",
        description=__doc__,
        parents=[config_parser(WatermarkingConfig)],
    )
    parser.add_argument(
        "--model",
        required=True,
        help="the paraphrasing causal LM (local folder, Hub id, or tiny: the built-in model)",
    )
    parser.add_argument(
        "--in",
        dest="input",
        required=True,
        help="texts to watermark (.jsonl, .json, .csv, .parquet, .txt)",
    )
    parser.add_argument(
        "--out", dest="output", required=True, help="output file (.jsonl, .json, .csv or .parquet)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    key = parser.add_mutually_exclusive_group()
    key.add_argument(
        "--id",
        help="one watermark id for every row, instead of --id-column (visible in shell history: prefer --id-file)",
    )
    key.add_argument(
        "--id-file",
        help="file holding one watermark id for every row (keeps the key off the command line)",
    )
    add_no_progress(parser)
    parser.set_defaults(run=run, parser=parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from waterdrum_hf.watermarking.config import WatermarkingConfig
    from waterdrum_hf.watermarking.dataset import WatermarkedDataset

    config = config_from_options(WatermarkingConfig, args)
    if not args.output.lower().endswith(TABLE_OUTPUT_SUFFIXES):
        raise CliError(f"output {args.output!r}: use a .jsonl, .json, .csv or .parquet file name")
    check_output_file(args.output, "--out", overwrite=args.overwrite)
    if config.max_new_tokens is not None and config.n_gram > config.max_new_tokens:
        raise CliError(
            f"--n-gram {config.n_gram} is longer than --max-new-tokens {config.max_new_tokens}: "
            "no paraphrase could hold a watermarked n-gram; keep --n-gram small (default 2)"
        )
    data = read_table(args.input, what="input")
    require_columns(data, [config.text_column], args.input)
    key = None
    if args.id is not None:
        key = watermark_id_from_text(args.id, "--id")
    elif args.id_file is not None:
        keys = watermark_ids(None, args.id_file, "--id-file") or []
        if len(keys) != 1:
            raise CliError("--id-file must hold exactly one watermark id")
        key = keys[0]
    else:
        require_columns(data, [config.id_column], f"{args.input} (pass --id-column or --id)")
    model, tokenizer = load_model(args.model)
    check_n_gram(config.n_gram, data[config.text_column], tokenizer)  # paraphrases: as long
    watermarker = WatermarkedDataset(model, tokenizer, config, watermark_id=key)
    watermarked = data.map(watermarker, batched=True, batch_size=4 * config.batch_size)
    write_table(watermarked, args.output)
    print(
        f"Watermarked {watermarker.num_watermarked} rows ({watermarker.num_skipped} without text "
        f"kept as they were) into {args.output}"
    )
    return 0
