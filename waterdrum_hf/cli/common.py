"""What every ``waterdrum`` subcommand shares: one-line errors, file and model loading, ids.

Bad input never ends in a traceback: commands raise :class:`CliError` (or the library's own
``ValueError``/``TypeError``), and :func:`waterdrum_hf.cli.main` prints one line on stderr and
exits with status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TypeVar

from waterdrum_hf._files import read_json_lines
from waterdrum_hf.keys import read_watermark_ids, watermark_id_from_text

Config = TypeVar("Config")


class CliError(Exception):
    """A problem with the command's input, reported as one line (no traceback)."""


class _DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows real defaults only: an option whose default is ``None`` says its own in its help."""

    def _get_help_string(self, action: argparse.Action) -> str:
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


def read_table(path: str, *, what: str = "data file") -> Any:
    """A ``datasets.Dataset`` from JSON Lines, JSON, CSV, Parquet, plain text (one text per
    line, column ``text``) or a ``save_to_disk`` folder; a malformed file is one clear error."""
    from datasets import Dataset, load_from_disk

    file = Path(path)
    if not file.exists():
        raise CliError(f"{what} {path!r} does not exist")
    if file.is_dir():
        try:
            return load_from_disk(str(file))
        except (FileNotFoundError, ValueError) as error:
            raise CliError(
                f"{what} {path!r} is a folder but not a saved dataset ({_first_line(error)})"
            ) from None
    suffix = file.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise CliError(
            f"{what} {path!r}: unknown format {suffix or '(none)'}; use .jsonl, .json, .csv, "
            ".parquet, .txt or a dataset folder"
        )
    if file.stat().st_size == 0:
        raise CliError(f"{what} {path!r} is empty")
    try:
        data = TABLE_SUFFIXES[suffix](file)
    except Exception as error:  # each format fails in its own ways
        raise CliError(
            f"{what} {path!r} could not be read as {suffix[1:]}: {_first_line(error)}"
        ) from None
    if len(data) == 0:
        raise CliError(f"{what} {path!r} has no rows")
    if isinstance(data, Dataset):
        return data
    try:
        return Dataset.from_list(data)
    except OverflowError:  # pyarrow holds integers in 64 bits; the value may be a key: not shown
        columns = [
            name
            for row in data
            for name, value in row.items()
            if isinstance(value, int) and not -(2**63) <= value < 2**64
        ]
        where = f"column {columns[0]!r}" if columns else "a column"
        raise CliError(
            f"{what} {path!r}: {where} holds an integer too large for 64 bits "
            "(watermark ids are in 0..2**32-1)"
        ) from None


def _json(file: Path) -> Any:
    from datasets import Dataset

    content = json.loads(file.read_text(encoding="utf-8-sig"))
    if isinstance(content, dict):
        return Dataset.from_dict(content)
    if isinstance(content, list) and all(isinstance(row, dict) for row in content):
        return content
    raise ValueError("expected a list of objects or an object of columns")


def _csv(file: Path) -> Any:
    import pandas
    from datasets import Dataset

    return Dataset.from_pandas(pandas.read_csv(file, encoding="utf-8-sig"), preserve_index=False)


def _parquet(file: Path) -> Any:
    import pyarrow.parquet
    from datasets import Dataset

    return Dataset(pyarrow.parquet.read_table(file))


def _text_lines(file: Path) -> list[dict[str, str]]:
    return [
        {"text": line} for line in file.read_text(encoding="utf-8-sig").splitlines() if line.strip()
    ]


TABLE_SUFFIXES = {
    ".jsonl": read_json_lines,
    ".json": _json,
    ".csv": _csv,
    ".parquet": _parquet,
    ".txt": _text_lines,
}


TABLE_OUTPUT_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


def write_table(data: Any, path: str) -> None:
    """Write a ``datasets.Dataset`` as JSON Lines, JSON, CSV or Parquet (by suffix)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".json"):
        data.to_json(path, lines=suffix == ".jsonl", force_ascii=False)
    elif suffix == ".csv":
        data.to_csv(path, index=False)
    elif suffix == ".parquet":
        data.to_parquet(path)
    else:
        raise CliError(f"output {path!r}: use a .jsonl, .json, .csv or .parquet file name")


def check_output_file(path: str, option: str, *, overwrite: bool) -> None:
    """Before any work: ``path`` can be written as a file (its missing parent folders are made)
    and, unless ``overwrite``, holds nothing yet, so a long run never ends failing to save."""
    file = Path(path)
    if file.is_dir():
        raise CliError(f"{option} {path!r} is a folder; give a file name")
    existed = file.exists()
    if existed and not overwrite:
        raise CliError(f"{option} {path!r} already exists; pass --overwrite to replace it")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        with open(file, "a"):  # appends nothing: an existing file is left as it is
            pass
        if not existed:
            file.unlink()
    except OSError as error:
        raise CliError(f"{option} {path!r} cannot be written: {_first_line(error)}") from None


def check_output_folder(path: str, option: str) -> None:
    """Before any work: ``path`` is (or can be made) a folder that files can be written in; an
    existing folder is fine (the commands that write folders resume into them)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise CliError(f"{option} {path!r} is a file; give a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise CliError(f"{option} {path!r} cannot be written: {_first_line(error)}") from None


NULL_REFERENCE_MEMORY_LIMIT = 2 * 1024**3
"""Bytes the null reference may take at most (see :func:`check_null_keys`)."""
MANY_NULL_KEYS = 10_000
"""Above this many null keys, a run warns that each key costs a pass over the texts."""


DEFAULT_NULL = "analytic"
"""The null of ``--null`` when neither it nor ``--null-keys`` is given (see
``benchmarks/results/null_agreement.md`` for why the analytic one)."""
DEFAULT_NULL_KEYS = 100
"""Random keys of the empirical null when ``--null empirical`` gives no ``--null-keys``."""


def add_null_options(parser: argparse.ArgumentParser) -> None:
    """``--null`` (which null gives the p-values) and ``--null-keys`` (the empirical one's keys)."""
    parser.add_argument(
        "--null",
        choices=["empirical", "analytic", "none"],
        default=None,
        help="what 'no watermark' reads at: empirical (random keys, exact p, each key costs a "
        "scoring pass), analytic (from the pair counts, normal-approximation p, a few percent "
        f"of the scoring) or none; default: empirical with --null-keys, else {DEFAULT_NULL}",
    )
    parser.add_argument(
        "--null-keys",
        type=positive(0),
        default=None,
        help=f"random keys of the empirical null (default {DEFAULT_NULL_KEYS}; 0: none)",
    )


def null_options(args: argparse.Namespace, num_texts: int) -> dict[str, Any]:
    """``null`` and ``null_keys`` for the metric from :func:`add_null_options`' flags, the
    empirical null's memory checked (:func:`check_null_keys`)."""
    null = args.null or ("empirical" if args.null_keys is not None else DEFAULT_NULL)
    if null != "empirical":
        if args.null_keys:
            raise CliError(f"--null-keys is the empirical null's; not a setting of --null {null}")
        return {"null": None if null == "none" else null, "null_keys": 0}
    null_keys = DEFAULT_NULL_KEYS if args.null_keys is None else args.null_keys
    check_null_keys(null_keys, num_texts)
    return {"null": "empirical" if null_keys else None, "null_keys": null_keys}


def check_null_keys(null_keys: int, num_texts: int, option: str = "--null-keys") -> None:
    """Refuse a null reference that would not fit in memory, with the largest that would.

    Each key costs about 100 bytes (drawing distinct keys) and 24 bytes per text (its key,
    its token sums and their pooled values), so memory grows as texts x keys; the smallest p-value is
    ``1 / (1 + keys)``, so a thousand keys already resolve 0.001.
    """
    per_key = 100 + 24 * num_texts
    need = null_keys * per_key
    if need > NULL_REFERENCE_MEMORY_LIMIT:
        largest = NULL_REFERENCE_MEMORY_LIMIT // per_key
        raise CliError(
            f"{option} {null_keys} needs about {need / 1e9:.1f} GB of memory for {num_texts} "
            f"texts; give at most {largest} (1000 keys already resolve p-values down to 0.001)"
        )
    if null_keys > MANY_NULL_KEYS:
        print(
            f"warning: {option} {null_keys}: every key is a pass over the {num_texts} texts, "
            "so this is slow; 1000 keys already resolve p-values down to 0.001",
            file=sys.stderr,
        )


def check_n_gram(n_gram: int, texts: Sequence[Any], tokenizer: Any) -> None:
    """Refuse an n-gram longer than every text (in ``tokenizer``'s tokens): no text could be
    scored, and the skipped-text warning could only guess why."""
    texts = [text for text in texts if isinstance(text, str)]
    lengths = tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
    longest = max((len(ids) for ids in lengths), default=0)
    if n_gram > longest:
        raise CliError(
            f"--n-gram {n_gram} is longer than every text (the longest has {longest} tokens of "
            "the watermark tokenizer), so no text could be scored; give the n-gram the texts "
            "are watermarked with (2 unless it was changed)"
        )


def require_columns(data: Any, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in data.column_names]
    if missing:
        raise CliError(
            f"{what} has no column {missing[0]!r} (columns: {', '.join(data.column_names)})"
        )


TINY = "tiny"
"""The short name of the built-in model (:mod:`waterdrum_hf.tiny`) and its tokenizer, wherever
a command loads a model or a tokenizer (the demo's models were trained from it)."""


def resolve_model_name(name: str) -> str:
    """``name``, or for :data:`TINY` the built-in model's folder (built on first use)."""
    if name != TINY:
        return name
    from waterdrum_hf import tiny

    return str(tiny.built_path())


def load_tokenizer_option(name: str, what: str = "tokenizer") -> Any:
    """``AutoTokenizer.from_pretrained`` (``tiny``: the built-in model's) with a one-line error
    for a missing path or repo."""
    from transformers import AutoTokenizer

    _check_location(name, what)
    name = resolve_model_name(name)
    try:
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as error:
        raise CliError(f"could not load the {what} {name!r}: {_first_line(error)}") from None


def load_model(name: str, tokenizer: str | None = None) -> tuple[Any, Any]:
    """A causal LM and its tokenizer from a local folder, a Hub id or ``tiny`` (the built-in
    model), on the GPU when there is one; a PEFT adapter folder (``adapter_config.json``) is
    loaded on its base model. ``tokenizer`` names the tokenizer where the model's folder has
    none (default: the model's own, or an adapter's base model's)."""
    from waterdrum_hf._progress import library_progress
    from waterdrum_hf._torch_plumbing import load_causal_lm

    _check_location(name, "model")
    name = resolve_model_name(name)
    folder = Path(name)
    bare = folder.is_dir() and not any(
        (folder / file).is_file() for file in ("tokenizer_config.json", "tokenizer.json")
    )
    adapter = (folder / "adapter_config.json").is_file()
    if tokenizer is None and bare and not adapter:  # said before the (slow) loading
        raise CliError(
            f"the model folder {name!r} has no tokenizer (no tokenizer_config.json): save "
            "the one it was trained with into it (tokenizer.save_pretrained), or give it "
            f"with `waterdrum score --tokenizer` ({TINY!r} for the built-in model's)"
        )
    try:
        with library_progress(None):  # the loading bar on a terminal only
            model = load_causal_lm(name)
    except (OSError, ValueError) as error:
        raise CliError(f"could not load the model {name!r}: {_first_line(error)}") from None
    if tokenizer is not None:
        return model, load_tokenizer_option(tokenizer, "tokenizer")
    tokenizer_source = name
    if bare:  # a PEFT adapter folder: its base model's tokenizer
        tokenizer_source = model.peft_config[model.active_adapter].base_model_name_or_path
    return model, load_tokenizer_option(tokenizer_source, "model's tokenizer")


def watermark_ids(values: Sequence[str] | None, file: str | None, what: str) -> list[int] | None:
    """Watermark ids from the command line or from a file (one per line; keeps keys off the
    command line and out of shell history)."""
    if values and file:
        raise CliError(f"give {what} on the command line or in a file, not both")
    if file:
        return read_watermark_ids(file, what)
    if not values:
        return None
    return [watermark_id_from_text(v, what) for v in values]


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


def config_parser(
    cls: type,
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
      characters); ``readings`` replaces how a field is read and shown;
    - ``%`` in a help is escaped (argparse %-formats help; HfArgumentParser does not escape).
    """
    from transformers import HfArgumentParser

    parser = HfArgumentParser(cls, add_help=False)
    hints = typing.get_type_hints(cls)
    specs = {spec.name: spec for spec in dataclasses.fields(cls)}
    readings = {
        **{
            name: comma_separated(typing.get_args(hint)[0])
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
        action.option_strings.sort(
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
    try:
        return (factory or (cls.quick if quick else cls))(**given)
    except (TypeError, ValueError) as error:
        raise CliError(_first_line(error)) from None


def add_quick_config_command(
    commands: Any,
    name: str,
    cls: type,
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


def add_scheme_options(parser: argparse.ArgumentParser) -> None:
    """``--scheme`` and each scheme's reading setting (``--k-p`` Waterfall's, ``--gamma`` KGW's)."""
    from waterdrum_hf.schemes import SCHEMES  # light: the kernel loads when first used

    parser.add_argument(
        "--scheme", choices=list(SCHEMES), default="waterfall",
        help="the watermark scheme the data was watermarked with",
    )  # fmt: skip
    parser.add_argument(
        "--k-p", type=positive(), default=None, help="Waterfall's function number (default 1)"
    )
    parser.add_argument(
        "--gamma",
        type=float,
        default=None,
        help="KGW's green share of the vocabulary (default 0.5)",
    )


def scheme_from_options(args: argparse.Namespace) -> Any:
    """The scheme :func:`add_scheme_options`' flags name (through
    :func:`~waterdrum_hf.schemes.resolve_scheme`, which refuses another scheme's setting)."""
    from waterdrum_hf.schemes import resolve_scheme

    try:
        return resolve_scheme(args.scheme, k_p=args.k_p, gamma=args.gamma)
    except (TypeError, ValueError) as error:
        message = _first_line(error)
        for setting in ("k_p", "gamma"):  # the user typed flags: name them as flags
            message = message.replace(f"`{setting}`", "--" + setting.replace("_", "-"))
        raise CliError(message) from None


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


def _check_location(name: str, what: str) -> None:
    """A name that looks like a path must exist; otherwise say so instead of the Hub's error."""
    looks_local = (
        name.startswith((".", "/", "~")) or os.sep in name.strip("/") and Path(name).parent.exists()
    )
    if looks_local and not Path(name).expanduser().exists():
        raise CliError(f"the {what} {name!r} does not exist (no such folder)")


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
