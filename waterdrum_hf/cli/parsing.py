"""How every ``waterdrum`` subcommand parses: one-line errors, flags from config dataclasses
(through ``HfArgumentParser``), argparse types, and ``--config FILE.yaml`` (TRL-style).

Bad input never ends in a traceback: commands raise :class:`CliError` (or the library's own
``ValueError``/``TypeError``), and :func:`waterdrum_hf.cli.main` prints one line on stderr and
exits with status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Config = TypeVar("Config", bound="DataclassInstance")


class CliError(Exception):
    """A problem with the command's input, reported as one line (no traceback)."""


class _DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows real defaults only: an option whose default is ``None`` says its own in its help."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help or ""
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line, no prefix matching of options."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def refuse_stray(parser: argparse.ArgumentParser, stray: Sequence[str]) -> None:
    """``parser.error`` for arguments no flag took, if any; names the stray options only, since
    a stray value may be a watermark key."""
    if stray:
        options = [a for a in stray if a.startswith("-")]
        shown = f": {' '.join(options)}" if options else ""
        parser.error(f"{len(stray)} unrecognized arguments{shown}")


def positive(minimum: int = 1) -> Any:
    """An argparse ``type`` for integers >= ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


def positive_or_auto(text: str) -> int | str:
    """An argparse ``type`` for ``"auto"`` or an integer >= 1 (e.g. ``generate``'s batch size)."""
    return "auto" if text == "auto" else positive()(text)


class Reading(NamedTuple):
    """How a flag's text becomes a config field's value (``read``, an argparse ``type``) and how
    the field's default is shown in ``--help`` (``show``), where HfArgumentParser has no way of
    its own (tuples) or the flag counts differently from the field."""

    read: Callable[[str], Any]
    show: Callable[[Any], str]
    metavar: str


def comma_separated(kind: type) -> Reading:
    """The reading of a ``tuple[kind, ...]`` field: ``a,b,c`` (blanks around items ignored)."""

    def read(text: str) -> tuple[Any, ...]:
        try:
            return tuple(kind(item.strip()) for item in text.split(",") if item.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated {kind.__name__} values, got {text!r}"
            ) from None

    return Reading(read, lambda value: ",".join(str(item) for item in value) or "''", "A,B,...")


def repeated(kind: type) -> Reading:
    """The reading of a repeatable ``tuple[kind, ...]`` field (``flag(repeatable=True)``): one
    value per item, ``--x a b --x c``."""
    return Reading(kind, lambda value: " ".join(str(item) for item in value) or "none", "X")


def config_parser(
    cls: Any,  # a config dataclass (HfArgumentParser types it as Any)
    *,
    quick: Mapping[str, Any] | None = None,
    readings: Mapping[str, Reading] | None = None,
) -> argparse.ArgumentParser:
    """``transformers.HfArgumentParser(cls)``, to hand a subcommand as ``parents=[...]``: one flag
    per field (``--field-name``, ``--field_name`` and the field's ``aliases``; its help is the
    field's ``help``). HfArgumentParser only builds whole parsers, hence ``parents``; and it is
    adapted where it falls short for these configs:

    - no default goes into the parsed namespace: only the flags given reach
      :func:`config_from_options`, so ``cls``'s own defaults apply (or ``quick``'s, the defaults
      of ``cls.quick``); the help shows both;
    - a ``tuple[X, ...]`` field reads ``a,b,c`` (HfArgumentParser would split a string into
      characters), a repeatable one ``a b --x c``; ``readings`` replaces how a field is read
      and shown;
    - ``%`` in a help is escaped (argparse %-formats help; HfArgumentParser does not escape).
    """
    from transformers import HfArgumentParser

    parser = HfArgumentParser(cls, add_help=False)
    hints = typing.get_type_hints(cls)
    specs = {spec.name: spec for spec in dataclasses.fields(cls)}
    readings = {
        **{
            name: (repeated if specs[name].metadata.get("action") == "extend" else comma_separated)(
                typing.get_args(hint)[0]
            )
            for name, hint in hints.items()
            if typing.get_origin(hint) is tuple
        },
        **(readings or {}),
    }
    quick = quick or {}
    for action in parser._actions:
        spec = specs[action.dest]
        if "help" not in spec.metadata:
            raise TypeError(
                f"{cls.__name__}.{spec.name} has no help metadata: every config field needs one"
            )
        flag = "--" + spec.name.replace("_", "-")
        complement = (
            f"--no_{spec.name}" in action.option_strings
        )  # HfArgumentParser's --no-x of a True bool
        action.option_strings.sort(  # type: ignore[attr-defined]  # typeshed: Sequence; a list
            key=lambda option: "_" in option
        )  # dashes first, as the CLI spells flags
        action.default = argparse.SUPPRESS
        if complement:
            action.help = f"the same as {flag} false"
            continue
        reading = readings.get(spec.name)
        if reading is not None:
            action.type, action.metavar = reading.read, reading.metavar
        elif hints[spec.name] in (bool, bool | None):
            action.metavar = "{true,false}"
        show = reading.show if reading is not None else _show
        default = _default(spec)
        defaults = [] if default in (None, dataclasses.MISSING) else [show(default)]
        if spec.name in quick:
            defaults.append(f"{show(quick[spec.name])} with --quick")
        shown = f" (default: {'; '.join(defaults)})" if defaults else ""
        action.help = (spec.metadata["help"] + shown).replace("%", "%%")
    return parser


def config_from_options(
    cls: type[Config],
    args: argparse.Namespace,
    *,
    quick: bool = False,
    factory: Callable[..., Config] | None = None,
) -> Config:
    """``cls`` (``cls.quick`` with ``quick``, or ``factory``: a constructor with other
    defaults) from the flags of :func:`config_parser` that were given; the config validates
    itself, and its error becomes the command's one-line error."""
    given = {
        spec.name: getattr(args, spec.name)
        for spec in dataclasses.fields(cls)
        if hasattr(args, spec.name)
    }
    with_quick: Any = cls  # a config with a `quick` constructor where the command has --quick
    try:
        return (factory or (with_quick.quick if quick else cls))(**given)
    except (TypeError, ValueError) as error:
        raise CliError(first_line(error)) from None


def add_quick_config_command(
    commands: Any,
    name: str,
    cls: Any,  # a config dataclass with QUICK defaults and a `quick` constructor
    run: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
    quick_help: str,
    readings: Mapping[str, Reading] | None = None,
) -> argparse.ArgumentParser:
    """A subcommand whose flags are ``cls``'s fields, with ``--quick`` (``cls.quick``'s
    defaults) and ``--no-progress``; ``run`` runs it."""
    parser = commands.add_parser(
        name, help=help, description=description,
        parents=[config_parser(cls, quick=cls.QUICK, readings=readings)],
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help=quick_help)
    add_no_progress(parser)
    parser.set_defaults(run=run, parser=parser)
    return parser


def add_no_progress(parser: argparse.ArgumentParser) -> None:
    """``--no-progress``: short for ``--show-progress false`` (the config's ``show_progress``)."""
    parser.add_argument(
        "--no-progress",
        dest="show_progress",
        action="store_false",
        default=argparse.SUPPRESS,
        help="no progress bars (the same as --show-progress false)",
    )


def _default(spec: dataclasses.Field) -> Any:
    """A field's default (made by its factory, if it has one); ``MISSING`` if none."""
    if spec.default_factory is not dataclasses.MISSING:
        return spec.default_factory()
    return spec.default


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def first_line(error: BaseException) -> str:
    """The first line of an error's message (its type's name if it has none)."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


CONFIG_OPTION = "--config"
"""Every subcommand's ``--config FILE.yaml``: options read from a YAML file, as TRL's scripts
read their recipes (``TrlParser``); options on the command line override the file's."""


def add_config_file_option(parser: argparse.ArgumentParser) -> None:
    """``--config FILE.yaml`` in ``parser``'s help (:func:`expand_config_file` reads it)."""
    parser.add_argument(
        CONFIG_OPTION,
        dest="config_file",
        metavar="FILE.yaml",
        help="read options from a YAML file whose keys are option names (null_keys or "
        "null-keys); options given on the command line override the file's",
    )


def expand_config_file(command: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """``argv`` (a subcommand's arguments) with ``--config FILE.yaml`` replaced by the file's
    options; an option the command line gives replaces the file's (a repeatable one too, so
    ``--attack`` on the command line is not added to the file's list)."""
    argv = list(argv)
    files = [i for i, a in enumerate(argv) if a == CONFIG_OPTION or a.startswith("--config=")]
    if not files:
        return argv
    if len(files) > 1:
        raise CliError(f"give {CONFIG_OPTION} once")
    at = files[0]
    if argv[at] == CONFIG_OPTION:
        if at + 1 >= len(argv):
            raise CliError(f"{CONFIG_OPTION} needs a YAML file")
        path, rest = argv[at + 1], argv[:at] + argv[at + 2 :]
    else:
        path, rest = argv[at].split("=", 1)[1], argv[:at] + argv[at + 1 :]
    given = {a.split("=", 1)[0] for a in rest if a.startswith("--")}
    return _options_of_file(command, path, given) + rest


def _options_of_file(command: argparse.ArgumentParser, path: str, given: set[str]) -> list[str]:
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            settings = yaml.safe_load(handle)
    except OSError as error:
        raise CliError(f"{CONFIG_OPTION} {path!r} cannot be read: {first_line(error)}") from None
    except yaml.YAMLError as error:
        raise CliError(f"{CONFIG_OPTION} {path!r} is not YAML: {first_line(error)}") from None
    if settings is None:
        return []
    if not isinstance(settings, dict):
        raise CliError(f"{CONFIG_OPTION} {path!r} must hold a mapping of option names to values")
    actions = {o: a for a in command._actions for o in a.option_strings}
    tokens: list[str] = []
    for key, value in settings.items():
        key = "null" if key is None else key  # YAML reads a bare `null:` key as None
        option = "--" + str(key).replace("_", "-")
        action = actions.get(option) or actions.get("--" + str(key))
        if action is None or option == CONFIG_OPTION:
            raise CliError(f"{CONFIG_OPTION} {path!r}: {key!r} is not an option of this command")
        if given & set(action.option_strings):  # the command line's value replaces it
            continue
        if action.nargs == 0:  # a switch: on when true
            if not isinstance(value, bool):
                raise CliError(f"{CONFIG_OPTION} {path!r}: {key!r} must be true or false")
            tokens += [action.option_strings[0]] if value else []
            continue
        values = value if isinstance(value, list) else [value]
        tokens += [action.option_strings[0], *(_token(v) for v in values)]
    return tokens


def _token(value: Any) -> str:
    """A YAML value as the command line spells it (``true``/``false`` for booleans)."""
    return str(value).lower() if isinstance(value, bool) else str(value)
