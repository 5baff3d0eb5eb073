"""One progress policy for all long work: tqdm bars (off when not a TTY unless asked) and
timed stage lines for multi-stage runs."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def progress_enabled(show_progress: bool | None) -> bool:
    """``None`` means: show a bar only when stderr is a terminal."""
    if show_progress is None:
        return sys.stderr.isatty()
    return bool(show_progress)


def progress_bar(
    iterable: Iterable[T] | None = None, *, desc: str, enabled: bool | None = None, **kwargs: Any
) -> tqdm:
    """A tqdm bar over ``iterable`` (or a manual one with ``total=``), shown when ``enabled``
    (see :func:`progress_enabled`)."""
    return tqdm(iterable, desc=desc, disable=not progress_enabled(enabled), **kwargs)


@contextmanager
def logged_stage(
    log: Callable[[str], None], timings: dict[str, float], key: str, title: str
) -> Iterator[None]:
    """Log ``title``, run the block, log and record (``timings[key]``) its seconds."""
    start = time.perf_counter()
    log(f"{title} ...")
    yield
    seconds = time.perf_counter() - start
    timings[key] = round(seconds, 1)
    log(f"    done in {seconds:.1f} s")


@contextmanager
def library_progress(show_progress: bool | None) -> Iterator[None]:
    """The progress bars of ``datasets`` (``map``) and ``transformers`` (loading and saving a
    model) switched off for a block unless :func:`progress_enabled`; as they were after. A
    pipeline that loads and saves many small models would otherwise print two bars for each."""
    import datasets
    from transformers.utils import logging as transformers_logging

    if progress_enabled(show_progress):
        yield
        return
    datasets_on = datasets.is_progress_bar_enabled()
    transformers_on = transformers_logging.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        if datasets_on:
            datasets.enable_progress_bars()
        if transformers_on:
            transformers_logging.enable_progress_bar()
