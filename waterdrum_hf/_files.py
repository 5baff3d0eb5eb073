"""Building a folder atomically: in a temporary folder beside it, renamed into place when done.

The tiny model and every experiment stage are built this way, so a run killed mid-way leaves
no half-written folder that a later run would take for a finished one. Not public API.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def building_folder(path: str | os.PathLike) -> Iterator[Path]:
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
