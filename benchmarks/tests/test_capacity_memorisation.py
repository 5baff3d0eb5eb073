"""The capacity study's memorisation input is right: ``training_nll`` is the mean per-token
negative log-likelihood, recomputed here with plain torch cross-entropy; and the committed
study's NLL values and its correlations with D2 R² are what its per-seed rows give (scipy's
Pearson r of the per-cell means), so the published "r = -0.82" rests on positive NLLs."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "capacity"


def torch_nll(model, tokenizer, text: str) -> float:
    """Mean negative log-likelihood per predicted token of ``text``: each token after the
    first given its prefix, by ``torch.nn.functional.cross_entropy``."""
    import torch

    ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, :-1].float()
    return float(torch.nn.functional.cross_entropy(logits, ids[0, 1:]))


def test_training_nll_is_the_mean_token_cross_entropy_of_the_training_texts(
    capacity, tiny_model, texts
):
    """``training_nll`` of a model equals the mean over its training texts (retain and forget)
    of each text's token cross-entropy, which is positive."""
    model, tokenizer = tiny_model
    data = SimpleNamespace(retain=texts[:4], forget=texts[4:6])
    loaded = []
    pipeline = SimpleNamespace(load=lambda stage: loaded.append(stage) or model)
    reproduction = SimpleNamespace(pipeline=pipeline, tokenizer=tokenizer)
    got = capacity.training_nll(reproduction, "k=100 stage", data)
    per_text = [torch_nll(model, tokenizer, t) for t in texts[:6]]
    assert loaded == ["k=100 stage"]  # the k = 100 % model's own stage
    assert min(per_text) > 0
    assert got == pytest.approx(float(np.mean(per_text)), rel=1e-4)
    # Fewer texts give another value: every training text is counted.
    assert float(np.mean(per_text[:4])) != pytest.approx(got, rel=1e-4)


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads((RESULTS / "results.json").read_text())


def cell_means(rows: list[dict], column: str) -> dict[tuple[str, int], float]:
    """Each (size, epochs) cell's mean of ``column`` over its seeds."""
    cells: dict[tuple[str, int], list[float]] = {}
    for row in rows:
        cells.setdefault((row["size"], row["epochs"]), []).append(row[column])
    return {cell: float(np.mean(values)) for cell, values in cells.items()}


def test_committed_training_nlls_are_positive(committed):
    """A negative log-likelihood is above 0 on every committed row (a sign error fails)."""
    nlls = [row["nll"] for row in committed["rows"]]
    assert nlls and all(math.isfinite(v) and v > 0 for v in nlls)


@pytest.mark.parametrize("column", ["nll", "carry_over"])
def test_committed_correlation_is_scipys_pearson_r_of_the_cell_means(committed, column):
    """results.md's correlation of each column with mean D2 R² is scipy's Pearson r over the
    cells' means, recomputed from the per-seed rows."""
    x, y = cell_means(committed["rows"], column), cell_means(committed["rows"], "r2")
    r = stats.pearsonr([x[c] for c in x], [y[c] for c in x]).statistic
    text = (RESULTS / "results.md").read_text()
    label = {"nll": "of mean training NLL", "carry_over": "of mean carry-over"}[column]
    found = re.search(re.escape(label) + r", ([+-]\d\.\d\d) ", text)
    assert found, f"no {label} correlation in results.md"
    assert float(found.group(1)) == pytest.approx(r, abs=0.005 + 1e-9)
    if column == "nll":
        assert r < 0  # the published reading: more memorised (lower NLL), better calibration
