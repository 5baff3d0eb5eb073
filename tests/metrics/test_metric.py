"""The metric: flat results (typed inside), per-query pooling, null verdicts, owner names; the `evaluate` module."""

from __future__ import annotations

import json
import logging
import math
import shutil
import subprocess
import sys
import textwrap
import warnings
import zipfile

import evaluate
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from tokenizer_builders import word_texts, word_tokenizer

import waterdrum_hf
from waterdrum_hf import (
    OwnerValue,
    SetValue,
    WaterDrumResult,
    holm_adjusted,
    verify_texts,
    waterdrum_metrics,
    waterdrum_result,
)
from waterdrum_hf.config import KEYWORDS, NullConfig, WaterDrumConfig
from waterdrum_hf.metrics.loading import metric_path
from waterdrum_hf.scoring.analytic_null import AnalyticNull, PositionMoments
from waterdrum_hf.scoring.inputs import Queries
from waterdrum_hf.scoring.nulls import AnalyticReading
from waterdrum_hf.scoring.pooling import pool_queries, sample_weights

N = 4096
KEYS = [3_000_000_017, 3_999_999_929, 2_718_281_828, 1_414_213_562]  # distinctive: leaks show
ANALYTIC = WaterDrumConfig(null=NullConfig("analytic"))
"""The evaluate module's default scoring (its flat settings unset)."""


def cfg(**keywords):
    """The configuration of the evaluate module's flat keywords (the one mapping)."""
    return WaterDrumConfig.from_keywords(keywords)


@pytest.fixture(scope="module")
def tok():
    return word_tokenizer(N)


@pytest.fixture(scope="module")
def batch():
    texts = word_texts(N, 24, 40, seed=11) + ["", "w3"]  # two texts with nothing to count
    owners = [KEYS[i % 4] for i in range(24)] + [KEYS[3], KEYS[0]]
    return texts, owners


@pytest.fixture(scope="module")
def per_query():
    """8 queries of 3 samples of different lengths (one sample unscorable)."""
    rng = np.random.default_rng(3)
    samples = [word_texts(N, 1, int(rng.integers(5, 60)), seed=100 + i)[0] for i in range(24)]
    samples[5] = "w9"  # one token: nothing to count
    nested = [samples[i : i + 3] for i in range(0, 24, 3)]
    owners = [KEYS[i % 4] for i in range(8)]
    return nested, owners


def hand_pooled(nested, owners, tok, pooling):
    """Per-query values computed from per-sample scores and counted-token numbers."""
    values = []
    for samples, owner in zip(nested, owners, strict=True):
        scores = verify_texts(samples, owner, tok)
        counts = np.array([len(s.split()) - 1 for s in samples])  # word tokenizer: 1 word, 1 id
        ok = counts > 0
        if pooling == "tokens":
            values.append((scores[ok] * counts[ok]).sum() / counts[ok].sum())
        else:
            values.append(scores[ok].mean())
    return np.array(values)


def test_load_metric_is_offline_and_by_absolute_path():
    metric = waterdrum_hf.load_metric()
    assert metric.name == "waterdrum"
    assert metric_path().is_absolute() and (metric_path() / "waterdrum.py").is_file()


def test_compute_matches_the_verifier_and_sklearn(tok, batch):
    texts, owners = batch
    result = waterdrum_hf.load_metric().compute(
        predictions=texts,
        references=owners,
        watermark_tokenizer=tok,
        forget_ids=[KEYS[3]],
        return_scores=True,
    )
    scores = verify_texts(texts, owners, tok)
    np.testing.assert_allclose(result["scores"], scores)
    owners = np.array(owners)
    ok = ~np.isnan(scores)
    assert result["forget"] == pytest.approx(scores[(owners == KEYS[3]) & ok].mean())
    assert result["retain"] == pytest.approx(scores[(owners != KEYS[3]) & ok].mean())
    assert "overall" not in result and "per_owner" not in result
    assert result["num_scored"] == 24 and result["num_skipped"] == 2
    assert result["num_queries"] == 26
    labels = (owners[ok] != KEYS[3]).astype(int)
    assert result["separability_auroc"] == pytest.approx(roc_auc_score(labels, scores[ok]))


@pytest.mark.parametrize("pooling", ["tokens", "mean"])
def test_samples_pool_per_query_like_a_hand_computation(tok, per_query, pooling):
    nested, owners = per_query
    expected = hand_pooled(nested, owners, tok, pooling)
    forget = np.isin(owners, KEYS[2:])
    result = waterdrum_metrics(
        nested,
        owners,
        tok,
        config=cfg(pooling=pooling),
        forget_ids=KEYS[2:],
        return_details=True,
    )
    np.testing.assert_allclose(result["query_values"], expected)
    assert result["forget"] == pytest.approx(expected[forget].mean())
    assert result["retain"] == pytest.approx(expected[~forget].mean())
    assert result["separability_auroc"] == pytest.approx(
        roc_auc_score((~forget).astype(int), expected)
    )
    assert (result["num_queries"], result["num_scored"], result["num_skipped"]) == (8, 23, 1)
    # Flat samples grouped by query_ids, in any order, are the same queries.
    flat = [(q, s, owners[q]) for q, samples in enumerate(nested) for s in samples][::-1]
    grouped = waterdrum_metrics(
        [s for _, s, _ in flat],
        [o for *_, o in flat],
        tok,
        config=cfg(pooling=pooling),
        forget_ids=KEYS[2:],
        query_ids=[f"q{q}" for q, *_ in flat],
    )
    assert grouped["forget"] == pytest.approx(result["forget"])
    assert grouped["retain"] == pytest.approx(result["retain"])


def test_token_pooling_differs_from_the_mean_of_samples(tok, per_query):
    nested, owners = per_query
    tokens = waterdrum_metrics(nested, owners, tok, return_details=True)["query_values"]
    means = waterdrum_metrics(
        nested,
        owners,
        tok,
        config=cfg(pooling="mean"),
        return_details=True,
    )
    assert not np.allclose(tokens, means["query_values"])


def test_generate_output_goes_in_as_it_is(tiny_model):
    """`generate` returns samples per query; the metric takes them with one id per query."""
    model, tokenizer = tiny_model
    queries = ["The class statement", "A lambda expression", "The import system"]
    completions = waterdrum_hf.generate(
        model, tokenizer, queries, num_samples=2, max_new_tokens=12, seed=0
    )
    metric = waterdrum_hf.load_metric()
    result = metric.compute(
        predictions=completions,
        references=KEYS[:3],
        watermark_tokenizer=tokenizer,
        forget_ids=[KEYS[0]],
    )
    assert result["num_queries"] == 3 and result["num_scored"] + result["num_skipped"] == 6
    direct = waterdrum_metrics(
        completions, KEYS[:3], tokenizer, config=ANALYTIC, forget_ids=[KEYS[0]]
    )  # the module's default null: the analytic one
    assert result == pytest.approx(direct)


def test_results_are_flat_scalars_that_log_and_save_as_they_are(tok, batch, tmp_path):
    texts, owners = batch
    result = waterdrum_metrics(
        texts,
        owners,
        tok,
        config=cfg(null_keys=8),
        forget_ids=[KEYS[3]],
    )
    assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in result.values())
    assert None not in result.values()
    for prefix in ("forget", "retain"):
        assert {
            f"{prefix}_null_mean",
            f"{prefix}_null_std",
            f"{prefix}_z",
            f"{prefix}_p_value",
        } <= set(result)
    path = evaluate.save(str(tmp_path), **result)
    saved = json.loads(path.read_text())
    assert saved["forget"] == result["forget"]


def test_without_forget_ids_only_overall(tok, batch):
    texts, owners = batch
    result = waterdrum_metrics(texts, owners, tok)
    assert {"forget", "retain", "separability_auroc"}.isdisjoint(result)
    assert result["overall"] == pytest.approx(np.nanmean(verify_texts(texts, owners, tok)))
    assert "scores" not in result
    # The analytic null's statistics (the default), no count of missing forget ids.
    null = {f"overall_{part}" for part in ("null_mean", "null_std", "z", "p_value")}
    assert set(result) == {"overall", "num_queries", "num_scored", "num_skipped", *null}


def test_add_batch_and_add_accumulate_like_one_compute(tok, batch, per_query):
    texts, owners = batch
    direct = waterdrum_metrics(texts, owners, tok, config=ANALYTIC, forget_ids=[KEYS[3]])
    metric = evaluate.load(str(metric_path()))
    metric.add_batch(predictions=texts[:10], references=owners[:10])
    for text, owner in zip(texts[10:], owners[10:], strict=True):
        metric.add(prediction=text, reference=owner)
    incremental = metric.compute(watermark_tokenizer=tok, forget_ids=[KEYS[3]])
    assert incremental == pytest.approx(direct)
    nested, query_owners = per_query
    metric.add_batch(predictions=nested[:4], references=query_owners[:4])
    metric.add_batch(predictions=nested[4:], references=query_owners[4:])
    assert metric.compute(watermark_tokenizer=tok) == pytest.approx(
        waterdrum_metrics(nested, query_owners, tok, config=ANALYTIC)
    )


def test_combine_with_another_module(tok, batch, tmp_path):
    other = tmp_path / "text_count"
    other.mkdir()
    (other / "text_count.py").write_text(
        textwrap.dedent("""
        import datasets
        import evaluate

        class TextCount(evaluate.Metric):
            def _info(self):
                return evaluate.MetricInfo(description="", citation="", features=datasets.Features(
                    {"predictions": datasets.Value("string"), "references": datasets.Value("int64")}))

            def _compute(self, predictions, references, **kwargs):
                return {"text_count": len(predictions)}
    """)
    )
    texts, owners = batch
    combined = evaluate.combine([str(metric_path()), str(other)])
    result = combined.compute(
        predictions=texts, references=owners, watermark_tokenizer=tok, forget_ids=[KEYS[3]]
    )
    assert result["text_count"] == len(texts)
    assert result["forget"] == pytest.approx(
        waterdrum_metrics(texts, owners, tok, forget_ids=[KEYS[3]])["forget"]
    )


def test_null_keys_report_the_no_watermark_level(tok, batch):
    texts, owners = batch
    result = waterdrum_metrics(
        texts,
        owners,
        tok,
        config=cfg(null_keys=8),
        forget_ids=[KEYS[3]],
    )
    null = waterdrum_hf.null_reference(texts, tok, num_keys=8, exclude_ids=KEYS)
    owners, scored = np.array(owners), ~np.isnan(verify_texts(texts, owners, tok))
    key_means = null.scores[(owners == KEYS[3]) & scored].mean(axis=0)  # forget set, per key
    assert result["forget_null_mean"] == pytest.approx(key_means.mean())
    assert result["forget_null_std"] == pytest.approx(key_means.std())
    assert result["forget_z"] == pytest.approx(
        (result["forget"] - key_means.mean()) / key_means.std()
    )
    detailed = waterdrum_metrics(
        texts,
        owners.tolist(),
        tok,
        config=cfg(null_keys=8),
        forget_ids=[KEYS[3]],
        return_details=True,
    )
    np.testing.assert_allclose(detailed["query_null_means"], null.scores.mean(axis=1))
    assert result["forget_p_value"] == pytest.approx(
        (1 + (key_means >= result["forget"]).sum()) / 9
    )


def test_the_metric_null_is_the_verifier_null_reference(tok, batch):
    """One null computation: on flat texts (a query each) the metric's null statistics are
    the null reference's, exactly."""
    texts, owners = batch
    null = waterdrum_hf.Verifier(tok).null_reference(texts, 8, exclude_ids=KEYS, seed=5)
    result = waterdrum_metrics(
        texts,
        owners,
        tok,
        config=cfg(null_keys=8, null_seed=5),
        return_details=True,
    )
    np.testing.assert_array_equal(result["query_null_means"], null.scores.mean(axis=1))
    assert result["overall_null_mean"] == pytest.approx(null.mean, rel=1e-12)
    assert result["overall_null_std"] == pytest.approx(null.std, rel=1e-12)
    assert result["overall_p_value"] == (1 + (null.key_means >= result["overall"]).sum()) / 9


def test_typed_result_is_the_flat_dict(tok, batch):
    texts, owners = batch
    with pytest.warns(UserWarning, match="own no query"):
        typed = waterdrum_result(
            texts,
            owners,
            tok,
            config=cfg(null_keys=6),
            forget_ids=[KEYS[3], 12345],
            return_details=True,
        )
        flat = waterdrum_metrics(
            texts,
            owners,
            tok,
            config=cfg(null_keys=6),
            forget_ids=[KEYS[3], 12345],
            return_details=True,
        )
    assert isinstance(typed.forget, SetValue) and typed.overall is None
    assert typed.forget.value == flat["forget"] and typed.retain.value == flat["retain"]
    assert typed.forget.p_value == flat["forget_p_value"] and typed.retain.z == flat["retain_z"]
    assert typed.forget.null_mean == flat["forget_null_mean"]
    assert typed.separability_auroc == flat["separability_auroc"]
    assert (typed.num_queries, typed.num_scored, typed.num_skipped) == (26, 24, 2)
    assert typed.num_missing_forget_ids == flat["num_missing_forget_ids"] == 1
    owner = typed.per_owner["owner-4"]
    assert isinstance(owner, OwnerValue) and owner.forget
    assert owner.value == flat["per_owner"]["owner-4"]["value"]
    assert owner.p_value == flat["per_owner"]["owner-4"]["p_value"]
    assert typed.query_owners == tuple(flat["query_owners"])
    np.testing.assert_array_equal(typed.scores, flat["scores"])
    assert typed.to_dict().keys() == flat.keys()
    assert set(typed.scalars()) <= set(WaterDrumResult.scalar_names())
    assert not any(isinstance(v, (dict, list, tuple)) for v in typed.scalars().values())


def test_to_dict_and_from_dict_round_trip_also_through_json(tok, batch):
    from waterdrum_hf.report import json_text

    texts, owners = batch
    for options in (
        {},
        {"forget_ids": [KEYS[3]], "config": cfg(null_keys=4), "return_details": True},
        {"config": cfg(null_keys=3), "return_scores": True},
    ):
        typed = waterdrum_result(texts, owners, tok, **options)
        assert WaterDrumResult.from_dict(typed.to_dict()) == typed
        saved = WaterDrumResult.from_dict(json.loads(json_text(typed.to_dict())))  # NaN -> null
        assert saved.scalars() == typed.scalars() and saved.per_owner == typed.per_owner
        if typed.scores is not None:
            np.testing.assert_array_equal(saved.scores, typed.scores)  # NaN back as NaN
    minimal = {"overall": 0.5, "num_queries": 2, "num_scored": 2, "num_skipped": 0}
    assert WaterDrumResult.from_dict(minimal).to_dict() == minimal
    assert WaterDrumResult.from_dict(minimal).overall == SetValue(0.5)
    with pytest.raises(ValueError, match=r"\['forget_pvalue'\] are not keys"):
        WaterDrumResult.from_dict({**minimal, "forget_pvalue": 0.1})
    with pytest.raises(ValueError, match="lacks \\['num_queries'\\]"):
        WaterDrumResult.from_dict({"overall": 0.5, "num_scored": 2, "num_skipped": 0})
    with pytest.raises(ValueError, match="not owner fields"):
        WaterDrumResult.from_dict({**minimal, "per_owner": {"a": {"num_queries": 1, "valu": 2}}})


def test_scalar_names_are_every_scalar_a_result_can_hold(tok, batch):
    texts, owners = batch
    with pytest.warns(UserWarning):
        both = waterdrum_metrics(
            texts,
            owners,
            tok,
            config=cfg(null_keys=4),
            forget_ids=[KEYS[3], 99],
        )
        intervals = waterdrum_metrics(
            texts,
            owners,
            tok,
            config=cfg(confidence=0.9),
            forget_ids=[KEYS[3], 99],
        )
    overall = waterdrum_metrics(texts, owners, tok, config=cfg(null_keys=4, confidence=0.9))
    names = set(both) | set(intervals) | set(overall)
    assert names == set(WaterDrumResult.scalar_names())


def test_confidence_intervals_are_flat_repeatable_and_hold_the_value(tok, batch):
    texts, owners = batch
    options = {"forget_ids": [KEYS[3]], "return_details": True}
    result = waterdrum_result(texts, owners, tok, config=cfg(confidence=0.9), **options)
    flat = result.to_dict()
    assert flat["confidence"] == 0.9
    for name in ("forget", "retain", "separability_auroc"):
        assert flat[f"{name}_ci_low"] <= flat[name] <= flat[f"{name}_ci_high"]
        assert flat[f"{name}_ci_low"] < flat[f"{name}_ci_high"]
    assert (result.forget.ci_low, result.forget.ci_high) == (
        flat["forget_ci_low"],
        flat["forget_ci_high"],
    )
    for owner in result.per_owner.values():  # 6 or 7 scored queries each
        assert owner.ci_low <= owner.value <= owner.ci_high
    again = waterdrum_result(texts, owners, tok, config=cfg(confidence=0.9), **options)  # same
    assert again.scalars() == result.scalars() and again.per_owner == result.per_owner
    other = waterdrum_metrics(
        texts, owners, tok, config=cfg(confidence=0.9, bootstrap_seed=1), **options
    )
    assert other["forget_ci_low"] != flat["forget_ci_low"]  # the seed is what fixes it
    fewer = waterdrum_metrics(
        texts,
        owners,
        tok,
        config=cfg(confidence=0.9, bootstrap_resamples=100),
        **options,
    )
    assert fewer["forget_ci_low"] != flat["forget_ci_low"]  # so is the number of resamples
    assert other["forget"] == flat["forget"]  # and it touches no value
    wider = waterdrum_metrics(texts, owners, tok, config=cfg(confidence=0.99), **options)
    assert wider["forget_ci_low"] < flat["forget_ci_low"] < flat["forget_ci_high"]
    assert flat["forget_ci_high"] < wider["forget_ci_high"]
    saved = WaterDrumResult.from_dict(json.loads(json.dumps(flat)))
    assert saved.scalars() == result.scalars() and saved.per_owner == result.per_owner
    module = waterdrum_hf.load_metric().compute(
        predictions=texts, references=owners, watermark_tokenizer=tok, confidence=0.9, **options
    )
    assert {k: module[k] for k in result.scalars()} == result.scalars()
    plain = waterdrum_metrics(texts, owners, tok, forget_ids=[KEYS[3]])
    assert not any("ci_" in k for k in plain) and "confidence" not in plain  # off by default


def test_sample_weights_are_each_token_sum_s_share_of_its_query_value():
    """Query 0: samples of 1 and 3 counted tokens; query 1: one unscored sample; query 2: a
    sample of one token and an unscored one. Token pooling weighs 1 / T_q, mean pooling
    1 / (S_q T_s); unscored samples weigh nothing."""
    queries = Queries(["text"] * 5, np.array([0, 0, 1, 2, 2]), np.array([7, 8, 9]))
    counts = np.array([1, 3, 0, 1, 0])
    np.testing.assert_allclose(sample_weights(counts, queries, "tokens"), [1 / 4, 1 / 4, 0, 1, 0])
    np.testing.assert_allclose(sample_weights(counts, queries, "mean"), [1 / 2, 1 / 6, 0, 1, 0])


@pytest.mark.parametrize("pooling", ["tokens", "mean"])
def test_a_query_without_a_counted_token_reads_numpys_nan(pooling):
    """Query 1 has only an unscored sample: its value is ``np.nan`` itself, not 0/0 (whose
    NaN has the sign bit set on x86: np.signbit and the bytes would tell)."""
    queries = Queries(["text"] * 3, np.array([0, 0, 1]), np.array([7, 8]))
    sums, counts = np.array([[0.5, 1.0], [1.5, -1.0], [0.0, 0.0]]), np.array([1, 3, 0])
    values = pool_queries(sums, counts, queries, pooling)
    first = [0.5, 0.0] if pooling == "tokens" else [(0.5 + 0.5) / 2, (1.0 - 1 / 3) / 2]
    np.testing.assert_allclose(values[0], first)
    assert values[1].tobytes() == np.array([np.nan, np.nan]).tobytes()


def test_an_analytic_null_without_spread_gives_no_p_value():
    """Vocabulary 2, one context followed by both tokens with equal weight: every key reads
    both positions once, so the null has no spread, hence no p-value (not an error)."""
    null = AnalyticNull(
        np.array([[0], [0]]), np.array([0, 1]), np.array([0, 0]), 1, PositionMoments(0.0, 0.5, 2)
    )
    reading = AnalyticReading(null, np.array([0.5]), np.array([0]))
    assert reading.statistics(0.3, np.array([True])) == (0.0, 0.0, None)
    means = reading.query_means(np.array([True, False]))  # per query: NaN where unscored
    assert means[0] == 0.0 and np.isnan(means[1])


def test_intervals_resample_queries_within_each_owner(tok):
    """Two retain owners whose queries all read the same (one repeated text each) and one with
    a single query: resampling within owners keeps the retain value exactly, so its interval
    has no width (resampling across owners would swap their values in and out). An owner, or a
    set, with no owner of two scored queries has no spread to resample and gets no interval."""
    first, second = word_texts(N, 2, 40, seed=5)
    texts = [first] * 4 + [second] * 4 + word_texts(N, 5, 40, seed=6) + ["w1 w2 w3 w4 w5"]
    owners = [KEYS[0]] * 4 + [KEYS[1]] * 4 + [KEYS[2]] * 5 + [KEYS[3]]
    result = waterdrum_result(
        texts,
        owners,
        tok,
        config=cfg(confidence=0.95),
        forget_ids=[KEYS[2]],
        return_details=True,
    )
    assert result.retain.ci_low == pytest.approx(result.retain.value, abs=1e-12)
    assert result.retain.ci_high == pytest.approx(result.retain.value, abs=1e-12)
    assert result.forget.ci_high - result.forget.ci_low > 0.01  # varied queries do vary
    assert result.per_owner["owner-1"].ci_high == pytest.approx(result.per_owner["owner-1"].value)
    lone = result.per_owner["owner-4"]
    assert lone.num_scored_queries == 1 and lone.ci_low is None and lone.ci_high is None
    alone = waterdrum_metrics(
        texts,
        owners,
        tok,
        config=cfg(confidence=0.95),
        forget_ids=[KEYS[3]],
    )
    assert "forget_ci_low" not in alone and "retain_ci_low" in alone
    assert alone["separability_auroc_ci_low"] <= alone["separability_auroc"]


def test_owners_are_resampled_only_when_their_values_are_reported(tok, monkeypatch):
    """The bootstrap resamples each owner's value only for ``per_owner`` (with details): the
    sets' intervals alone need no per-owner replicates, which cost a pass per owner."""

    resampled = []
    import waterdrum_hf.scoring.intervals as intervals

    replicates = intervals.bootstrap_replicates

    def spy(values, strata, masks, **kwargs):
        resampled.append({kind for kind, _ in masks})
        return replicates(values, strata, masks, **kwargs)

    monkeypatch.setattr(intervals, "bootstrap_replicates", spy)
    texts = word_texts(N, 12, 30, seed=8)
    owners = [KEYS[i % 3] for i in range(12)]
    plain = waterdrum_result(
        texts,
        owners,
        tok,
        config=cfg(confidence=0.9),
        forget_ids=[KEYS[0]],
    )
    detailed = waterdrum_result(
        texts,
        owners,
        tok,
        config=cfg(confidence=0.9),
        forget_ids=[KEYS[0]],
        return_details=True,
    )
    assert resampled == [{"set"}, {"set", "owner"}]
    assert (plain.forget.ci_low, plain.retain.ci_high) == (
        detailed.forget.ci_low,
        detailed.retain.ci_high,
    )


def watermarked_words(key: int, vocab: int, num_texts: int, length: int, seed: int) -> list[str]:
    """Texts whose every next word is, of 8 random candidates, the one Waterfall's function
    (k_p = 1) rates highest under ``key`` after the previous word: a strong watermark."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(num_texts):
        words = [int(rng.integers(vocab))]
        for _ in range(length - 1):
            perm = np.random.RandomState((key, words[-1])).permutation(vocab)
            candidates = rng.integers(vocab, size=8)
            words.append(int(candidates[np.argmax(np.cos(2 * np.pi * perm[candidates] / vocab))]))
        texts.append(" ".join(f"w{w}" for w in words))
    return texts


def test_p_value_is_calibrated_on_unwatermarked_text_and_small_on_watermarked_text():
    vocab = 256
    tok = word_tokenizer(vocab)
    rng = np.random.default_rng(0)
    rejected = 0
    for draw in range(200):
        texts = word_texts(vocab, 4, 12, seed=1000 + draw, zipf=None)
        owner = int(rng.integers(2**32))
        result = waterdrum_metrics(
            texts,
            [owner] * 4,
            tok,
            config=cfg(null_keys=19, null_seed=draw),
        )
        rejected += result["overall_p_value"] <= 0.05
    assert 0.02 <= rejected / 200 <= 0.08

    texts = watermarked_words(KEYS[0], vocab, 4, 12, seed=1)
    result = waterdrum_metrics(texts, [KEYS[0]] * 4, tok, config=cfg(null_keys=200))
    assert result["overall"] > 0.5 and result["overall_p_value"] < 0.01
    assert result["overall_z"] > 3


@pytest.mark.parametrize("pooling", ["tokens", "mean"])
@pytest.mark.parametrize("scheme", ["waterfall", "kgw"])
def test_analytic_null_agrees_with_the_empirical_one(pooling, scheme):
    """Same keys as the empirical null; for sets and owners, null mean and spread within the
    sampling error of 1,500 random keys, and the same p-values to within a few hundredths."""
    vocab = 96  # small N: 1,500 keys stay cheap, and Zipf ids repeat pairs often
    tok = word_tokenizer(vocab)
    rng = np.random.default_rng(3)
    samples = [word_texts(vocab, 1, int(rng.integers(5, 60)), seed=i)[0] for i in range(24)]
    samples[5] = "w9"  # one token: nothing to count
    nested = [samples[i : i + 3] for i in range(0, 24, 3)]
    owners = [KEYS[i % 4] for i in range(8)]
    options = {"forget_ids": [KEYS[1]]}
    analytic_config = cfg(null="analytic", pooling=pooling, scheme=scheme)
    empirical_config = cfg(null_keys=1500, pooling=pooling, scheme=scheme)
    analytic = waterdrum_metrics(nested, owners, tok, config=analytic_config, **options)
    empirical = waterdrum_metrics(nested, owners, tok, config=empirical_config, **options)
    assert analytic.keys() == empirical.keys()
    for name in ("forget", "retain"):
        assert analytic[name] == empirical[name]
        std = analytic[f"{name}_null_std"]
        assert empirical[f"{name}_null_std"] == pytest.approx(std, rel=0.08)
        assert abs(empirical[f"{name}_null_mean"] - analytic[f"{name}_null_mean"]) < 0.12 * std
        assert analytic[f"{name}_p_value"] == pytest.approx(empirical[f"{name}_p_value"], abs=0.05)
    detailed = waterdrum_result(
        nested,
        owners,
        tok,
        config=analytic_config,
        return_details=True,
        **options,
    )
    reference = waterdrum_result(
        nested,
        owners,
        tok,
        config=empirical_config,
        return_details=True,
        **options,
    )
    for name, owner in detailed.per_owner.items():
        assert owner.null_std == pytest.approx(reference.per_owner[name].null_std, rel=0.08)
        assert owner.z == pytest.approx((owner.value - owner.null_mean) / owner.null_std)
    means = np.array(detailed.query_null_means)
    assert np.all(np.isnan(means) == np.isnan(detailed.query_values))
    assert np.allclose(means[~np.isnan(means)], 0, atol=1e-15)  # both schemes' terms average 0


def test_analytic_p_value_is_calibrated_on_unwatermarked_text_and_small_on_watermarked_text():
    vocab = 256
    tok = word_tokenizer(vocab)
    rng = np.random.default_rng(0)
    p_values = []
    for draw in range(300):
        texts = word_texts(vocab, 4, 12, seed=1000 + draw, zipf=None)
        owner = int(rng.integers(2**32))
        p_values.append(
            waterdrum_metrics(texts, [owner] * 4, tok, config=cfg(null="analytic"))[
                "overall_p_value"
            ]
        )
    assert 0.025 <= np.mean(np.array(p_values) <= 0.05) <= 0.08
    assert 0.4 <= np.mean(p_values) <= 0.6

    texts = watermarked_words(KEYS[0], vocab, 4, 12, seed=1)
    result = waterdrum_metrics(texts, [KEYS[0]] * 4, tok, config=cfg(null="analytic"))
    assert result["overall"] > 0.5 and result["overall_p_value"] < 1e-6
    assert result["overall_z"] > 5


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"null": "bootstrap"}, "`null` must be 'empirical', 'analytic' or None"),
        ({"null": "none", "null_seed": 3}, "the empirical null's"),
        ({"null": "analytic", "null_keys": 5}, "the empirical null's"),
    ],
)
def test_null_settings_that_do_not_fit_are_refused(tok, options, match):
    with pytest.raises(ValueError, match=match):
        waterdrum_metrics(["w1 w2 w3"], [1], tok, config=cfg(**options))


def test_null_empirical_is_what_null_keys_alone_gives(tok, batch):
    texts, owners = batch
    assert waterdrum_metrics(
        texts,
        owners,
        tok,
        config=cfg(null="empirical", null_keys=5),
    ) == (waterdrum_metrics(texts, owners, tok, config=cfg(null_keys=5)))


def test_owners_are_named_never_keyed(tok, batch, caplog):
    texts, owners = batch
    with pytest.warns(UserWarning, match="1 of 2 forget_ids own no query") as record:
        result = waterdrum_metrics(
            texts,
            owners,
            tok,
            config=cfg(null_keys=4),
            forget_ids=[KEYS[3], 123456789],
            return_details=True,
        )
    assert list(result["per_owner"]) == ["owner-1", "owner-2", "owner-3", "owner-4"]
    assert result["num_missing_forget_ids"] == 1
    fourth = result["per_owner"]["owner-4"]
    assert fourth["forget"] and fourth["value"] == pytest.approx(result["forget"])
    assert fourth["num_queries"] == 7 and fourth["num_scored_queries"] == 6
    scores = verify_texts(texts, owners, tok)
    mine = (np.array(owners) == KEYS[3]) & ~np.isnan(scores)
    assert fourth["std"] == pytest.approx(np.std(scores[mine], ddof=1))
    assert {"null_mean", "null_std", "z", "p_value"} <= set(fourth)
    shown = json.dumps(result) + str(record[0].message) + caplog.text
    assert not any(str(key) in shown for key in [*KEYS, 12_345_678_9])

    names = {KEYS[0]: "alice", KEYS[1]: "bob", KEYS[2]: "carol", KEYS[3]: "dan"}
    named = waterdrum_metrics(texts, owners, tok, owner_names=names, return_details=True)
    assert set(named["per_owner"]) == {"alice", "bob", "carol", "dan"}
    assert named["query_owners"][:4] == ["alice", "bob", "carol", "dan"]
    # Owners without a given name get the default names, skipping those already taken.
    partial = waterdrum_metrics(
        texts, owners, tok, owner_names={KEYS[1]: "owner-1", KEYS[3]: "dan"}, return_details=True
    )
    assert partial["query_owners"][:4] == ["owner-2", "owner-1", "owner-3", "dan"]
    with pytest.raises(TypeError, match="non-empty strings") as error:
        waterdrum_metrics(texts, owners, tok, owner_names={KEYS[3]: ""})
    assert str(KEYS[3]) not in str(error.value)
    with pytest.raises(ValueError, match="same name"):
        waterdrum_metrics(texts, owners, tok, owner_names={k: "x" for k in KEYS})


@pytest.mark.parametrize("forget_ids", [None, [KEYS[1], KEYS[2], KEYS[3]]])
@pytest.mark.parametrize("null", [dict(null_keys=19), dict(null="analytic")])
def test_each_owners_p_value_is_holm_adjusted_within_its_set(tok, forget_ids, null):
    """One family per set: the forget owners together, the retain owners together (all owners
    without forget_ids); an owner without a scored query (so without a p-value) is in none."""
    texts = word_texts(N, 9, 40, seed=3) + ["w3"]  # owner-4's one query has nothing to count
    owners = [KEYS[i % 3] for i in range(9)] + [KEYS[3]]
    result = waterdrum_result(
        texts, owners, tok, config=cfg(**null), forget_ids=forget_ids, return_details=True
    )
    per_owner = result.per_owner
    assert per_owner["owner-4"].p_value is None and per_owner["owner-4"].adjusted_p_value is None
    families = {}
    for name, owner in per_owner.items():
        if owner.p_value is not None:
            families.setdefault(owner.forget, []).append(name)
    assert sorted(map(len, families.values())) == ([1, 2] if forget_ids else [3])
    for names in families.values():
        expected = holm_adjusted([per_owner[name].p_value for name in names])
        adjusted = [per_owner[name].adjusted_p_value for name in names]
        np.testing.assert_allclose(adjusted, expected, rtol=1e-12)
    saved = WaterDrumResult.from_dict(json.loads(json.dumps(result.to_dict(), allow_nan=True)))
    assert saved.per_owner == per_owner


def test_a_set_without_scored_queries_is_left_out(tok):
    with pytest.warns(UserWarning):
        result = waterdrum_metrics(["w1 w2 w3", "w4"], [1, 2], tok, forget_ids=[2, 99])
    assert "forget" not in result and "separability_auroc" not in result
    assert result["retain"] == pytest.approx(verify_texts(["w1 w2 w3"], 1, tok)[0])
    assert None not in result.values()


def test_old_call_style_still_works(tok, batch):
    """Flat predictions, one id each, positional tokenizer, return_scores: as before."""
    texts, owners = batch
    result = waterdrum_metrics(texts, owners, tok, forget_ids=[KEYS[3]], return_scores=True)
    np.testing.assert_allclose(result["scores"], verify_texts(texts, owners, tok))
    assert math.isnan(result["scores"][24])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"watermark_tokenizer": None}, ValueError, "`watermark_tokenizer` is required"),
        ({"predictions": ["w1 w2", 3]}, TypeError, r"`predictions\[1\]`"),
        ({"predictions": []}, TypeError, "non-empty list"),
        ({"predictions": "w1 w2"}, TypeError, "non-empty list"),
        ({"predictions": [["w1 w2"], "w3 w4"]}, TypeError, "not a mix"),
        ({"predictions": [["w1 w2"], ["w3"], ["w4"]]}, ValueError, "one owner id per query"),
        ({"references": [1]}, ValueError, "`references` has 1 entries"),
        ({"references": [1, -4]}, ValueError, r"`references\[1\]`"),
        ({"forget_ids": [2**32]}, ValueError, r"`forget_ids\[0\]`"),
        ({"null_keys": -1}, ValueError, "`null_keys`"),
        ({"k_p": 10_000}, ValueError, "`k_p`"),
        ({"pooling": "max"}, ValueError, "`pooling`"),
        ({"query_ids": [1]}, ValueError, "`query_ids` has 1 entries"),
        ({"query_ids": ["a", "a"]}, ValueError, "different owners"),
        ({"owner_names": ["a", "b"]}, TypeError, "`owner_names` must map"),
        ({"vocab_size": 128000}, ValueError, "does not match the tokenizer's vocab_size 4096"),
        ({"confidence": 0}, ValueError, "`confidence` must lie strictly between 0 and 1"),
        ({"confidence": 1}, ValueError, "`confidence` must lie strictly between 0 and 1"),
        ({"confidence": 1.5}, ValueError, "`confidence` must lie strictly between 0 and 1"),
        ({"confidence": "x"}, TypeError, "`confidence` must be a number"),
        ({"confidence": 0.9, "bootstrap_resamples": 10}, ValueError, "`bootstrap_resamples`"),
        ({"confidence": 0.9, "bootstrap_seed": -1}, ValueError, "`bootstrap_seed`"),
        ({"predictions": [["w1 w2"], ["w3", 4]]}, TypeError, r"`predictions\[1\]\[1\]`"),
        (
            {"predictions": [["w1 w2"], ["w3 w4"]], "references": [1, -4]},
            ValueError,
            r"`references\[1\]` must be in 0..2",
        ),
        ({"owner_names": {-1: "a"}}, ValueError, "`owner_names key` must be in 0..2"),
    ],
)
def test_bad_input(tok, kwargs, error, match):
    """Scoring settings are checked by the configuration (built from the evaluate module's
    keywords, as the metric module does); the rest by the metric."""
    args = {"predictions": ["w1 w2", "w3 w4"], "references": [1, 2], "watermark_tokenizer": tok}
    settings = {k: v for k, v in kwargs.items() if k in KEYWORDS}
    args.update({k: v for k, v in kwargs.items() if k not in KEYWORDS})
    with pytest.raises(error, match=match):
        waterdrum_metrics(**args, config=cfg(**settings))


def test_wheel_ships_the_metric_module(tmp_path):
    """Built from a copy of the sources in a temporary folder: setuptools writes ``build/``
    beside the sources it builds, and tests write nothing into the checkout."""
    root = metric_path().parents[1]
    source = tmp_path / "source"
    for folder in ("waterdrum_hf", "trainers", "metrics"):  # pyproject's package-dir
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
        shutil.copytree(root / folder, source / folder, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, source / name)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    assert "absent from the `packages` configuration" not in build.stdout + build.stderr
    (wheel,) = tmp_path.glob("waterdrum_hf-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("waterdrum.py", "README.md", "app.py", "requirements.txt"):
        assert f"waterdrum_hf/metrics/waterdrum/{required}" in names
    assert "waterdrum_hf/trainers/__init__.py" in names
    assert "waterdrum_hf/trainers/papers.bib" in names  # the model cards cite from it
    for task in ("_default_template_yaml", "waterdrum_ax.yaml", "waterdrum_local.yaml"):
        assert f"waterdrum_hf/lm_eval_tasks/{task}" in names  # `waterdrum lm-eval-tasks`
    assert "waterdrum_hf/attacks/__init__.py" in names
    for file in ("model.safetensors", "tokenizer.json", "config.json", "build.json"):
        assert f"waterdrum_hf/tiny_model/{file}" in names  # the built-in model ships


def test_the_skipped_warning_names_the_cause_and_the_fix(tok, caplog):
    with caplog.at_level(logging.WARNING, logger="waterdrum_hf.scoring.inputs"):
        result = waterdrum_metrics([["", "w1 w2 w3"], ["w4", "w5 w6"]], [1, 2], tok)
    assert result["num_skipped"] == 2
    message = caplog.text
    assert "2 of 4 samples" in message and "1 are empty" in message and "max_fraction" in message
    assert "1 have fewer than n_gram=2" in message and "stopped almost at once" in message
    assert (
        "1 are empty: the model ended at once, or (with queries cut under max_fraction=None) "
        "the query was the whole text and left nothing to write"
    ) in message  # not advice to set max_fraction=0.5, the default a run may already use
    assert (
        "tokens of the watermarking vocabulary (the model stopped almost at once, or wrote "
        "tokens outside that vocabulary)"
    ) in message
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="waterdrum_hf.scoring.inputs"):
        waterdrum_metrics([["w1"], ["w4 w5"]], [1, 2], tok)
    assert "1 of 2 samples" in caplog.text and "empty" not in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="waterdrum_hf.scoring.inputs"):
        waterdrum_metrics([[""], ["w4 w5"]], [1, 2], tok)
    assert "1 are empty" in caplog.text and "n_gram" not in caplog.text


def test_load_metric_forwards_its_keyword_arguments():
    metric = waterdrum_hf.load_metric(experiment_id="mutation-check", keep_in_memory=True)
    assert metric.experiment_id == "mutation-check" and metric.keep_in_memory


def test_one_null_key_has_no_spread_so_no_z(tok, batch):
    """With one null key the null mean is that key's value and its spread is 0: z is left out
    (not a division by zero) and the p-value is 1/2 or 1."""
    texts, owners = batch
    result = waterdrum_metrics(texts, owners, tok, config=cfg(null_keys=1, null_seed=4))
    null = waterdrum_hf.null_reference(texts, tok, num_keys=1, exclude_ids=KEYS, seed=4)
    assert result["overall_null_mean"] == pytest.approx(null.mean)
    assert result["overall_null_std"] == 0.0 and "overall_z" not in result
    assert result["overall_p_value"] == (1 + (null.mean >= result["overall"])) / 2


def test_an_owner_needs_two_scored_queries_for_a_spread(tok):
    texts = word_texts(N, 3, 30, seed=21)
    owners = [KEYS[0], KEYS[0], KEYS[1]]
    result = waterdrum_metrics(texts, owners, tok, forget_ids=[KEYS[1]], return_details=True)
    values = verify_texts(texts, owners, tok)
    two, one = result["per_owner"]["owner-1"], result["per_owner"]["owner-2"]
    assert two["std"] == pytest.approx(abs(values[0] - values[1]) / math.sqrt(2))
    assert "std" not in one and one["value"] == pytest.approx(values[2])
    assert one["forget"] is True and two["forget"] is False


def test_the_owners_keys_are_never_null_keys(tok, batch):
    """An owner whose key the null seed would draw: the null skips it, as the null reference
    with the owners excluded does."""
    from waterdrum_hf.keys import random_keys

    texts, _ = batch
    owner = int(random_keys(1, seed=9)[0])
    result = waterdrum_metrics(
        texts,
        [owner] * len(texts),
        tok,
        config=cfg(null_keys=4, null_seed=9),
        return_details=True,
    )
    null = waterdrum_hf.null_reference(texts, tok, num_keys=4, exclude_ids=[owner], seed=9)
    assert owner not in null.keys.tolist()
    np.testing.assert_allclose(result["query_null_means"], null.scores.mean(axis=1))


@pytest.mark.parametrize("pooling", ["tokens", "mean"])
def test_a_single_counted_token_is_a_value_and_a_query_without_samples_is_not(tok, pooling):
    """Boundaries of pooling: one sample with one countable pair is scored as that pair; a
    query with no samples at all (the last one, here) counts as a query without a value."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning about 0/0 leaks out
        result = waterdrum_metrics([['w1 w2'], ['w3 w4 w5', 'w6'], []], [1, 2, 3], tok, config=cfg(pooling=pooling), return_details=True)  # fmt: skip
    single = verify_texts(["w1 w2", "w3 w4 w5"], [1, 2], tok)
    np.testing.assert_allclose(result["query_values"][:2], single)
    assert math.isnan(result["query_values"][2])
    assert (result["num_queries"], result["num_scored"], result["num_skipped"]) == (3, 2, 1)
    assert result["overall"] == pytest.approx(single.mean())


def test_per_owner_entries_of_owners_without_a_scored_query(tok):
    """An owner none of whose queries is scored keeps its counts and set, nothing else, and
    the owners after it are still reported."""
    result = waterdrum_metrics(
        ["w1 w2 w3", "w4", "w5 w6 w7"], [1, 2, 3], tok, forget_ids=[2], return_details=True
    )
    owners = result["per_owner"]
    assert owners["owner-2"] == {"num_queries": 1, "num_scored_queries": 0, "forget": True}
    assert owners["owner-1"]["forget"] is False and owners["owner-3"]["forget"] is False
    assert owners["owner-3"]["value"] == pytest.approx(verify_texts(["w5 w6 w7"], 3, tok)[0])


def test_missing_forget_ids_are_counted(tok, batch):
    texts, owners = batch
    with pytest.warns(UserWarning, match="2 of 3 forget_ids own no query"):
        result = waterdrum_metrics(texts, owners, tok, forget_ids=[KEYS[3], 5, 6])
    assert result["num_missing_forget_ids"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = waterdrum_metrics(texts, owners, tok, forget_ids=[KEYS[3]])
    assert "num_missing_forget_ids" not in result


@pytest.mark.parametrize("forget_ids", [5, "12"])
def test_forget_ids_must_be_a_list(tok, forget_ids):
    with pytest.raises(TypeError, match="`forget_ids` must be a list of watermark ids"):
        waterdrum_metrics(["w1 w2"], [5], tok, forget_ids=forget_ids)


def test_compute_forwards_the_watermark_settings(tok, batch):
    texts, owners = batch
    for settings in ({"n_gram": 3}, {"k_p": 2}, {"scheme": "kgw"}):
        result = waterdrum_metrics(texts, owners, tok, config=cfg(**settings), return_scores=True)
        np.testing.assert_allclose(result["scores"], verify_texts(texts, owners, tok, **settings))


def test_queries_without_any_sample(tok):
    result = waterdrum_metrics([[], []], [1, 2], tok, return_details=True)
    assert (result["num_queries"], result["num_scored"], result["num_skipped"]) == (2, 0, 0)
    assert "overall" not in result and all(math.isnan(v) for v in result["query_values"])


def test_typed_result_defaults_have_the_analytic_null_and_no_details(tok, batch):
    texts, owners = batch
    typed = waterdrum_result(texts, owners, tok)
    assert typed == waterdrum_result(texts, owners, tok, config=ANALYTIC)
    assert typed.overall.null_std > 0 and 0 < typed.overall.p_value < 1
    assert typed.per_owner is None and typed.scores is None and typed.query_values is None
    bare = waterdrum_result(texts, owners, tok, config=WaterDrumConfig(null=None))
    assert bare.overall.null_mean is None and bare.overall.p_value is None
    assert bare.overall.value == typed.overall.value  # the same value, without its verdict


def test_null_values_pool_samples_like_the_owners_values(tok, per_query):
    """The null of a query pools its samples' token sums under each key, as its value does."""
    nested, owners = per_query
    result = waterdrum_metrics(
        nested,
        owners,
        tok,
        config=cfg(null_keys=3, null_seed=2),
        return_details=True,
    )
    samples = [s for query in nested for s in query]
    null = waterdrum_hf.null_reference(samples, tok, num_keys=3, exclude_ids=KEYS, seed=2)
    expected = []
    for q in range(len(nested)):
        rows = slice(3 * q, 3 * q + 3)
        expected.append((null.sums[rows].sum(axis=0) / null.counts[rows].sum()).mean())
    np.testing.assert_allclose(result["query_null_means"], expected)


@pytest.mark.warning_location
def test_the_missing_forget_ids_warning_points_at_the_callers_line(tok, batch):
    """The "forget_ids own no query" warning is attributed to the line that called the metric
    (here, this file), not to a module of the library, through either entry point."""
    texts, owners = batch
    for entry in (waterdrum_metrics, waterdrum_result):
        with pytest.warns(UserWarning, match="1 of 2 forget_ids own no query") as record:
            entry(texts, owners, tok, forget_ids=[KEYS[3], 12345])
        assert [w.filename for w in record] == [__file__]


def test_no_auroc_when_no_retain_query_could_be_scored(tok, batch):
    """Retain owners whose samples have nothing to count: there is no retain value, and so no
    separability to report, rather than an AUROC over forget values alone."""
    texts, owners = batch
    forget = [(t, o) for t, o in zip(texts[:24], owners[:24], strict=True) if o == KEYS[0]]
    texts = [t for t, _ in forget] + ["", "w3"]
    owners = [o for _, o in forget] + [KEYS[1], KEYS[1]]
    result = waterdrum_metrics(texts, owners, tok, forget_ids=[KEYS[0]])
    assert result["num_skipped"] == 2
    assert result["forget"] is not None and result.get("retain") is None
    assert result.get("separability_auroc") is None
