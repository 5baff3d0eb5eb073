"""The texts a script reads and whose key reads each (``waterdrum verify`` and ``show``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from waterdrum_hf.keys import watermark_id_from_text
from waterdrum_hf.scripts.files import require_columns
from waterdrum_hf.scripts.models import watermark_ids
from waterdrum_hf.scripts.parser import CliError
from waterdrum_hf.utils.fields import flag


@dataclass
class TextArguments:
    """The file of texts, the watermark tokenizer, and whose key reads each text: exactly one of
    ``--id``, ``--id-file``, ``--id-column`` or ``--keys-file`` (``waterdrum verify`` and
    ``waterdrum show``)."""

    _argument_group_name: ClassVar[str] = "texts and their owners"

    file: str = flag(
        help="Texts to read (.jsonl, .json, .csv, .parquet, .txt or a dataset folder)."
    )
    watermark_tokenizer: str = flag(
        help="Tokenizer that watermarked the data (path, Hub id, or tiny: the built-in model's)."
    )
    id: str | None = flag(
        None, "One watermark id for every text (visible in shell history: prefer --id-file)."
    )
    id_file: str | None = flag(
        None,
        "File holding one watermark id for every text, or several to choose from with --owner "
        "(keeps keys off the command line).",
    )
    id_column: str | None = flag(None, "Column holding each text's watermark id.")
    keys_file: str | None = flag(
        None,
        "JSON of each owner's name and id (the demo's keys.json): each text is read with the "
        "key of its owner's name (the 'owner' column, or --name-column).",
    )
    text_column: str = flag("text", "Column holding the texts.")
    name_column: str | None = flag(
        None, "Column of each owner's display name (default: 'owner' where the file has it)."
    )

    def __post_init__(self) -> None:
        given = [n for n in ("id", "id_file", "id_column", "keys_file") if getattr(self, n)]
        if len(given) != 1:
            flags = ", ".join("--" + n.replace("_", "-") for n in given)
            raise CliError(
                "give exactly one of --id, --id-file, --id-column or --keys-file"
                + (f" (got {flags})" if given else "")
            )


def texts_and_owner_ids(
    data: Any, args: TextArguments, *, owner: int | None = None, choosable: bool = False
) -> tuple[list[str], list[int]]:
    """The texts of ``data`` (a ``datasets.Dataset``) and each one's watermark id (``owner``:
    which id of a several-id ``--id-file``, from 1; ``choosable``: the command takes
    ``--owner``); errors never show an id."""
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
    if args.keys_file:
        return texts, ids_by_name(data, args)
    keys = watermark_ids(None, args.id_file, "--id-file") or []
    if owner is not None:
        if not 1 <= owner <= len(keys):
            raise CliError(f"--owner {owner}: --id-file holds {len(keys)} ids (1 to {len(keys)})")
        keys = keys[owner - 1 : owner]
    if len(keys) != 1:
        choose = f" (choose one with --owner 1..{len(keys)})" if choosable else ""
        raise CliError(f"--id-file holds {len(keys)} ids: one reads every text{choose}")
    return texts, keys * len(texts)


def ids_by_name(data: Any, args: TextArguments) -> list[int]:
    """Each row's id from ``--keys-file`` (names to ids) and its owner's name column."""
    import json

    column = args.name_column or "owner"
    assert args.keys_file is not None
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
