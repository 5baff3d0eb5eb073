"""Runs of the ``waterdrum`` command killed once a given stage is in its cache (the resume
tests)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


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
