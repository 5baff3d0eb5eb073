"""Killed mid-way, the demo and the reproduction resume from their caches to the results an
uninterrupted run gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from waterdrum_hf.cli import main


def kill_after_stage(argv: list[str], cache: Path, stage_prefix: str, timeout: float = 600) -> None:
    """Run ``waterdrum ARGV`` in a subprocess and SIGKILL it once a stage folder starting with
    ``stage_prefix`` is complete (renamed into place) in ``cache``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "waterdrum_hf", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    deadline = time.monotonic() + timeout
    try:
        while not any(p.name.startswith(stage_prefix) for p in cache.glob("*") if p.is_dir()):
            assert process.poll() is None, (
                "the run ended before the stage it should be killed after"
            )
            assert time.monotonic() < deadline, "the stage never completed"
            time.sleep(0.2)
    finally:
        process.kill()
        process.wait()


@pytest.mark.slow
def test_a_killed_demo_resumes_to_the_uninterrupted_result(tiny_model, tmp_path):
    argv = ["demo", "--quick", "--no-progress", "--methods", "kl,taskvector"]
    interrupted = tmp_path / "interrupted"
    kill_after_stage([*argv, "--out", str(interrupted)], interrupted / "cache", "model-retrained")
    assert not (interrupted / "report.json").exists()
    assert main([*argv, "--out", str(interrupted)]) == 0
    assert main([*argv, "--out", str(tmp_path / "straight")]) == 0
    resumed = json.loads((interrupted / "report.json").read_text())
    straight = json.loads((tmp_path / "straight" / "report.json").read_text())
    assert resumed["models"] == straight["models"] and resumed["curves"] == straight["curves"]
    assert resumed["timings"]["finetune"] < straight["timings"]["finetune"] / 3  # not redone


@pytest.mark.slow
def test_a_killed_reproduction_resumes_to_the_uninterrupted_result(tiny_model, tmp_path):
    argv = [
        "reproduce",
        "--quick",
        "--no-progress",
        "--settings",
        "no_duplicate",
        "--methods",
        "kl",
    ]
    interrupted = tmp_path / "interrupted"
    kill_after_stage(
        [*argv, "--out", str(interrupted)], interrupted / "cache", "generations-no_duplicate"
    )
    assert main([*argv, "--out", str(interrupted)]) == 0
    assert main([*argv, "--out", str(tmp_path / "straight")]) == 0
    resumed = json.loads((interrupted / "results.json").read_text())
    straight = json.loads((tmp_path / "straight" / "results.json").read_text())
    for part in ("settings", "benchmark", "resilience", "mia", "curves"):
        assert resumed[part] == straight[part], part
    # The resumed run reused what the killed one built, and says so; the straight one reused nothing.
    assert resumed["stages"]["reused"] > 0 == straight["stages"]["reused"]
    assert resumed["stages"]["built"] + resumed["stages"]["reused"] == straight["stages"]["built"]
    assert "stages from the cache that took" in (interrupted / "results.md").read_text()
