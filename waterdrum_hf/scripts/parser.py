"""How every ``waterdrum`` script parses: ``TrlParser`` over its dataclass argument groups (so
``--config recipe.yaml`` is TRL's), with one-line errors and tuple fields read as lists.

Bad input never ends in a traceback: scripts raise :class:`CliError` (or the library's own
``ValueError``/``TypeError``), and :func:`waterdrum_hf.scripts.run_script` prints one line on
stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import typing
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, NoReturn

from trl.scripts.utils import TrlParser

from waterdrum_hf.utils.error_text import first_line


class CliError(Exception):
    """A problem with the command's input, reported as one line (no traceback)."""


class _DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows real defaults only: an option whose default is ``None`` (or an empty list, which a
    config resolves) says its own in its help."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, argparse.SUPPRESS, ()) or action.nargs == 0:
            return action.help or ""
        return super()._get_help_string(action)


class _HelpAllAction(argparse.Action):
    """``--help-all``: the help with every option, those ``--help`` leaves out included."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.update(default=argparse.SUPPRESS, nargs=0)
        super().__init__(option_strings, argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        for action, text in parser.hidden_help.items():
            action.help = text
        parser.print_help()
        parser.exit()


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(text: str) -> str:
    """``text`` without reST markup: ``x`` and :role:`~a.b.X` become x and X."""
    text = _ROLE.sub(lambda m: m[1].rsplit(".", 1)[-1], text)
    return _LITERAL.sub(r"\1", text)


class ScriptParser(TrlParser):
    """``TrlParser`` for the ``waterdrum`` scripts: every field needs ``help`` metadata; a
    ``tuple[X, ...]`` field reads ``--x a b c`` (``--x`` alone: empty); errors are one line;
    ``--config`` names the file's unknown keys, never their values (a value may be a key);
    ``quick_defaults`` are the defaults under ``--quick`` (a file's and the command line's values
    still win); the options of ``brief_help`` (dests) are left out of ``--help`` and listed by
    ``--help-all`` (what ``brief_help_name`` names, e.g. transformers' ``TrainingArguments``).
    The usage line names the required options only."""

    def __init__(
        self,
        dataclass_types: Iterable[Any],
        *,
        quick_defaults: Mapping[str, Any] | None = None,
        brief_help: Collection[str] = (),
        brief_help_name: str = "",
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _DefaultsHelpFormatter)
        dataclass_types = list(dataclass_types)
        super().__init__(dataclass_types, **kwargs)
        self.quick_defaults = dict(quick_defaults or {})
        self.tuple_fields: set[str] = set()
        for cls in dataclass_types:
            hints = typing.get_type_hints(cls)
            for spec in dataclasses.fields(cls):
                if spec.init and "help" not in spec.metadata:
                    raise TypeError(f"{cls.__name__}.{spec.name} has no help metadata")
                if typing.get_origin(hints[spec.name]) is tuple:
                    self.tuple_fields.add(spec.name)
                    self._read_as_list(spec.name, typing.get_args(hints[spec.name])[0])
        for action in self._actions:
            if action.help:
                action.help = action.help.replace("%", "%%")
        self.add_argument(  # read by TrlParser before parsing; here for --help
            "--config", metavar="FILE.yaml", default=argparse.SUPPRESS,
            help="read options from a YAML file whose keys are field names (TRL's recipes); "
            "the command line's options override the file's",
        )  # fmt: skip
        if self.quick_defaults:
            self.add_argument(
                "--quick", action="store_true", default=argparse.SUPPRESS,
                help="smaller defaults: " + ", ".join(f"{k} {v}" for k, v in self.quick_defaults.items()),
            )  # fmt: skip
        self.hidden_help = {a: a.help for a in self._actions if a.dest in set(brief_help)}
        for action in self.hidden_help:
            action.help = argparse.SUPPRESS
        if self.hidden_help:
            self.add_argument(
                "--help-all", action=_HelpAllAction,
                help=f"show this help with the {len(self.hidden_help)} options of "
                f"{brief_help_name} too (they are taken whether shown or not)",
            )  # fmt: skip
        if "usage" not in kwargs:
            required = [
                f"{a.option_strings[0]} {a.metavar or a.dest.upper()}"
                for a in self._actions
                if a.required and a.option_strings
            ]
            self.usage = " ".join(["%(prog)s", *required, "[options]"])

    def format_help(self) -> str:
        """``--help`` as plain text for a terminal: the reST markup of the docstrings and field
        help it is made of (ours, transformers' and TRL's) left out."""
        return plain_text(super().format_help())

    def _read_as_list(self, dest: str, kind: type) -> None:
        for action in self._actions:
            if action.dest == dest:
                action.nargs, action.type, action.metavar = "*", kind, kind.__name__.upper()

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)

    def parse_known_args(  # type: ignore[override]  # the same call, lists made tuples
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, rest = super().parse_known_args(args, namespace)
        for name in self.tuple_fields:
            if isinstance(getattr(parsed, name, None), list):
                setattr(parsed, name, tuple(getattr(parsed, name)))
        return parsed, rest

    def parse_args_and_config(  # type: ignore[override]  # the same call, --quick first
        self, args: Iterable[str] | None = None, **kwargs: Any
    ) -> tuple[Any, ...]:
        args = list(sys.argv[1:] if args is None else args)
        if self.quick_defaults and "--quick" in args:
            args.remove("--quick")
            self.set_defaults(**self.quick_defaults)
        try:
            return super().parse_args_and_config(args, **kwargs)
        except TypeError as error:  # TrlParser passes the file's keys as keywords
            if "keywords must be strings" not in str(error):
                raise
            raise CliError(
                "--config: YAML reads a bare null: key as no key at all; quote it ('null': ...)"
            ) from None

    def parse_args_into_dataclasses(  # type: ignore[override]  # stray arguments: one line
        self, args: Sequence[str] | None = None, **kwargs: Any
    ) -> tuple[Any, ...]:
        kwargs["return_remaining_strings"] = True
        try:
            *groups, stray = super().parse_args_into_dataclasses(args=args, **kwargs)
        except (ValueError, TypeError) as error:  # a group's own check, in the flags' words
            raise CliError(self.in_flag_words(first_line(error))) from None
        if stray:  # names the stray options only: a stray value may be a watermark key
            options = [a for a in stray if a.startswith("-")]
            if options:
                plural = "s" if len(options) > 1 else ""
                self.error(f"unrecognized option{plural}: {' '.join(options)}")
            plural = "s" if len(stray) > 1 else ""
            self.error(f"{len(stray)} unrecognized value{plural} (not shown: one may be a key)")
        return tuple(groups)

    def in_flag_words(self, message: str) -> str:
        r"""A dataclass's message about its field (``\`num_samples\` must be >= 1, got -3.``)
        as the command line says it (``--num_samples must be >= 1, got -3``)."""
        options = {action.dest for action in self._actions}
        message = re.sub(r"`(\w+)`", lambda m: f"--{m[1]}" if m[1] in options else m[0], message)
        return message.removesuffix(".")

    def set_defaults_with_config(self, **kwargs: Any) -> list[str]:
        known = {action.dest for action in self._actions}
        unknown = sorted(str(key) for key in kwargs if key not in known)
        if unknown:
            raise CliError(f"--config: {', '.join(unknown)} are not options of {self.prog}")
        return super().set_defaults_with_config(**kwargs)


def positive(value: int | None, option: str, minimum: int = 1) -> None:
    """Refuse an integer option below ``minimum`` (``None``: not given, fine)."""
    if value is not None and value < minimum:
        raise CliError(f"{option} must be >= {minimum}, got {value}")
