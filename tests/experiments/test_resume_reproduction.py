"""Killed mid-way, the reproduction resumes from its cache to the results an uninterrupted run
gives."""

from __future__ import annotations

import json

import pytest
from killed_runs import kill_after_stage

from waterdrum_hf.scripts import main


@pytest.mark.end_to_end
def test_a_killed_reproduction_resumes_to_the_uninterrupted_result(tiny_model, tmp_path):
    argv = [
        "reproduce",
        "--quick",
        *("--show-progress", "false"),
        "--settings",
        "no_duplicate",
        "--methods",
        "kl",
        *("--owners", "2", "--passages-per-owner", "4", "--holdout-per-owner", "1"),
        *("--null-keys", "20", "--epochs", "10", "--meta-evaluation", "false"),  # smaller
    ]
    interrupted = tmp_path / "interrupted"
    kill_after_stage(
        [*argv, "--output-dir", str(interrupted)], interrupted / "cache", "generations-no_duplicate"
    )
    assert main([*argv, "--output-dir", str(interrupted)]) == 0
    assert main([*argv, "--output-dir", str(tmp_path / "straight")]) == 0
    resumed = json.loads((interrupted / "results.json").read_text())
    straight = json.loads((tmp_path / "straight" / "results.json").read_text())
    for part in ("settings", "benchmark", "resilience", "mia", "curves"):
        assert resumed[part] == straight[part], part
    # The resumed run reused what the killed one built, and says so; the straight one reused nothing.
    assert resumed["stages"]["reused"] > 0 == straight["stages"]["reused"]
    assert resumed["stages"]["built"] + resumed["stages"]["reused"] == straight["stages"]["built"]
    assert "stages from the cache that took" in (interrupted / "results.md").read_text()
