"""What every ``waterdrum`` subcommand shares: one-line errors, file and model loading, ids.

Bad input never ends in a traceback: commands raise :class:`CliError` (or the library's own
``ValueError``/``TypeError``), and :func:`waterdrum_hf.cli.main` prints one line on stderr and
exits with status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from waterdrum_hf.keys import check_watermark_id


class CliError(Exception):
    """A problem with the command's input, reported as one line (no traceback)."""


class _DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows real defaults only: an option whose default is ``None`` says its own in its help."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None:
            return action.help or ""
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line, no prefix matching of options."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def read_table(path: str, *, what: str = "data file") -> Any:
    """A ``datasets.Dataset`` from JSON Lines, JSON, CSV, Parquet, plain text (one text per
    line, column ``text``) or a ``save_to_disk`` folder; a malformed file is one clear error."""
    from datasets import Dataset, load_from_disk

    file = Path(path)
    if not file.exists():
        raise CliError(f"{what} {path!r} does not exist")
    if file.is_dir():
        try:
            return load_from_disk(str(file))
        except (FileNotFoundError, ValueError) as error:
            raise CliError(f"{what} {path!r} is a folder but not a saved dataset ({_first_line(error)})") from None
    suffix = file.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise CliError(
            f"{what} {path!r}: unknown format {suffix or '(none)'}; use .jsonl, .json, .csv, "
            ".parquet, .txt or a dataset folder"
        )
    if file.stat().st_size == 0:
        raise CliError(f"{what} {path!r} is empty")
    try:
        data = TABLE_SUFFIXES[suffix](file)
    except Exception as error:  # each format fails in its own ways
        raise CliError(f"{what} {path!r} could not be read as {suffix[1:]}: {_first_line(error)}") from None
    if len(data) == 0:
        raise CliError(f"{what} {path!r} has no rows")
    return data if isinstance(data, Dataset) else Dataset.from_list(data)


def _json_lines(file: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"line {number} is not valid JSON ({error.msg})") from None
    if not all(isinstance(row, dict) for row in rows):
        raise ValueError("every line must be a JSON object")
    return rows


def _json(file: Path) -> Any:
    from datasets import Dataset

    content = json.loads(file.read_text(encoding="utf-8"))
    if isinstance(content, dict):
        return Dataset.from_dict(content)
    if isinstance(content, list) and all(isinstance(row, dict) for row in content):
        return content
    raise ValueError("expected a list of objects or an object of columns")


def _csv(file: Path) -> Any:
    import pandas
    from datasets import Dataset

    return Dataset.from_pandas(pandas.read_csv(file), preserve_index=False)


def _parquet(file: Path) -> Any:
    import pyarrow.parquet
    from datasets import Dataset

    return Dataset(pyarrow.parquet.read_table(file))


def _text_lines(file: Path) -> list[dict[str, str]]:
    return [{"text": line} for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


TABLE_SUFFIXES = {".jsonl": _json_lines, ".json": _json, ".csv": _csv, ".parquet": _parquet, ".txt": _text_lines}


def write_table(data: Any, path: str) -> None:
    """Write a ``datasets.Dataset`` as JSON Lines, JSON, CSV or Parquet (by suffix)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".json"):
        data.to_json(path, lines=suffix == ".jsonl", force_ascii=False)
    elif suffix == ".csv":
        data.to_csv(path, index=False)
    elif suffix == ".parquet":
        data.to_parquet(path)
    else:
        raise CliError(f"output {path!r}: use a .jsonl, .json, .csv or .parquet file name")


def require_columns(data: Any, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in data.column_names]
    if missing:
        raise CliError(f"{what} has no column {missing[0]!r} (columns: {', '.join(data.column_names)})")


def load_tokenizer_option(name: str, what: str = "tokenizer") -> Any:
    """``AutoTokenizer.from_pretrained`` with a one-line error for a missing path or repo."""
    from transformers import AutoTokenizer

    _check_location(name, what)
    try:
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as error:
        raise CliError(f"could not load the {what} {name!r}: {_first_line(error)}") from None


def load_model(name: str) -> tuple[Any, Any]:
    """A causal LM and its tokenizer from a local folder or a Hub id, on the GPU when there is
    one; a PEFT adapter folder (``adapter_config.json``) is loaded on its base model."""
    from waterdrum_hf._torch_plumbing import load_causal_lm

    _check_location(name, "model")
    try:
        model = load_causal_lm(name)
    except (OSError, ValueError) as error:
        raise CliError(f"could not load the model {name!r}: {_first_line(error)}") from None
    tokenizer_source = name
    folder = Path(name)
    if (folder / "adapter_config.json").is_file() and not (folder / "tokenizer_config.json").is_file():
        tokenizer_source = model.peft_config[model.active_adapter].base_model_name_or_path
    return model, load_tokenizer_option(tokenizer_source, "model's tokenizer")


def watermark_ids(values: Sequence[str] | None, file: str | None, what: str) -> list[int] | None:
    """Watermark ids from the command line or from a file (one per line; keeps keys off the
    command line and out of shell history)."""
    if values and file:
        raise CliError(f"give {what} on the command line or in a file, not both")
    if file:
        path = Path(file)
        if not path.is_file():
            raise CliError(f"{what} file {file!r} does not exist")
        values = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        if not values:
            raise CliError(f"{what} file {file!r} has no ids")
    if not values:
        return None
    return [watermark_id(v, what) for v in values]


def watermark_id(value: str, what: str) -> int:
    """One watermark id from text (an option, a line of an id file, a column's value); the
    range is :func:`waterdrum_hf.keys.check_watermark_id`'s. Errors never show the value."""
    try:
        number = int(value)
    except ValueError:
        raise CliError(f"{what} must be whole numbers (watermark ids), got a non-integer") from None
    return check_watermark_id(number, what)


def positive(minimum: int = 1) -> Any:
    """An argparse ``type`` for integers >= ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


def add_dataclass_options(parser: argparse.ArgumentParser, cls: type, *, skip: Sequence[str] = ()) -> None:
    """Kebab-case options for a dataclass's fields (with their ``help``); see
    :func:`dataclass_from_options`."""
    hints = typing.get_type_hints(cls)
    group = parser.add_argument_group(f"{cls.__name__} options")
    for spec in dataclasses.fields(cls):
        if spec.name in skip or not spec.init:
            continue
        kind = _scalar_type(hints[spec.name])
        option = "--" + spec.name.replace("_", "-")
        help_text = spec.metadata.get("help", "")
        if kind is bool:
            group.add_argument(option, dest=spec.name, type=_boolean, metavar="{true,false}",
                               default=argparse.SUPPRESS, help=f"{help_text} (default: {spec.default})")
        else:
            group.add_argument(option, dest=spec.name, type=kind, default=argparse.SUPPRESS,
                               help=f"{help_text} (default: {spec.default!r})")


def dataclass_from_options(cls: type, args: argparse.Namespace, **fixed: Any) -> Any:
    """Build ``cls`` from the options :func:`add_dataclass_options` added that were given."""
    names = {spec.name for spec in dataclasses.fields(cls)}
    given = {k: v for k, v in vars(args).items() if k in names}
    return cls(**{**given, **fixed})


def _scalar_type(hint: Any) -> type:
    options = [a for a in typing.get_args(hint) if a is not type(None)]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        hint = options[0]
    return hint if hint in (int, float, str, bool) else str


def _boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "yes", "1"):
        return True
    if lowered in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _check_location(name: str, what: str) -> None:
    """A name that looks like a path must exist; otherwise say so instead of the Hub's error."""
    looks_local = name.startswith((".", "/", "~")) or os.sep in name.strip("/") and Path(name).parent.exists()
    if looks_local and not Path(name).expanduser().exists():
        raise CliError(f"the {what} {name!r} does not exist (no such folder)")


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
