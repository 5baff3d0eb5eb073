"""The `evaluate` module: offline loading by path, add/add_batch/combine, and its outputs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zipfile

import evaluate
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from tokenizer_builders import word_texts, word_tokenizer

import waterdrum_hf
from waterdrum_hf import verify_texts
from waterdrum_hf.metric import metric_path

N = 4096


@pytest.fixture(scope="module")
def tok():
    return word_tokenizer(N)


@pytest.fixture(scope="module")
def batch():
    texts = word_texts(N, 24, 40, seed=11) + ["", "w3"]  # two texts with nothing to count
    owners = [i % 4 for i in range(24)] + [3, 0]
    return texts, owners


def test_load_metric_is_offline_and_by_absolute_path():
    metric = waterdrum_hf.load_metric()
    assert metric.name == "water_drum"
    assert metric_path().is_absolute() and (metric_path() / "waterdrum.py").is_file()
    assert metric.features["references"].dtype == "int64"


def test_compute_matches_the_verifier_and_sklearn(tok, batch):
    texts, owners = batch
    result = waterdrum_hf.load_metric().compute(
        predictions=texts, references=owners, watermark_tokenizer=tok, forget_ids=[3],
        return_scores=True,
    )
    scores = verify_texts(texts, owners, tok)
    np.testing.assert_allclose(result["scores"], scores)
    owners = np.array(owners)
    ok = ~np.isnan(scores)
    assert result["forget"] == pytest.approx(scores[(owners == 3) & ok].mean())
    assert result["retain"] == pytest.approx(scores[(owners != 3) & ok].mean())
    assert "overall" not in result
    assert result["num_scored"] == 24 and result["num_skipped"] == 2
    assert result["per_owner"][3] == {"mean": pytest.approx(result["forget"]), "count": 6}
    labels = (owners[ok] != 3).astype(int)
    assert result["separability_auroc"] == pytest.approx(roc_auc_score(labels, scores[ok]))


def test_without_forget_ids_only_overall(tok, batch):
    texts, owners = batch
    result = waterdrum_hf.compute_waterdrum(texts, owners, tok)
    assert {"forget", "retain", "separability_auroc"}.isdisjoint(result)
    assert result["overall"] == pytest.approx(np.nanmean(verify_texts(texts, owners, tok)))
    assert "scores" not in result


def test_add_batch_and_add_accumulate_like_one_compute(tok, batch):
    texts, owners = batch
    direct = waterdrum_hf.compute_waterdrum(texts, owners, tok, forget_ids=[3])
    metric = evaluate.load(str(metric_path()))
    metric.add_batch(predictions=texts[:10], references=owners[:10])
    for text, owner in zip(texts[10:], owners[10:], strict=True):
        metric.add(prediction=text, reference=owner)
    incremental = metric.compute(watermark_tokenizer=tok, forget_ids=[3])
    assert incremental["forget"] == pytest.approx(direct["forget"])
    assert incremental["retain"] == pytest.approx(direct["retain"])
    assert incremental["num_skipped"] == direct["num_skipped"]


def test_combine_with_another_module(tok, batch, tmp_path):
    other = tmp_path / "text_count"
    other.mkdir()
    (other / "text_count.py").write_text(textwrap.dedent('''
        import datasets
        import evaluate

        class TextCount(evaluate.Metric):
            def _info(self):
                return evaluate.MetricInfo(description="", citation="", features=datasets.Features(
                    {"predictions": datasets.Value("string"), "references": datasets.Value("int64")}))

            def _compute(self, predictions, references, **kwargs):
                return {"text_count": len(predictions)}
    '''))
    texts, owners = batch
    combined = evaluate.combine([str(metric_path()), str(other)])
    result = combined.compute(
        predictions=texts, references=owners, watermark_tokenizer=tok, forget_ids=[3]
    )
    assert result["text_count"] == len(texts)
    assert result["forget"] == pytest.approx(
        waterdrum_hf.compute_waterdrum(texts, owners, tok, forget_ids=[3])["forget"]
    )


def test_null_keys_report_the_no_watermark_level(tok, batch):
    texts, owners = batch
    result = waterdrum_hf.compute_waterdrum(texts, owners, tok, forget_ids=[3], null_keys=8)
    null = waterdrum_hf.null_reference(texts, tok, num_keys=8, exclude_ids=[0, 1, 2, 3])
    owners, scored = np.array(owners), ~np.isnan(verify_texts(texts, owners, tok))
    forget_null = null.subset((owners == 3) & scored)
    assert result["null"]["forget"] == {"mean": pytest.approx(forget_null.mean),
                                        "std": pytest.approx(forget_null.std)}
    assert result["null"]["retain"]["std"] > 0


def test_missing_forget_id_warns_and_is_reported(tok, batch):
    texts, owners = batch
    with pytest.warns(UserWarning, match="1 of 2 forget_ids never occur"):
        result = waterdrum_hf.compute_waterdrum(texts, owners, tok, forget_ids=[3, 77])
    assert result["missing_forget_ids"] == [77]


def test_forget_set_without_samples_gives_none_and_no_auroc(tok, batch):
    texts, owners = batch
    with pytest.warns(UserWarning):
        result = waterdrum_hf.compute_waterdrum(texts, owners, tok, forget_ids=[99])
    assert result["forget"] is None and "separability_auroc" not in result


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"watermark_tokenizer": None}, ValueError, "`watermark_tokenizer` is required"),
        ({"predictions": ["w1 w2", 3]}, TypeError, r"`predictions\[1\]`"),
        ({"references": [1]}, ValueError, "`references` has 1 entries"),
        ({"references": [1, -4]}, ValueError, r"`references\[1\]`"),
        ({"forget_ids": [2**32]}, ValueError, r"`forget_ids\[0\]`"),
        ({"null_keys": -1}, ValueError, "`null_keys`"),
        ({"k_p": 10_000}, ValueError, "`k_p`"),
        ({"vocab_size": 128000}, ValueError, "does not match the tokenizer's vocab_size 4096"),
    ],
)
def test_bad_input(tok, kwargs, error, match):
    args = {"predictions": ["w1 w2", "w3 w4"], "references": [1, 2], "watermark_tokenizer": tok}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        waterdrum_hf.compute_waterdrum(**args)


def test_wheel_ships_the_metric_module(tmp_path):
    root = metric_path().parents[1]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(root), "--no-deps", "--no-build-isolation",
         "-q", "-w", str(tmp_path)],
        check=True,
    )
    (wheel,) = tmp_path.glob("waterdrum_hf-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("waterdrum.py", "README.md", "app.py", "requirements.txt"):
        assert f"waterdrum_hf/metrics/waterdrum/{required}" in names
    assert "waterdrum_hf/trainers/__init__.py" in names
