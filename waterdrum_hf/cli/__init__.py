"""The ``waterdrum`` command (also ``python -m waterdrum_hf``).

Subcommands: ``demo`` (the whole loop on the built-in model), ``score`` (evaluate a model on a
watermarked dataset), ``verify`` (score texts in a file), ``watermark`` (paraphrase texts under
their owners' keys), ``unlearn`` (run a registered unlearning trainer), ``audit`` (relearning and
quantization audits of unlearned models), ``reproduce`` (the paper's claims at small scale) and
``lm-eval-tasks`` (the folder of the lm-evaluation-harness tasks); ``show`` draws each token's
watermark term as HTML and PNG. Bad input gives one line on
stderr and exit status 2; set ``WATERDRUM_DEBUG=1`` for the traceback. Ctrl-C gives one line
and exit status 130 (the commands that cache their stages say that a re-run resumes).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence

from waterdrum_hf._backend_logs import quiet_backend_logs
from waterdrum_hf._version import library_version
from waterdrum_hf.cli import (
    audit,
    demo,
    lm_eval_tasks,
    reproduce,
    score,
    show,
    unlearn,
    verify,
    watermark,
)
from waterdrum_hf.cli.common import CliError, Parser, refuse_stray

COMMANDS = (demo, score, audit, verify, show, watermark, unlearn, reproduce, lm_eval_tasks)


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
        command.add_parser(commands)
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


if __name__ == "__main__":
    sys.exit(main())
