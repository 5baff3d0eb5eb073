"""Quiet the import-time log lines of optional backends.

transformers imports torchao whenever it is installed (its quantizers register at import), and
torchao then logs a warning for each GPU kernel library it cannot load on a machine without
CUDA, and torch a deprecation line per enum torchao registers. They are expected, say nothing
about the user's run, and would otherwise lead every command's output.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

BACKEND_LOGGERS = ("torchao", "torch.utils._pytree")


@contextmanager
def quiet_backend_logs() -> Iterator[None]:
    """Within the block, the backends' loggers pass errors only; their levels are restored."""
    loggers = [logging.getLogger(name) for name in BACKEND_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
