"""The benchmarks' shared timing helper (benchmarks/timing.py): warm-ups are not timed, every
repeat is, settings take turns, and the summary is the median and range of the repeats."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import timing  # noqa: E402


def test_warmups_run_untimed_then_every_repeat_is_timed():
    calls = []
    result = timing.repeat(lambda: calls.append(1), repeats=4, warmup=2)
    assert len(calls) == 6 and len(result.seconds) == 4


def test_settings_take_turns():
    order: list[str] = []
    runs = {name: (lambda name=name: order.append(name)) for name in "ab"}
    result = timing.interleaved(runs, repeats=2, warmup=1)
    assert order == ["a", "b"] * 3 and {len(t.seconds) for t in result.values()} == {2}


def test_median_range_rates_and_per_item():
    t = timing.Timing((4.0, 1.0, 2.0))
    assert (t.median, t.low, t.high) == (2.0, 1.0, 4.0)
    assert t.rate(8).to_dict()["median"] == 4.0 and t.per(2).median == 1.0
    assert t.describe("s", 1) == "2.0 s (1.0-4.0, 3 repeats)"
    with pytest.raises(ValueError, match="repeats must be >= 1"):
        timing.repeat(lambda: None, repeats=0)


def test_results_are_written_with_their_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["x.py", "--repeats", "3"])
    args = argparse.Namespace(results=tmp_path / "r.json", repeats=3, warmup=1, threads=2)
    path = timing.write_results(args, "benchmarks/x.py", {"a": 1}, ["line"])
    record = json.loads(path.read_text())
    assert record["command"] == "python benchmarks/x.py --repeats 3"
    assert record["results"] == {"a": 1} and record["repeats"] == 3
    assert "line" in capsys.readouterr().out
