"""``waterdrum unlearn``: run one of the registered unlearning trainers on a forget/retain split."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from waterdrum_hf.scripts.files import check_output_folder, read_table, require_columns
from waterdrum_hf.scripts.models import load_model, watermark_ids
from waterdrum_hf.cli.parsing import (
    CliError,
    Parser,
    config_from_options,
    config_parser,
    refuse_stray,
)

DESCRIPTION = (
    "Unlearn the forget owners' rows of --data (or the rows of --forget-data) from --model with "
    "the trainer named by --method, and save the result to --output-dir (required; a saved "
    "model there is replaced only with --overwrite). Every field of the method's config "
    "(waterdrum_hf.trainers.get(METHOD)[1], a TrainingArguments) is a flag: see `waterdrum "
    "unlearn --method METHOD --help` (the method's own flags first)."
)

SAVED_MODEL_FILES = ("config.json", "adapter_config.json")
"""A folder holding one of these holds a saved model (or PEFT adapter)."""


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "unlearn",
        help="unlearn owners with a registered method",
        description=DESCRIPTION,
        add_help=False,
    )
    parser.add_argument(
        "-h",
        "--help",
        action="store_true",
        help="show this help (with --method: the method's flags too)",
    )
    parser.add_argument(
        "--method", help="a registered method (kl, scrub, graddiff, npo, ...; --help lists them)"
    )
    parser.add_argument(
        "--model",
        help="causal LM to unlearn from (local folder, PEFT adapter folder, Hub id, or tiny: the "
        "built-in model)",
    )
    parser.add_argument(
        "--data", help="rows of every owner, with --id-column; split by --forget-ids"
    )
    parser.add_argument("--forget-data", help="the forget rows (instead of --data)")
    parser.add_argument("--retain-data", help="the retain rows (with --forget-data)")
    parser.add_argument("--id-column", default="owner_id", help="owner id column of --data")
    parser.add_argument(
        "--forget-ids", nargs="+", metavar="ID", help="owners to forget (with --data)"
    )
    parser.add_argument("--forget-ids-file", help="file with one forget id per line")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a model already saved in --output_dir",
    )
    parser.set_defaults(run=run, parser=parser, takes_rest=True)
    return parser


def run(args: argparse.Namespace, rest: list[str]) -> int:
    import waterdrum_hf.trainers as trainers

    if args.method is None and args.help:
        args.parser.print_help()
        print(f"\nmethods: {', '.join(trainers.available())}")
        return 0
    if args.method is None:
        raise CliError("--method is required (one of " + ", ".join(trainers.available()) + ")")
    try:
        trainer_class, config_class = trainers.get(args.method)
    except ValueError as error:
        raise CliError(str(error)) from None
    method_parser = Parser(
        prog=f"waterdrum unlearn --method {args.method}",
        usage="%(prog)s [the flags below] (after the options above)",
        add_help=False,
        parents=[config_parser(config_class)],
    )
    if args.help:
        args.parser.print_help()
        print()
        group_method_flags(method_parser, config_class)
        method_parser.print_help()
        return 0
    if not args.model:
        raise CliError("--model is required")
    options, stray = method_parser.parse_known_args(rest)
    refuse_stray(method_parser, stray)
    if not getattr(options, "output_dir", None):
        raise CliError(
            f"--output_dir is required: the folder the unlearned model is saved in (e.g. "
            f"--output_dir unlearned-{args.method})"
        )
    config = config_from_options(config_class, options)
    assert config.output_dir is not None  # --output_dir is required (above)
    check_output_folder(config.output_dir, "--output_dir")
    if not args.overwrite and any(
        (Path(config.output_dir) / name).is_file() for name in SAVED_MODEL_FILES
    ):
        raise CliError(
            f"--output_dir {config.output_dir!r} already holds a saved model; pass --overwrite "
            "to replace it"
        )
    forget, retain = split(args)
    model, tokenizer = load_model(args.model)
    trainer = trainer_class(
        model=model.train(),
        args=config,
        processing_class=tokenizer,
        forget_dataset=forget,
        retain_dataset=retain,
    )
    trainer.train()
    trainer.save_model(config.output_dir)
    tokenizer.save_pretrained(config.output_dir)
    print(f"Unlearned with {args.method}; saved to {config.output_dir}", file=sys.stdout)
    return 0


def group_method_flags(parser: argparse.ArgumentParser, config_class: type) -> None:
    """Order the help of ``config_class``'s flags: the method's own first, then those every
    unlearning method shares, then transformers' general ``TrainingArguments`` (hundreds)."""
    from transformers import TrainingArguments

    from waterdrum_hf.trainers import UnlearningConfig

    def names(cls: type) -> set[str]:
        return {spec.name for spec in dataclasses.fields(cls)}

    layers = [
        (
            f"{config_class.__name__} (the method's own)",
            names(config_class) - names(UnlearningConfig),
        ),
        ("UnlearningConfig (every method's)", names(UnlearningConfig) - names(TrainingArguments)),
        ("TrainingArguments (general training, from transformers)", names(TrainingArguments)),
    ]
    for group in parser._action_groups:
        group._group_actions.clear()
    for title, fields in layers:
        parser.add_argument_group(title)._group_actions.extend(
            action for action in parser._actions if action.dest in fields
        )


def split(args: argparse.Namespace) -> tuple[Any, Any]:
    """``(forget, retain)`` rows from --data and --forget-ids, or from the two files."""
    from waterdrum_hf.data import split_by_owner

    if args.data and (args.forget_data or args.retain_data):
        raise CliError("give --data (with --forget-ids) or --forget-data/--retain-data, not both")
    if args.forget_data and (args.forget_ids or args.forget_ids_file):
        raise CliError(
            "--forget-ids select rows of --data; with --forget-data every row is forgotten"
        )
    if args.forget_data:
        forget = read_table(args.forget_data, what="forget data")
        retain = read_table(args.retain_data, what="retain data") if args.retain_data else None
        return forget, retain
    if not args.data:
        raise CliError("give --data (with --forget-ids) or --forget-data")
    data = read_table(args.data)
    require_columns(data, [args.id_column], f"{args.data} (pass --id-column)")
    ids = watermark_ids(args.forget_ids, args.forget_ids_file, "forget ids")
    if not ids:
        raise CliError("--data needs --forget-ids or --forget-ids-file")
    forget, retain = split_by_owner(data, ids, id_column=args.id_column)
    return forget.remove_columns(args.id_column), retain.remove_columns(args.id_column)
