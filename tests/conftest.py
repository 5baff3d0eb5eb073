"""Fixtures of the package's tests (the settings every test shares, and the tiny model, are in
the repository's ``conftest.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def tiny_folder(tiny_model, tmp_path_factory):
    """The tiny model saved as a local model folder, as a user (or lm-eval's
    ``pretrained``) would pass it."""
    folder = tmp_path_factory.mktemp("tiny")
    model, tokenizer = tiny_model
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def run_two_processes():
    """Runs a script under ``torchrun --standalone`` on two CPU processes. The rendezvous port
    is a free one each time (a fixed port collides with other runs on a shared machine); a
    failure shows the script's own error output."""

    def run(script, *args, timeout: int = 600) -> None:
        command = [
            sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
            "2", str(script), *map(str, args),
        ]  # fmt: skip
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        for _ in range(2):  # once more only if another program took the port meanwhile
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
            if done.returncode == 0 or "address already in use" not in done.stderr.lower():
                break
        assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}"

    return run
