"""``waterdrum watermark``: paraphrase a file's texts under their owners' Waterfall keys.

Watermark every row's text with its owner's key by paraphrasing it with --model-name-or-path
(waterdrum_hf.WatermarkedDataset). The output keeps every column, the original text (<text-
column>_original) and the watermark self-check score (watermark_score). Every
WatermarkingConfig field is a flag.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from waterdrum_hf.keys import watermark_id_from_text
from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.files import (
    TABLE_OUTPUT_SUFFIXES,
    check_output_file,
    read_table,
    require_columns,
    write_table,
)
from waterdrum_hf.scripts.models import load_model, model_tokenizer, watermark_ids
from waterdrum_hf.scripts.parser import CliError, ScriptParser
from waterdrum_hf.scripts.scoring_arguments import check_n_gram
from waterdrum_hf.utils.fields import flag
from waterdrum_hf.watermarking.config import WatermarkingConfig


@dataclass
class WatermarkArguments:
    """The paraphrasing model, the file in and out, and the key when one reads every row (else
    each row's --id-column)."""

    model_name_or_path: str = flag(
        help="The paraphrasing causal LM (local folder, Hub id, or tiny: the built-in model)."
    )
    dataset_name: str = flag(
        help="The local file of texts to watermark (.jsonl, .json, .csv, .parquet, .txt)."
    )
    output_file: str = flag(help="Output file (.jsonl, .json, .csv or .parquet).")
    overwrite: bool = flag(False, "Replace an existing --output-file.")
    id: str | None = flag(
        None,
        "One watermark id for every row, instead of --id-column (visible in shell history: "
        "prefer --id-file).",
    )
    id_file: str | None = flag(
        None, "File holding one watermark id for every row (keeps the key off the command line)."
    )

    def __post_init__(self) -> None:
        if self.id is not None and self.id_file is not None:
            raise CliError("give --id or --id-file, not both")
        if not self.output_file.lower().endswith(TABLE_OUTPUT_SUFFIXES):
            raise CliError(
                f"--output-file {self.output_file!r}: use a .jsonl, .json, .csv or .parquet file name"
            )


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser((WatermarkArguments, WatermarkingConfig), prog=prog, description=__doc__)


def main(args: WatermarkArguments, config: WatermarkingConfig) -> int:
    from waterdrum_hf.watermarking.dataset import WatermarkedDataset

    check_output_file(args.output_file, "--output-file", overwrite=args.overwrite)
    n_gram = config.watermark_scheme().n_gram
    if config.max_new_tokens is not None and n_gram > config.max_new_tokens:
        raise CliError(
            f"--n-gram {n_gram} is longer than --max-new-tokens {config.max_new_tokens}: "
            "no paraphrase could hold a watermarked n-gram; keep --n-gram small (default 2)"
        )
    data = read_table(args.dataset_name, what="dataset")
    require_columns(data, [config.text_column], args.dataset_name)
    key = fixed_key(args, data, config)
    tokenizer = model_tokenizer(args.model_name_or_path)
    check_n_gram(n_gram, data[config.text_column], tokenizer)  # paraphrases: as long
    model = load_model(args.model_name_or_path)
    watermarker = WatermarkedDataset(model, tokenizer, config, watermark_id=key)
    watermarked = data.map(watermarker, batched=True, batch_size=4 * config.batch_size)
    write_table(watermarked, args.output_file)
    print(
        f"Watermarked {watermarker.num_watermarked} rows ({watermarker.num_skipped} without text "
        f"kept as they were) into {args.output_file}"
    )
    return 0


def fixed_key(args: WatermarkArguments, data: Any, config: WatermarkingConfig) -> int | None:
    """The one key of ``--id`` or ``--id-file`` for every row; ``None`` where each row's
    ``--id-column`` gives its key (the column is checked here)."""
    if args.id is not None:
        return watermark_id_from_text(args.id, "--id")
    if args.id_file is not None:
        keys = watermark_ids(None, args.id_file, "--id-file") or []
        if len(keys) != 1:
            raise CliError("--id-file must hold exactly one watermark id")
        return keys[0]
    require_columns(data, [config.id_column], f"{args.dataset_name} (pass --id-column or --id)")
    return None


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum watermark"))
