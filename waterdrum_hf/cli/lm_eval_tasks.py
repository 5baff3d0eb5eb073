"""``waterdrum lm-eval-tasks``: the folder of the lm-evaluation-harness tasks shipped in the wheel.

Print the folder of the WaterDrum tasks for lm-evaluation-harness (waterdrum_ax,
waterdrum_tofu, waterdrum_local), to pass as lm_eval --include_path $(waterdrum lm-eval-tasks).
Install lm-eval with pip install 'waterdrum-hf[lm-eval]'.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "lm-eval-tasks", help="print the lm-evaluation-harness task folder", description=__doc__
    )
    parser.set_defaults(run=run, parser=parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from waterdrum_hf.lm_eval_tasks import tasks_path

    print(tasks_path())
    return 0
