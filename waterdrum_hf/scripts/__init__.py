"""The ``waterdrum`` command: one TRL-style script per subcommand.

Each ``waterdrum_hf/scripts/<name>.py`` has ``make_parser()`` (a ``TrlParser`` over dataclass
argument groups whose fields carry ``help``) and ``main(...)``, taking the parsed groups as
TRL's ``sft.py`` does; ``waterdrum <name>`` and ``python -m waterdrum_hf.scripts.<name>`` run
the same code. Every script takes ``--config FILE.yaml`` (TrlParser's) and both ``--field_name``
and ``--field-name``. Bad input gives one line on stderr and exit status 2 (set
``WATERDRUM_DEBUG=1`` for the traceback); Ctrl-C gives one line and exit status 130.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from waterdrum_hf._version import library_version
from waterdrum_hf.generation.server import ServerError
from waterdrum_hf.scripts.parser import CliError
from waterdrum_hf.utils.backend_logs import configure_command_logging, quiet_backend_logs
from waterdrum_hf.utils.error_text import first_line

COMMANDS = {
    "demo": "run the WaterDrum loop on the built-in model",
    "score": "evaluate a model end to end",
    "compare": "compare models over several training runs (seeds)",
    "audit": "relearning, quantization and text-attack audits of unlearned models",
    "verify": "score texts for watermarks",
    "show": "per-token watermark view of texts (HTML and PNG)",
    "watermark": "watermark texts by paraphrasing",
    "unlearn": "unlearn owners with a registered method (runs TRL-style recipes)",
    "reproduce": "reproduce the paper's claims at small scale",
    "lm-eval-tasks": "print the lm-evaluation-harness task folder",
    "register-metric": "make evaluate.load('waterdrum') find this library's metric",
}
"""Each subcommand and its one-line help; its script is ``waterdrum_hf.scripts.<name>`` (with
``_`` for ``-``)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``waterdrum`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: waterdrum COMMAND [options] (waterdrum COMMAND --help for its options)\n")
        print("WaterDrum: the watermark-based, data-centric LLM unlearning metric.\n\ncommands:")
        for name, summary in COMMANDS.items():
            print(f"  {name:<16} {summary}")
        return 0
    if argv[0] == "--version":
        print(f"waterdrum-hf {library_version()}")
        return 0
    if argv[0] not in COMMANDS:
        print(
            f"waterdrum: error: unknown command {argv[0]!r} (one of {', '.join(COMMANDS)})",
            file=sys.stderr,
        )
        return 2
    name = argv[0]
    script = importlib.import_module(f"{__name__}.{name.replace('-', '_')}")
    return run_script(script, argv[1:], f"waterdrum {name}")


def run_script(script: ModuleType, argv: Sequence[str], prog: str) -> int:
    """Parse ``argv`` with ``script.make_parser`` and run ``script.main`` on the groups; bad
    input is one line on stderr and exit status 2, Ctrl-C one line and 130."""
    configure_command_logging()
    try:
        with quiet_backend_logs():
            keywords, options = (
                script.subcommand(argv) if hasattr(script, "subcommand") else ({}, list(argv))
            )
            groups = script.make_parser(prog=prog, **keywords).parse_args_and_config(options)
            return int(script.main(*groups) or 0)
    except (CliError, ServerError, ValueError, TypeError, OSError, ImportError) as error:
        if os.environ.get("WATERDRUM_DEBUG"):
            raise
        print(f"{prog}: error: {first_line(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, and whether a re-run resumes
        if os.environ.get("WATERDRUM_DEBUG"):
            raise
        again = (
            "; run the same command again to resume" if getattr(script, "RESUMES", False) else ""
        )
        print(f"\n{prog}: interrupted{again}", file=sys.stderr)
        return 130
