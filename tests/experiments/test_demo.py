"""`waterdrum demo --quick` end to end: the benchmark of every method, the report, the cache."""

from __future__ import annotations

import json
import time

import pytest

from waterdrum_hf.cli import main
from waterdrum_hf.experiments.demo import DEFAULT_METHODS, DemoConfig
from waterdrum_hf.keys import random_keys


@pytest.mark.slow
def test_quick_demo_separates_and_benchmarks_every_method_then_resumes(
    tiny_model, tmp_path, capsys
):
    out = tmp_path / "report"
    start = time.perf_counter()
    assert main(["demo", "--quick", "--out", str(out), "--no-progress"]) == 0
    first_run = time.perf_counter() - start
    printed = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    models = report["models"]
    assert list(models) == ["original", "retrained", *DEFAULT_METHODS]
    original, retrained = models["original"], models["retrained"]
    # Perfect unlearning removes the forget owners' watermark and keeps the retain owners'.
    assert retrained["forget"] < original["forget"] - 0.2
    assert retrained["separability_auroc"] > 0.9
    assert retrained["retain"] > retrained["forget"] + 0.3
    assert (
        abs(retrained["forget"] - retrained["forget_null_mean"])
        < 2 * retrained["forget_null_std"] + 0.05
    )
    assert original["forget_p_value"] < 0.05
    assert set(report["curves"]) == set(DEFAULT_METHODS) - {"taskvector"}
    for curve in report["curves"].values():
        assert curve[0]["step"] == 0 and curve[-1]["step"] == DemoConfig.quick().unlearn_steps
    for plot in ("benchmark", "curves", "per_owner", "roc"):
        assert (out / f"{plot}.png").stat().st_size > 10_000
    markdown = (out / "report.md").read_text()
    assert "Closest to retraining" in markdown and "standard deviation" in markdown
    assert "| retrained |" in markdown and "[9/9]" in printed and "done in" in printed
    # Owner keys are secrets: neither the files (cache included) nor the console show them.
    shown = printed + "".join(
        p.read_bytes().decode("latin-1") for p in out.rglob("*") if p.is_file()
    )
    shown += " ".join(str(p) for p in out.rglob("*"))
    assert not any(
        str(key) in shown or f"{key:x}" in shown for key in random_keys(4, seed=0).tolist()
    )
    # A second run resumes from the cache: nothing is recomputed, the report is the same.
    start = time.perf_counter()
    assert main(["demo", "--quick", "--out", str(out), "--no-progress"]) == 0
    assert time.perf_counter() - start < first_run / 3
    assert json.loads((out / "report.json").read_text())["models"] == models


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"owners": 3, "forget": 3}, "forget"),
        ({"epochs": 0}, "epochs"),
        ({"methods": ("kl", "nope")}, "unknown unlearning method 'nope'"),
        ({"learning_rate": 0.0}, "learning_rate"),
    ],
)
def test_demo_config_rejects_impossible_settings(settings, match):
    with pytest.raises(ValueError, match=match):
        DemoConfig(**settings)
