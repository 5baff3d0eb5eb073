"""Reading and writing the tables the commands take and write, and checking output paths
before any work starts."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from waterdrum_hf.scripts.parser import CliError
from waterdrum_hf.utils.error_text import first_line
from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.files import read_json_lines


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
            raise CliError(
                f"{what} {path!r} is a folder but not a saved dataset ({first_line(error)})"
            ) from None
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
        raise CliError(
            f"{what} {path!r} could not be read as {suffix[1:]}: {first_line(error)}"
        ) from None
    if len(data) == 0:
        raise CliError(f"{what} {path!r} has no rows")
    if isinstance(data, Dataset):
        return data
    try:
        return Dataset.from_list(data)
    except OverflowError:  # pyarrow holds integers in 64 bits; the value may be a key: not shown
        columns = [
            name
            for row in data
            for name, value in row.items()
            if isinstance(value, int) and not -(2**63) <= value < 2**64
        ]
        where = f"column {columns[0]!r}" if columns else "a column"
        raise CliError(
            f"{what} {path!r}: {where} holds an integer too large for 64 bits "
            "(watermark ids are in 0..2**32-1)"
        ) from None


def _json(file: Path) -> Any:
    from datasets import Dataset

    content = json.loads(file.read_text(encoding="utf-8-sig"))
    if isinstance(content, dict):
        return Dataset.from_dict(content)
    if isinstance(content, list) and all(isinstance(row, dict) for row in content):
        return content
    raise ValueError("expected a list of objects or an object of columns")


def _csv(file: Path) -> Any:
    import pandas
    from datasets import Dataset

    return Dataset.from_pandas(pandas.read_csv(file, encoding="utf-8-sig"), preserve_index=False)


def _parquet(file: Path) -> Any:
    import pyarrow.parquet
    from datasets import Dataset

    return Dataset(pyarrow.parquet.read_table(file))


def _text_lines(file: Path) -> list[dict[str, str]]:
    return [
        {"text": line} for line in file.read_text(encoding="utf-8-sig").splitlines() if line.strip()
    ]


TABLE_SUFFIXES = {
    ".jsonl": read_json_lines,
    ".json": _json,
    ".csv": _csv,
    ".parquet": _parquet,
    ".txt": _text_lines,
}


TABLE_OUTPUT_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


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


def check_output_file(path: str, option: str, *, overwrite: bool) -> None:
    """Before any work: ``path`` can be written as a file (its missing parent folders are made)
    and, unless ``overwrite``, holds nothing yet, so a long run never ends failing to save."""
    file = Path(path)
    if file.is_dir():
        raise CliError(f"{option} {path!r} is a folder; give a file name")
    existed = file.exists()
    if existed and not overwrite:
        raise CliError(f"{option} {path!r} already exists; pass --overwrite to replace it")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        with open(file, "a"):  # appends nothing: an existing file is left as it is
            pass
        if not existed:
            file.unlink()
    except OSError as error:
        raise CliError(f"{option} {path!r} cannot be written: {first_line(error)}") from None


def check_output_folder(path: str, option: str) -> None:
    """Before any work: ``path`` is (or can be made) a folder that files can be written in; an
    existing folder is fine (the commands that write folders resume into them)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise CliError(f"{option} {path!r} is a file; give a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise CliError(f"{option} {path!r} cannot be written: {first_line(error)}") from None


def require_columns(data: Any, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in data.column_names]
    if missing:
        raise CliError(
            f"{what} has no column {missing[0]!r} (columns: {', '.join(data.column_names)})"
        )


@dataclass
class OverwriteArguments:
    """For the commands that resume (their stages cached in the output folder): whether a
    finished report made with other settings may be replaced."""

    _argument_group_name: ClassVar[str] = "an existing report"

    overwrite: bool = flag(
        False,
        "Replace a finished report in --output-dir made with other settings (a rerun with the same "
        "settings reuses its cached stages, and an interrupted run resumes, without it).",
    )


def check_finished_report(
    file: Path,
    key: str,
    settings: Mapping[str, Any],
    *,
    overwrite: bool,
    ignored: Sequence[str] = (),
) -> None:
    """Before any work: refuse to replace the finished report ``file`` (its settings under
    ``key``) when one of ``settings`` (but ``ignored``, which change no value) differs from what
    it records, unless ``overwrite``. The same settings rebuild the same report from the cache:
    nothing is lost then."""
    if overwrite or not file.is_file():
        return
    folder = str(file.parent)
    try:
        recorded = json.loads(file.read_text(encoding="utf-8")).get(key)
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        recorded = None
    if not isinstance(recorded, dict):
        raise CliError(
            f"--output-dir {folder!r} holds a {file.name} this command did not write; pass --overwrite "
            "to replace it, or choose another --output-dir"
        )
    now = json.loads(json.dumps(dict(settings), default=str))  # as the report records them
    missing = object()
    for name, value in now.items():
        if name not in ignored and recorded.get(name, missing) != value:
            before = recorded.get(name, "not recorded")
            raise CliError(
                f"--output-dir {folder!r} holds a finished report made with other settings ({name}: "
                f"{before!r} there, {value!r} now); pass --overwrite to replace it, or choose "
                "another --output-dir"
            )
