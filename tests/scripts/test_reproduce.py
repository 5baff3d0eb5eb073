"""``waterdrum reproduce``: the script and the command run alike; Ctrl-C resumes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.scripts.cli_cases import (
    run,
)
from waterdrum_hf.scripts import main


def test_the_reproduce_script_runs_what_the_command_runs(monkeypatch, capsys):
    """`python -m waterdrum_hf.scripts.reproduce` is `waterdrum reproduce`: the same options."""
    monkeypatch.setenv("COLUMNS", "1000")
    module = [sys.executable, "-m", "waterdrum_hf.scripts.reproduce", "--help"]
    done = subprocess.run(module, capture_output=True, text=True)
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    assert done.returncode == 0 and done.stdout == capsys.readouterr().out


def test_ctrl_c_of_a_reproduction_says_a_rerun_resumes(monkeypatch, tmp_path, capsys):
    import waterdrum_hf.experiments.reproduction as reproduction

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(reproduction, "run_reproduction", interrupt)
    code, _, err = run(["reproduce", "--quick", "--output-dir", tmp_path / "r"], capsys)
    assert code == 130 and err.strip().splitlines() == [
        "waterdrum reproduce: interrupted; run the same command again to resume"
    ]
