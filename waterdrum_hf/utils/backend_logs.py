"""Quiet the import-time log lines of optional backends.

transformers imports torchao whenever it is installed (its quantizers register at import), and
torchao then logs a warning for each GPU kernel library it cannot load on a machine without
CUDA, and torch a deprecation line per enum torchao registers. They are expected, say nothing
about the user's run, and would otherwise lead every command's output and follow every
``import waterdrum_hf.trainers``.

:func:`drop_torchao_import_lines` (called by ``import waterdrum_hf``, before anything imports
torch) drops exactly those lines, whoever imports torchao later in the process; every other
record of those loggers passes. :func:`quiet_backend_logs` quiets the backends' loggers
wholesale while a command runs.
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

BACKEND_LOGGERS = ("torchao", "torch.utils._pytree")

_KERNEL_LIBRARY = re.compile(r"Failed to load .*torchao[/\\]_C[^/\\]*\.so: ")
_ENUM_REGISTRATION = "register_constant() on Enum subclasses is deprecated"


class _TorchaoImportLines(logging.Filter):
    """Drops torchao's "Failed to load .../torchao/_C*.so" lines and torch's deprecation line
    for each torchao enum registered with ``register_constant``."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if record.name == "torchao":
            return not _KERNEL_LIBRARY.match(message)
        subject = record.args[0] if isinstance(record.args, tuple) and record.args else None
        return not (
            _ENUM_REGISTRATION in message
            and isinstance(subject, type)
            and issubclass(subject, enum.Enum)
            and subject.__module__.split(".")[0] == "torchao"
        )


def drop_torchao_import_lines() -> None:
    """Attach the filter to the two loggers (once; they need not exist yet)."""
    for name in BACKEND_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _TorchaoImportLines) for f in logger.filters):
            logger.addFilter(_TorchaoImportLines())


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


class _NotWrittenBelow(logging.Filter):
    """For the root's handler: drops a record that a handler of its own logger or of a logger
    between it and the root has written already (huggingface_hub's library logger writes its
    retry warnings itself and still passes them up), so each line is said once."""

    def filter(self, record: logging.LogRecord) -> bool:
        logger: logging.Logger | None = logging.getLogger(record.name)
        while logger is not None and logger is not logging.root:
            if logger.handlers:
                return False
            if not logger.propagate:
                break
            logger = logger.parent
        return True


def configure_command_logging() -> None:
    """The commands' logging: warnings and errors as ``LEVEL logger: message`` on stderr, each
    record written once (a library logger with a handler of its own keeps its own format)."""
    root = logging.getLogger()
    before = list(root.handlers)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for handler in root.handlers:
        if handler not in before:
            handler.addFilter(_NotWrittenBelow())
