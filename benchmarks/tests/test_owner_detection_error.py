"""The owner-detection error study (``benchmarks/owner_detection_error.py``): the library's
Holm-adjusted owner verdicts keep the chance that some owner reads detected on unwatermarked
text at the level asked for."""

from __future__ import annotations

from pathlib import Path

from waterdrum_hf import NullConfig


def test_some_owner_of_20_without_a_watermark_reads_detected_at_most_5_percent(monkeypatch):
    """``benchmarks/owner_detection_error.py`` in small (its first 300 analytic draws): on text
    that holds no owner's watermark, some of 20 owners reads detected in at most 5 % of draws
    (within the binomial band) by the library's verdict, and in most draws (1 - 0.95^20 = 64 %
    expected) by unadjusted p-values, so dropping the adjustment fails here."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))
    import owner_detection_error as study

    counts = study.simulate(study.Setting(owners=20), NullConfig("analytic"), draws=300)
    assert study.within_band(counts.some_owner_holm, counts.draws), counts
    assert counts.some_owner_unadjusted > 0.5 * counts.draws, counts
