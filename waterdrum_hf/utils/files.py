"""Files: building a folder atomically, reading JSON Lines, checking a name that looks like a
local path before anything asks the Hub for it. Not public API.

A folder is built in a temporary folder beside it and renamed into place when done: the tiny
model and every experiment stage are built this way, so a run killed mid-way leaves no
half-written folder that a later run would take for a finished one.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def building_folder(path: str | os.PathLike[str]) -> Iterator[Path]:
    """An empty temporary folder beside ``path`` to build into; it becomes ``path`` when the
    block ends without an exception, and is removed in every case.

    The finished folder is world-readable (``0o755``; a temporary folder is private), so a
    shared cache serves other users. If another process finished ``path`` first, its folder
    is kept and this build is dropped.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}-build-", dir=path.parent))
    try:
        yield tmp
        tmp.chmod(0o755)
        try:
            tmp.rename(path)
        except OSError:
            if not path.is_dir():  # otherwise a concurrent build finished first: keep it
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def read_json_lines(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The objects of a JSON Lines file, one per non-blank line; a line that is not a JSON
    object raises ``ValueError`` naming its number (never its content)."""
    rows = []
    lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"line {number} is not valid JSON ({error.msg})") from None
    if not all(isinstance(row, dict) for row in rows):
        raise ValueError("every line must be a JSON object")
    return rows


LOCAL_FILE_SUFFIXES = (
    ".jsonl", ".json", ".csv", ".parquet", ".txt", ".arrow", ".safetensors", ".bin", ".gguf",
)  # fmt: skip
"""Names ending so are files on this machine (a data table, weights), never Hub ids."""


def check_local_location(name: str, what: str, *, file_ok: bool = False) -> None:
    """A name that looks like a local path (``./``, ``/``, ``~``, a folder that exists above
    it, or a file suffix of :data:`LOCAL_FILE_SUFFIXES`) must exist: a missing one raises a
    one-line ``ValueError`` at once, instead of the Hub's error after its retries; so must a
    file where a folder is wanted (unless ``file_ok``). Other names (Hub ids) pass."""
    path = Path(name).expanduser()
    looks_local = (
        name.startswith((".", "/", "~"))
        or (os.sep in name.strip(os.sep) and path.parent.exists())
        or path.suffix.lower() in LOCAL_FILE_SUFFIXES
    )
    if looks_local and not path.exists():
        kind = "file or folder" if file_ok else "folder"
        raise ValueError(f"the {what} {name!r} does not exist (no such {kind})")
    if looks_local and not file_ok and not path.is_dir():
        raise ValueError(f"the {what} {name!r} is a file: name the folder that holds it")
