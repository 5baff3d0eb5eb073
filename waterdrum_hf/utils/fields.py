"""Config dataclass fields that are also command-line flags (``HfArgumentParser`` reads the
``help`` metadata; the ``waterdrum`` command shows it)."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import MISSING, field, fields
from typing import Any


class RepeatedFlag(argparse.Action):
    """A repeatable list flag's action: each use adds its values after the earlier uses'
    (``--attack a --attack b c``: a, b, c); the first use replaces the default, so the command
    line's list replaces a ``--config`` file's rather than extending it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        current = getattr(namespace, self.dest, None)
        earlier = [] if current is None or current is self.default else list(current)
        setattr(namespace, self.dest, [*earlier, *values])


def flag(
    default: Any = MISSING,
    help: str = "",
    *,
    factory: Callable[[], Any] | None = None,
    aliases: list[str] | None = None,
    repeatable: bool = False,
    choices: Sequence[str] | None = None,
) -> Any:
    """``dataclasses.field`` with its flag's ``help`` (and ``aliases``, other spellings of the
    flag); ``factory`` makes a mutable default. A ``repeatable`` (tuple) field's flag takes one
    or more values and may be given again, each time adding to them."""
    metadata: dict[str, Any] = {"help": help}
    if choices is not None:  # argparse's choices, for a str field that is not a Literal
        metadata["choices"] = list(choices)
    if aliases:
        metadata["aliases"] = aliases
    if repeatable:
        metadata.update(action=RepeatedFlag, nargs="+")
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def shortest_command(
    words: Sequence[str],
    config: Any,
    defaults: Mapping[str, Any] | None = None,
    *,
    ignore: Collection[str] = ("show_progress",),
) -> str:
    """The shortest command line that rebuilds ``config`` (a config dataclass with ``QUICK``
    defaults): ``words``, ``--quick`` or not, then a flag for each field that differs from
    its class's defaults (``defaults`` over them, ``QUICK`` over both under ``--quick``), as
    the ``waterdrum`` scripts read it (a tuple's items; true, false, none). Fields in
    ``ignore`` (by default: progress bars, the terminal's choice) are left out."""
    cls = type(config)
    candidates = []
    for quick in ([], ["--quick"]):
        base = cls(**{**(defaults or {}), **(cls.QUICK if quick else {})})
        candidates.append(shlex.join([*words, *quick, *_changed_flags(config, base, ignore)]))
    return min(candidates, key=len)  # a tie: without --quick


def _changed_flags(config: Any, base: Any, ignore: Collection[str]) -> list[str]:
    flags = []
    for spec in fields(config):
        value = getattr(config, spec.name)
        if spec.name in ignore or value == getattr(base, spec.name):
            continue
        flags.append(spec.metadata.get("aliases", ["--" + spec.name.replace("_", "-")])[0])
        if isinstance(value, tuple):
            flags += [str(item) for item in value]
        else:
            named = value is None or isinstance(value, bool)  # none, true, false
            flags.append(str(value).lower() if named else str(value))
    return flags
