"""One progress-bar policy for all long work (tqdm; off when not a TTY unless asked)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def progress_enabled(show_progress: bool | None) -> bool:
    """``None`` means: show a bar only when stderr is a terminal."""
    if show_progress is None:
        return sys.stderr.isatty()
    return bool(show_progress)


def progress_bar(
    iterable: Iterable[T] | None = None, *, desc: str, enabled: bool | None = None, **kwargs
) -> tqdm:
    """A tqdm bar over ``iterable`` (or a manual one with ``total=``), shown when ``enabled``
    (see :func:`progress_enabled`)."""
    return tqdm(iterable, desc=desc, disable=not progress_enabled(enabled), **kwargs)
