"""Config dataclass fields that are also command-line flags (``HfArgumentParser`` reads the
``help`` metadata; the ``waterdrum`` command shows it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, field
from typing import Any


def flag(
    default: Any = MISSING,
    help: str = "",
    *,
    factory: Callable[[], Any] | None = None,
    aliases: list[str] | None = None,
    repeatable: bool = False,
) -> Any:
    """``dataclasses.field`` with its flag's ``help`` (and ``aliases``, other spellings of the
    flag); ``factory`` makes a mutable default. A ``repeatable`` (tuple) field's flag takes one
    or more values and may be given again, each time adding to them."""
    metadata: dict[str, Any] = {"help": help}
    if aliases:
        metadata["aliases"] = aliases
    if repeatable:
        metadata.update(action="extend", nargs="+")
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)
