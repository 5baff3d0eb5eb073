"""``waterdrum lm-eval-tasks``: the folder of the lm-evaluation-harness tasks shipped in the wheel.

Print the folder of the WaterDrum tasks for lm-evaluation-harness (waterdrum_ax,
waterdrum_tofu, waterdrum_local), to pass as lm_eval --include_path $(waterdrum lm-eval-tasks).
Install lm-eval with pip install 'waterdrum-hf[lm-eval]'.
"""

from __future__ import annotations

import sys

from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.parser import ScriptParser


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser((), prog=prog, description=__doc__)  # no options


def main() -> int:
    from waterdrum_hf.lm_eval_tasks import tasks_path

    print(tasks_path())
    return 0


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum lm-eval-tasks"))
