"""Killed mid-way, the demo resumes from its cache to the results an uninterrupted run gives."""

from __future__ import annotations

import json

import pytest
from killed_runs import kill_after_stage

from waterdrum_hf.scripts import main


@pytest.mark.slow
def test_a_killed_demo_resumes_to_the_uninterrupted_result(tiny_model, tmp_path):
    argv = ["demo", "--quick", "--show-progress", "false", "--methods", "kl", "taskvector"]
    argv += ["--passages-per-owner", "4", "--num-samples", "1", "--null-keys", "10"]  # smaller
    interrupted = tmp_path / "interrupted"
    kill_after_stage(
        [*argv, "--output-dir", str(interrupted)], interrupted / "cache", "model-retrained"
    )
    assert not (interrupted / "report.json").exists()
    assert main([*argv, "--output-dir", str(interrupted)]) == 0
    assert main([*argv, "--output-dir", str(tmp_path / "straight")]) == 0
    resumed = json.loads((interrupted / "report.json").read_text())
    straight = json.loads((tmp_path / "straight" / "report.json").read_text())
    assert resumed["models"] == straight["models"] and resumed["curves"] == straight["curves"]
    assert resumed["timings"]["finetune"] < straight["timings"]["finetune"] / 3  # not redone
