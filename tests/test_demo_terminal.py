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
