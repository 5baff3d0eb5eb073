"""What the trainers need from upstream beyond its public API, in one place.

Dropout and adapter switching are done here with public ``torch`` and ``peft`` calls. Wrapping
the frozen reference for DeepSpeed or FSDP uses TRL's ``prepare_deepspeed``/``prepare_fsdp``
from ``trl.models.utils``, which TRL does not document as public: they are imported only when
that is needed, from a TRL inside :data:`TRL_TESTED`, and anything else gets a clear error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import torch
from packaging.specifiers import SpecifierSet
from packaging.version import Version

TRL_TESTED = SpecifierSet(">=0.29,<2")
"""TRL versions whose ``trl.models.utils.prepare_deepspeed``/``prepare_fsdp`` were tested."""


def disable_dropout(model: torch.nn.Module) -> None:
    """Set the probability of every ``torch.nn.Dropout`` in ``model`` to 0."""
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0


@contextmanager
def active_adapter(model: Any, adapter: str | None) -> Iterator[None]:
    """Run a ``peft.PeftModel`` with ``adapter`` active (``None``: every adapter disabled), then
    restore the adapter that was active."""
    if adapter is None:
        with model.disable_adapter():
            yield
        return
    previous = model.active_adapter
    model.set_adapter(adapter)
    try:
        yield
    finally:
        model.set_adapter(previous)


def reference_preparer(kind: str, trl_version: str | None = None) -> Callable[[Any, Any], Any]:
    """TRL's ``prepare_deepspeed`` (``kind="deepspeed"``) or ``prepare_fsdp`` (``"fsdp"``),
    which wrap the frozen reference like the trained model; a ``RuntimeError`` where the
    installed TRL is outside :data:`TRL_TESTED` or lacks them."""
    if kind not in ("deepspeed", "fsdp"):
        raise ValueError(f"kind must be 'deepspeed' or 'fsdp', got {kind!r}")
    trl_version = installed_version("trl") if trl_version is None else trl_version
    name = f"prepare_{kind}"
    fix = (
        f"install trl{TRL_TESTED}, or train a PEFT model (its reference is the same model with "
        "the adapter disabled)"
    )
    if trl_version is None or Version(trl_version) not in TRL_TESTED:
        raise RuntimeError(
            f"a frozen reference model under {kind} is wrapped with trl.models.utils.{name}, "
            f"tested with trl{TRL_TESTED} only; installed: {trl_version or 'no trl'}. {fix}"
        )
    from trl.models import utils

    preparer: Callable[[Any, Any], Any] | None = getattr(utils, name, None)
    if preparer is None:
        raise RuntimeError(f"trl {trl_version} has no trl.models.utils.{name}; {fix}")
    return preparer


def installed_version(package: str) -> str | None:
    """The installed version of ``package`` (``None``: not installed)."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None
