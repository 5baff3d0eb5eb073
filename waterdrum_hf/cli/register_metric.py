"""``waterdrum register-metric``: put the WaterDrum module where ``evaluate.load("waterdrum")``
finds it.

Register the WaterDrum metric in evaluate's module cache ($HF_MODULES_CACHE, default
$HF_HOME/modules), so that evaluate.load('waterdrum') loads it, offline too, in scripts that
never import waterdrum_hf. Replaces a copy an older waterdrum-hf wrote there; prints the cached
script's path.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "register-metric",
        help="make evaluate.load('waterdrum') find this library's metric",
        description=__doc__,
    )
    parser.set_defaults(run=run, parser=parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from waterdrum_hf.evaluate_cache import register_metric

    print(register_metric())
    return 0
