"""Report rendering: strict JSON, a summary that explains itself, honest plots."""

from __future__ import annotations

import json
import math

import pytest
from tokenizer_builders import word_texts, word_tokenizer

from waterdrum_hf import WaterDrumResult, compute_waterdrum, report


@pytest.fixture(scope="module")
def models():
    tok = word_tokenizer(512)
    owners = [11, 22, 33]
    texts = [word_texts(512, 3, 30, seed=i) for i in range(6)]

    def scored(shift):
        predictions = texts[shift:] + texts[:shift]
        return compute_waterdrum(
            predictions,
            [owners[i % 3] for i in range(6)],
            tok,
            forget_ids=[33],
            owner_names={11: "alice", 22: "bob", 33: "carol"},
            null_keys=9,
            return_details=True,
        )

    results = {"original": scored(0), "retrained": scored(1), "kl": scored(2), "npo": scored(3)}
    results["npo"]["per_owner"]["carol"].pop("value")  # an owner with nothing scored
    results["npo"]["query_values"][2] = math.nan
    return results


def test_write_report_files_json_and_markdown(models, tmp_path):
    curves = {
        "kl": [{"step": 0, "forget": 0.5, "retain": 0.6}, {"step": 4, "forget": 0.1, "retain": 0.5}]
    }
    written = report.write_report(
        {"models": models, "curves": curves, "timings": {"a": 1.5}}, tmp_path
    )
    names = {p.name for p in written}
    assert names == {
        "report.json",
        "report.md",
        "benchmark.png",
        "curves.png",
        "per_owner.png",
        "roc.png",
    }
    text = (tmp_path / "report.json").read_text()
    assert "NaN" not in text and json.loads(text)["models"]["npo"]["query_values"][2] is None
    markdown = (tmp_path / "report.md").read_text()
    assert report.Q_DEFINITION in markdown and "standard deviation" in markdown
    assert "samples scored / skipped" in markdown and "18 / 0" in markdown
    best, _ = report.closest_to_retrained(models)
    assert f"**Closest to retraining:** `{best}`" in markdown
    assert "![roc](roc.png)" in markdown and "Time: 2 s" in markdown


def test_closest_to_retrained_is_the_nearest_point(models):
    best, distance = report.closest_to_retrained(models)
    target = models["retrained"]
    distances = {
        n: math.hypot(m["forget"] - target["forget"], m["retain"] - target["retain"])
        for n, m in models.items()
        if n in ("kl", "npo")
    }
    assert best == min(distances, key=distances.get) and distance == pytest.approx(
        min(distances.values())
    )


def test_an_owner_without_scored_queries_gets_no_bar(models, tmp_path, monkeypatch):
    saved = []
    monkeypatch.setattr(report, "save_figure", lambda fig, path: saved.append(fig) or path)
    report.plot_per_owner(models, tmp_path / "p.png")
    (ax,) = saved[0].axes
    bars = [p for p in ax.patches if p.get_width() < 0.5]  # bars, not null bands
    values = sum("value" in e for m in models.values() for e in m["per_owner"].values())
    assert len(bars) == values == 11
    assert any(t.get_text() == "n/a" for t in ax.texts)
    assert {t.get_text() for t in ax.get_xticklabels()} == {"alice", "bob", "carol\n(forget)"}


def test_typed_flat_and_saved_results_make_the_same_report(models, tmp_path):
    """A report reads results as WaterDrumResult: typed ones, flat dicts and a report.json read
    back (NaN saved as null) give the same files."""
    typed = {name: WaterDrumResult.from_dict(m) for name, m in models.items()}
    report.write_report({"models": typed}, tmp_path / "typed")
    report.write_report({"models": models}, tmp_path / "flat")
    saved = json.loads((tmp_path / "flat" / "report.json").read_text())
    report.write_report(saved, tmp_path / "saved")
    for name in ("report.json", "report.md", "per_owner.png"):
        files = {(tmp_path / run / name).read_bytes() for run in ("typed", "flat", "saved")}
        assert len(files) == 1, name
    assert report.closest_to_retrained(typed) == report.closest_to_retrained(saved["models"])
    with pytest.raises(ValueError, match=r"\['forget_pvalue'\] are not keys"):
        report.write_report(
            {"models": {"x": {**saved["models"]["kl"], "forget_pvalue": 0.1}}}, tmp_path
        )
