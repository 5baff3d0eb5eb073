"""Killed mid-way, the demo resumes from its cache to the results an uninterrupted run gives,
to the last bit: determinism where it is ours (the same settings from nothing, in the same
process tree; what differs between machines is the floating point of training, which the
runs' intervals cover)."""

from __future__ import annotations

import json
import logging

import pytest
from killed_runs import kill_after_stage

from waterdrum_hf.scripts import main


@pytest.mark.end_to_end
def test_a_killed_demo_resumes_to_the_uninterrupted_result(tiny_model, tmp_path, caplog):
    """The killed run built the watermarks and both trained models in its own process; the
    resumed run reuses them and the straight one builds everything again. The metric's
    per-call notes on unscorable samples stay quiet: the demo says them once."""
    argv = ["demo", "--quick", "--show-progress", "false", "--methods", "kl", "--num-seeds", "1"]
    argv += ["--passages-per-owner", "4", "--num-samples", "1", "--null-keys", "10"]  # smaller
    interrupted = tmp_path / "interrupted"
    kill_after_stage(
        [*argv, "--output-dir", str(interrupted)], interrupted / "cache", "model-retrained"
    )
    assert not (interrupted / "report.json").exists()
    assert main([*argv, "--output-dir", str(interrupted)]) == 0
    with caplog.at_level(logging.WARNING):
        assert main([*argv, "--output-dir", str(tmp_path / "straight")]) == 0
    assert not [r for r in caplog.records if r.name == "waterdrum_hf.scoring.inputs"]
    resumed = json.loads((interrupted / "report.json").read_text())
    straight = json.loads((tmp_path / "straight" / "report.json").read_text())
    assert list(straight["runs"]) == ["original", "retrained", "kl"]
    for part in ("models", "curves", "runs", "comparison"):
        assert resumed[part] == straight[part], part
    assert resumed["timings"]["finetune"] < straight["timings"]["finetune"] / 3  # not redone
