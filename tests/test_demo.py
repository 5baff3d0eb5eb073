"""`waterdrum demo` end to end on the built-in small model (small sizes, same code path)."""

from __future__ import annotations

import json

import pytest

from waterdrum_hf._waterfall import random_keys
from waterdrum_hf.cli import main
from waterdrum_hf.demo import DemoConfig


@pytest.mark.slow
def test_demo_sees_forgotten_owners_vanish_after_retraining(tiny_model, tmp_path, capsys):
    out = tmp_path / "report"
    code = main([
        "demo", "--output-dir", str(out), "--num-owners", "4", "--num-forget", "1",
        "--passages-per-owner", "5", "--max-new-tokens", "64", "--null-keys", "8",
        "--show-progress", "false",
    ])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    original, retrained = report["models"]["original"], report["models"]["retrained"]
    # Measured (seed 0, 2 CPU threads): original forget 0.31, retrained forget -0.01 (its
    # null level -0.005 +- 0.11), retain 0.55 on both; self-check 0.83.
    assert original["forget"] - retrained["forget"] > 0.15
    assert retrained["retain"] - retrained["forget"] > 0.2
    assert abs(retrained["forget"] - retrained["forget_null_mean"]) < 0.2
    assert report["watermark_self_check"]["mean"] > 0.5
    assert (out / "waterdrum.png").stat().st_size > 10_000
    markdown = (out / "report.md").read_text()
    assert "| original |" in markdown and "waterdrum.png" in markdown
    # Owner keys are secrets: neither the files nor the console show them.
    shown = markdown + (out / "report.json").read_text() + capsys.readouterr().out
    assert not any(str(key) in shown for key in random_keys(4, seed=0))


def test_demo_config_rejects_impossible_splits():
    with pytest.raises(ValueError, match="num_forget"):
        DemoConfig(num_owners=3, num_forget=3)
    with pytest.raises(ValueError, match="epochs"):
        DemoConfig(epochs=0)
