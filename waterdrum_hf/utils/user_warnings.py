"""Warnings that point at the user's line, however deep in the library they are raised."""

from __future__ import annotations

import sys
import warnings
from types import FrameType

_LIBRARY_MODULES = ("waterdrum_hf", "evaluate", "evaluate_modules")
"""Frames of these modules are skipped: the library, and ``evaluate`` with the metric modules it
loads (``evaluate_modules.metrics...``), so a warning raised through ``metric.compute`` points
at the line that called ``compute``."""


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` with the stack level of the first frame outside the library."""
    level = 1
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _in_library(frame.f_globals.get("__name__", "")):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level + 1)


def _in_library(module: str) -> bool:
    return module.split(".", 1)[0] in _LIBRARY_MODULES
