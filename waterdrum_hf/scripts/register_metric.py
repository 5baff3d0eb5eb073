"""``waterdrum register-metric``: put the WaterDrum module where ``evaluate.load("waterdrum")``
finds it.

Register the WaterDrum metric in evaluate's module cache ($HF_MODULES_CACHE, default
$HF_HOME/modules), so that evaluate.load('waterdrum') loads it, offline too, in scripts that
never import waterdrum_hf. Replaces a copy an older waterdrum-hf wrote there; prints the cached
script's path.
"""

from __future__ import annotations

import sys

from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.parser import ScriptParser


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser((), prog=prog, description=__doc__)  # no options


def main() -> int:
    from waterdrum_hf.metrics.loading import register_metric

    print(register_metric())
    return 0


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum register-metric"))
