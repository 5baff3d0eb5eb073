"""The texts a command reads and whose key reads each (``waterdrum verify`` and ``show``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waterdrum_hf.cli.files import require_columns
from waterdrum_hf.cli.models import watermark_ids
from waterdrum_hf.cli.parsing import CliError
from waterdrum_hf.keys import watermark_id_from_text


def add_text_and_owner_options(parser: argparse.ArgumentParser, *, keys_file: bool = False) -> None:
    """The file of texts, the watermark tokenizer, and whose key reads each text (``--id``,
    ``--id-file`` or ``--id-column``, and with ``keys_file`` also ``--keys-file``: names to
    ids, read with the owner names of ``--name-column``), as ``waterdrum verify`` takes them."""
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
    if keys_file:
        owner.add_argument(
            "--keys-file",
            help="JSON of each owner's name and id (the demo's keys.json): each text is read "
            "with the key of its owner's name (the 'owner' column, or --name-column)",
        )
    parser.add_argument("--text-column", default="text", help="column holding the texts")


def texts_and_owner_ids(
    data: Any, args: argparse.Namespace, *, owner: int | None = None
) -> tuple[list[str], list[int]]:
    """The texts of ``data`` (a ``datasets.Dataset``) and each one's watermark id, from the
    options of :func:`add_text_and_owner_options` (``owner``: which id of a several-id
    ``--id-file``, from 1); errors never show an id."""
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
    if getattr(args, "keys_file", None):
        return texts, ids_by_name(data, args)
    keys = watermark_ids(None, args.id_file, "--id-file") or []
    if owner is not None:
        if not 1 <= owner <= len(keys):
            raise CliError(f"--owner {owner}: --id-file holds {len(keys)} ids (1 to {len(keys)})")
        keys = keys[owner - 1 : owner]
    if len(keys) != 1:
        choosable = owner is None and hasattr(args, "owner")  # `show` takes --owner
        choose = f" (choose one with --owner 1..{len(keys)})" if choosable else ""
        raise CliError(f"--id-file holds {len(keys)} ids: one reads every text{choose}")
    return texts, keys * len(texts)


def ids_by_name(data: Any, args: argparse.Namespace) -> list[int]:
    """Each row's id from ``--keys-file`` (names to ids) and its owner's name column."""
    import json

    column = args.name_column or "owner"
    require_columns(data, [column], args.file)
    try:
        keys = json.loads(Path(args.keys_file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CliError(
            f"--keys-file {args.keys_file!r}: not a readable JSON file ({error})"
        ) from None
    if not isinstance(keys, dict):
        raise CliError(f"--keys-file {args.keys_file!r} must map owner names to ids")
    unknown = sorted({str(n) for n in data[column]} - set(keys))
    if unknown:
        raise CliError(f"--keys-file has no id for owner {unknown[0]!r} of column {column!r}")
    return [watermark_id_from_text(str(keys[str(n)]), "--keys-file") for n in data[column]]
