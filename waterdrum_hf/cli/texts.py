"""The texts a command reads and whose key reads each (``waterdrum verify`` and ``show``)."""

from __future__ import annotations

import argparse
from typing import Any

from waterdrum_hf.cli.files import require_columns
from waterdrum_hf.cli.models import watermark_ids
from waterdrum_hf.cli.parsing import CliError
from waterdrum_hf.keys import watermark_id_from_text


def add_text_and_owner_options(parser: argparse.ArgumentParser) -> None:
    """The file of texts, the watermark tokenizer, and whose key reads each text (``--id``,
    ``--id-file`` or ``--id-column``), as ``waterdrum verify`` takes them."""
    parser.add_argument("file", help="texts to read")
    parser.add_argument(
        "--watermark-tokenizer",
        required=True,
        help="tokenizer that watermarked the data (path, Hub id, or tiny: the built-in model's)",
    )
    owner = parser.add_mutually_exclusive_group(required=True)
    owner.add_argument(
        "--id", help="one watermark id for every text (visible in shell history: prefer --id-file)"
    )
    owner.add_argument(
        "--id-file",
        help="file holding one watermark id for every text (keeps the key off the command line)",
    )
    owner.add_argument("--id-column", help="column holding each text's watermark id")
    parser.add_argument("--text-column", default="text", help="column holding the texts")


def texts_and_owner_ids(data: Any, args: argparse.Namespace) -> tuple[list[str], list[int]]:
    """The texts of ``data`` (a ``datasets.Dataset``) and each one's watermark id, from the
    options of :func:`add_text_and_owner_options`; errors never show an id."""
    require_columns(data, [args.text_column], args.file)
    texts = list(data[args.text_column])
    bad = sum(not isinstance(t, str) for t in texts)
    if bad:
        raise CliError(f"{bad} rows of column {args.text_column!r} are not text")
    if args.id_column:
        require_columns(data, [args.id_column], args.file)
        where = f"column {args.id_column!r}"
        return texts, [watermark_id_from_text(str(v), where) for v in data[args.id_column]]
    if args.id is not None:
        return texts, [watermark_id_from_text(args.id, "--id")] * len(texts)
    key = watermark_ids(None, args.id_file, "--id-file") or []
    if len(key) != 1:
        raise CliError("--id-file must hold exactly one watermark id")
    return texts, key * len(texts)
