"""WaterDrumCallback on two processes: logged once, with the same values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.end_to_end
def test_two_processes_log_once_with_the_same_values(tiny_model, tmp_path, run_two_processes):
    run_two_processes(
        Path(__file__).resolve().parents[1] / "programs" / "distributed_callback.py", tmp_path
    )
    reports = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    for report in reports:
        steps = [e["step"] for e in report["log_history"] if "waterdrum/forget" in e]
        assert steps == [0, 1, 2]  # once per evaluation
        assert report["processes"] == 2
    values = [[e for e in r["log_history"] if "waterdrum/forget" in e] for r in reports]
    for a, b in zip(*values, strict=True):
        assert a["waterdrum/forget"] == b["waterdrum/forget"]  # broadcast from the main process
    # Every process generated: the main process scored all queries of both shares.
    assert reports[0]["log_history"][0]["waterdrum/num_queries"] == 6
