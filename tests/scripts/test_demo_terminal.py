"""What `waterdrum demo` prints at the end: each model's values, its forget p-value at its
precision, and the empirical null's floor said once, not read as a value."""

from __future__ import annotations

from waterdrum_hf import SetValue, WaterDrumResult
from waterdrum_hf.scripts.demo import print_models


def result(forget_p: float | None) -> WaterDrumResult:
    return WaterDrumResult(
        forget=SetValue(0.5, p_value=forget_p),
        retain=SetValue(0.6),
        num_queries=4,
        num_scored=4,
        num_skipped=0,
        separability_auroc=0.75,
    )


def test_p_values_on_the_nulls_floor_are_marked_and_explained_once(capsys):
    models = {"original": result(1 / 201), "npo": result(1 / 201), "kl": result(0.0312)}
    print_models(models, 200)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["original", "+0.500", "+0.600", "0.750", "0.005*"]
    assert lines[2].split()[-1] == "0.005*"
    assert lines[3].split()[-1] == "0.031"
    assert lines[4] == (
        "* the smallest p-value 200 null keys can give, 1 / (1 + 200): those models are not "
        "ranked by it"
    )
    assert len(lines) == 5


def test_an_analytic_or_missing_p_value_is_shown_at_its_precision(capsys):
    print_models({"original": result(3.2e-8), "retrained": result(None)}, 0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-1] == "3.2e-08" and lines[2].split()[-1] == "–"
    assert len(lines) == 3


def test_the_quickstarts_thread_figures_are_the_benchmarks():
    """The quickstart's reason for one thread (weights differ at 1 and 2 threads) and its cost
    (2 threads' time over 1 thread's) are benchmarks/results/demo_threads.json's."""
    import json
    import re
    from pathlib import Path

    from waterdrum_hf.experiments.demo import THREADS

    root = Path(__file__).resolve().parents[2]
    results = json.loads((root / "benchmarks/results/demo_threads.json").read_text())["results"]
    text = " ".join((root / "docs/quickstart.md").read_text().split())
    assert THREADS == 1 and "The demo runs torch on one thread" in text
    assert results["same_weights_at_1_and_2_threads"] is False
    assert "at 1 and at 2 threads, the built-in model's weights differ" in text
    found = re.search(r"2 threads took (\S+)x the time of one for fine-tuning and (\S+)x", text)
    for shown, work in zip(found.groups(), ("fine-tuning", "sampling"), strict=True):
        assert shown == f"{1 / results[work]['speedup_2_over_1']:.2f}", work
