"""The ``waterdrum`` command (also ``python -m waterdrum_hf``).

Subcommands: ``demo`` (the whole loop on the built-in model), ``score`` (evaluate a model on a
watermarked dataset), ``compare`` (models over several training runs), ``verify`` (score texts
in a file), ``watermark`` (paraphrase texts under
their owners' keys), ``unlearn`` (run a registered unlearning trainer), ``audit`` (relearning and
quantization audits of unlearned models), ``reproduce`` (the paper's claims at small scale),
``lm-eval-tasks`` (the folder of the lm-evaluation-harness tasks), ``register-metric``
(make ``evaluate.load("waterdrum")`` find the metric) and ``show`` (each token's watermark
term as HTML and PNG). Bad input gives one line on
stderr and exit status 2; set ``WATERDRUM_DEBUG=1`` for the traceback. Ctrl-C gives one line
and exit status 130 (the commands that cache their stages say that a re-run resumes). Every
command takes ``--config FILE.yaml`` (its options in a YAML file, TRL-style).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from waterdrum_hf._backend_logs import quiet_backend_logs
from waterdrum_hf._version import library_version
from waterdrum_hf.cli import (
    audit,
    compare,
    demo,
    lm_eval_tasks,
    register_metric,
    reproduce,
    score,
    show,
    unlearn,
    verify,
    watermark,
)
from waterdrum_hf.cli.parsing import (
    CliError,
    Parser,
    add_config_file_option,
    expand_config_file,
    refuse_stray,
)

COMMANDS = (
    demo,
    score,
    compare,
    audit,
    verify,
    show,
    watermark,
    unlearn,
    reproduce,
    lm_eval_tasks,
    register_metric,
)


def build_parser() -> Parser:
    """The ``waterdrum`` parser with every subcommand."""
    parser = Parser(
        prog="waterdrum",
        description="WaterDrum: the watermark-based, data-centric LLM unlearning metric.",
        epilog="Run `waterdrum COMMAND --help` for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"waterdrum-hf {library_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        add_config_file_option(command.add_parser(commands))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``waterdrum`` console script; returns the exit status."""
    args = None
    try:
        parser = build_parser()
        argv = list(sys.argv[1:] if argv is None else argv)
        if not argv:
            parser.print_help()
            return 0
        argv = _with_config_file(parser, argv)
        if argv is None:
            return 2
        args, rest = parser.parse_known_args(argv)
        args.argv = argv  # what was asked, for reports that record their command
        if not getattr(args, "takes_rest", False):
            refuse_stray(args.parser if args.command else parser, rest)
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        with quiet_backend_logs():
            if getattr(args, "takes_rest", False):
                return args.run(args, rest)
            return args.run(args)
    except (CliError, ValueError, TypeError, OSError, ImportError) as error:
        if os.environ.get("WATERDRUM_DEBUG") or args is None:
            raise
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"waterdrum {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, and whether a re-run resumes
        if os.environ.get("WATERDRUM_DEBUG"):
            raise
        name = f"waterdrum {args.command}" if args is not None and args.command else "waterdrum"
        resumes = getattr(args, "resumes", False)
        again = "; run the same command again to resume" if resumes else ""
        print(f"\n{name}: interrupted{again}", file=sys.stderr)
        return 130


def _with_config_file(parser: Parser, argv: list[str]) -> list[str] | None:
    """``argv`` with the subcommand's ``--config FILE.yaml`` read into options; for a bad file,
    its one-line error is printed and ``None`` returned (exit status 2)."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if argv[0] not in commands.choices:
        return argv
    command = commands.choices[argv[0]]
    try:
        return [argv[0], *expand_config_file(command, argv[1:])]
    except CliError as error:
        print(f"waterdrum {argv[0]}: error: {error}", file=sys.stderr)
        return None


if __name__ == "__main__":
    sys.exit(main())
