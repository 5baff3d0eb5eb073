"""``waterdrum lm-eval-tasks``: the shipped task folder."""

from __future__ import annotations

from pathlib import Path

from tests.scripts.cli_cases import (
    run,
)


def test_lm_eval_tasks_prints_the_shipped_task_folder(capsys):

    code, out, _ = run(["lm-eval-tasks"], capsys)
    folder = Path(out.strip())
    assert code == 0 and folder.is_absolute()
    assert {p.name for p in folder.glob("*.yaml")} == {
        "waterdrum_ax.yaml",
        "waterdrum_tofu.yaml",
        "waterdrum_local.yaml",
    }
