"""verify_dataset: the score column equals verify_texts row by row, on a Dataset (cached, two
processes, resumed from finished shards) and on an IterableDataset (lazily); clear errors."""

from __future__ import annotations

import copy
import logging
import os

import numpy as np
import pytest
from datasets import Dataset, DatasetDict, IterableDataset, load_from_disk
from datasets.fingerprint import Hasher
from tokenizer_builders import word_texts, word_tokenizer

import waterdrum_hf._version
from waterdrum_hf import verify_dataset, verify_texts
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.schemes import resolve_scheme
from waterdrum_hf.scoring.dataset_verification import DatasetScorer
from waterdrum_hf.scoring.verification import Verifier

N = 4096
KEYS = [3_000_000_019, 2_147_483_659, 4_294_967_291, 7]


@pytest.fixture(scope="module")
def tok():
    return word_tokenizer(N, ("<eos>",))


@pytest.fixture(scope="module")
def rows():
    """600 texts of varied length, 4 owners, and three texts with nothing to count."""
    texts = word_texts(N, 600, 30, seed=5) + ["", "w9", "<eos> w1 <eos>"]
    texts[10] = texts[10][:40] + " <eos> " + texts[10][40:]  # a special token in the middle
    owners = [KEYS[i % len(KEYS)] for i in range(len(texts))]
    return {"text": texts, "owner_id": owners, "note": [f"row {i}" for i in range(len(texts))]}


@pytest.fixture
def on_disk(rows, tmp_path):
    Dataset.from_dict(rows).save_to_disk(tmp_path / "ds")
    return load_from_disk(str(tmp_path / "ds"))  # on disk, so map results are cached there


def run(dataset, tok, k_p=None, n_gram=None, **kwargs):
    """``verify_dataset`` of the text and owner columns; ``k_p``/``n_gram`` build the scheme."""
    scheme = resolve_scheme("waterfall", k_p=k_p, n_gram=n_gram)
    return verify_dataset(
        dataset,
        text_column="text",
        id_column="owner_id",
        watermark_tokenizer=tok,
        config=WaterDrumConfig(scheme=scheme),
        **kwargs,
    )


def test_scores_equal_verify_texts_and_nan_rows_are_counted(on_disk, rows, tok, caplog):
    expected = verify_texts(rows["text"], rows["owner_id"], tok)
    assert np.isnan(expected).sum() == 3
    with caplog.at_level(logging.WARNING, logger="waterdrum_hf"):
        scored = run(on_disk, tok, batch_size=128)
    np.testing.assert_allclose(scored["watermark_score"], expected, rtol=0, atol=1e-12)
    assert scored.column_names == ["text", "owner_id", "note", "watermark_score"]
    assert scored["note"] == rows["note"]
    assert "3 of 603 texts have no countable token" in caplog.text
    for form in (str(KEYS[0]), f"{KEYS[0]:x}"):
        assert form not in caplog.text


def test_other_parameters_equal_verify_texts(on_disk, rows, tok):
    scored = run(on_disk, tok, k_p=N // 2 + 5, n_gram=3, batch_size=1000, score_column="q")
    expected = verify_texts(rows["text"], rows["owner_id"], tok, k_p=N // 2 + 5, n_gram=3)
    np.testing.assert_allclose(scored["q"], expected, rtol=0, atol=1e-12)


def test_two_processes_equal_one_and_a_repeat_is_served_from_the_cache(on_disk, tok, monkeypatch):
    one = run(on_disk, tok, batch_size=100)
    two = run(on_disk, tok, batch_size=100, num_proc=2)  # the cache of `one` is reused
    assert two.cache_files == one.cache_files
    for path in one.cache_files:  # a fresh computation with two (forked) processes
        if "cache-" in path["filename"]:
            os.remove(path["filename"])
    two = run(on_disk, tok, batch_size=100, num_proc=2)
    np.testing.assert_array_equal(two["watermark_score"], one["watermark_score"])
    shard_files = sorted(f["filename"] for f in two.cache_files if "_of_00002" in f["filename"])
    assert len(shard_files) == 2

    calls = []  # counted in this process: the runs below compute here, if at all
    original = DatasetScorer.__call__
    monkeypatch.setattr(DatasetScorer, "__call__", lambda *a: calls.append(1) or original(*a))
    again = run(on_disk, tok, batch_size=100)
    assert not calls and again.cache_files == two.cache_files
    # A killed run keeps its finished shards: only the missing one is computed again.
    finished = os.stat(shard_files[0]).st_mtime_ns
    os.remove(shard_files[1])
    resumed = run(on_disk, tok, batch_size=100)
    np.testing.assert_array_equal(resumed["watermark_score"], one["watermark_score"])
    assert len(calls) == -(-(len(one) // 2) // 100)  # the batches of the second shard only
    assert os.stat(shard_files[0]).st_mtime_ns == finished and os.path.exists(shard_files[1])


def test_iterable_dataset_is_scored_lazily(rows, tok, caplog, monkeypatch):
    calls = []
    original = DatasetScorer.__call__
    monkeypatch.setattr(DatasetScorer, "__call__", lambda *a: calls.append(1) or original(*a))
    stream = Dataset.from_dict(rows).to_iterable_dataset(num_shards=3)
    scored = run(stream, tok, batch_size=64)
    assert isinstance(scored, IterableDataset) and not calls
    with caplog.at_level(logging.WARNING, logger="waterdrum_hf"):
        scores = [row["watermark_score"] for row in scored]
    expected = verify_texts(rows["text"], rows["owner_id"], tok)
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)
    assert calls and "have no countable token" in caplog.text
    with pytest.raises(ValueError, match="num_proc"):
        run(stream, tok, num_proc=2)


def test_iterable_dataset_without_known_columns_checks_them_per_batch(tok):
    def generate():
        yield {"body": "w1 w2", "owner_id": 1}

    stream = IterableDataset.from_generator(generate)
    scored = run(stream, tok)  # columns unknown until iterated
    with pytest.raises(ValueError, match="Column 'text' not found.*text_column="):
        next(iter(scored))


def test_fingerprint_is_stable_and_covers_what_decides_the_scores(tok, monkeypatch):
    def scorer(tokenizer=tok, **kwargs):
        columns = {"text_column": "text", "id_column": "owner_id", "score_column": "s"}
        return DatasetScorer(Verifier(tokenizer, **kwargs), **columns, log_unscored=False)

    base = Hasher.hash(scorer())
    assert Hasher.hash(scorer(copy.deepcopy(tok))) == base  # content, not object identity
    changed = {
        Hasher.hash(scorer(k_p=2)),
        Hasher.hash(scorer(n_gram=3)),
        Hasher.hash(scorer(word_tokenizer(N + 2, ("<eos>",)))),
    }
    assert base not in changed and len(changed) == 3
    monkeypatch.setattr(waterdrum_hf._version, "version", lambda _name: "999.0")
    assert Hasher.hash(scorer()) != base


class FingerprintHolder:
    """Holds something no pickler can hash (like a model on a GPU) beside its fingerprint."""

    def __init__(self, fingerprint, thing):
        self.fingerprint, self.thing = fingerprint, thing


def test_the_datasets_hasher_hook_hashes_the_fingerprint_only():
    """The private ``datasets`` hook (``datasets.utils._dill.pklregister``) behind every
    fingerprint above: fails loudly if ``datasets`` changes it. Ordinary pickling (what
    ``num_proc`` workers receive) must stay untouched."""
    import pickle
    import threading
    import warnings

    from waterdrum_hf.utils.fingerprint import register_with_datasets_hasher

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fallback warns: here it must not be needed
        register_with_datasets_hasher(FingerprintHolder)
    lock = threading.Lock()
    same = FingerprintHolder("abc", threading.Lock())
    assert Hasher.hash(FingerprintHolder("abc", lock)) == Hasher.hash(same)
    assert Hasher.hash(FingerprintHolder("abc", lock)) != Hasher.hash(
        FingerprintHolder("abd", lock)
    )
    copy_back = pickle.loads(pickle.dumps(FingerprintHolder("abc", [1, 2])))  # the whole object
    assert (copy_back.fingerprint, copy_back.thing) == ("abc", [1, 2])


def test_a_cache_of_other_parameters_is_not_reused(on_disk, tok):
    first = run(on_disk, tok)
    other = run(on_disk, tok, k_p=3)
    assert other.cache_files != first.cache_files
    assert not np.allclose(other["watermark_score"], first["watermark_score"], equal_nan=True)


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"text_column": "body"}, ValueError, "`text_column`='body' is not a column"),
        ({"id_column": "owner"}, ValueError, "`id_column`='owner' is not a column"),
        ({"score_column": "note"}, ValueError, "already has a column 'note'"),
        ({"text_column": None}, TypeError, "`text_column` must be a non-empty column name"),
        ({"batch_size": 0}, ValueError, "`batch_size` must be >= 1"),
        ({"num_proc": 0}, ValueError, "`num_proc` must be >= 1"),
        ({"k_p": 0}, ValueError, "`k_p` must be in"),
    ],
)
def test_bad_arguments(on_disk, tok, change, error, match):
    kwargs = {"text_column": "text", "id_column": "owner_id", "watermark_tokenizer": tok}
    with pytest.raises(error, match=match):
        if "k_p" in change:
            change = {"config": WaterDrumConfig(scheme=resolve_scheme("waterfall", **change))}
        verify_dataset(on_disk, **{**kwargs, **change})


def test_a_config_with_an_empirical_null_or_an_interval_is_refused(on_disk, tok):
    """Row scores are not pooled: an empirical null or an interval, work asked for, would be
    silently unused; the analytic null, every entry point's default, is taken and unused."""
    from waterdrum_hf import IntervalConfig, NullConfig

    kwargs = {"text_column": "text", "id_column": "owner_id", "watermark_tokenizer": tok}
    refused = (NullConfig("empirical", keys=5), None), (NullConfig(), IntervalConfig())
    for null, interval in refused:
        with pytest.raises(ValueError, match="scores rows one by one"):
            verify_dataset(on_disk, **kwargs, config=WaterDrumConfig(null=null, interval=interval))
    taken = verify_dataset(on_disk, **kwargs, config=WaterDrumConfig(null=NullConfig()))
    bare = verify_dataset(on_disk, **kwargs, config=WaterDrumConfig(null=None))
    np.testing.assert_array_equal(taken["watermark_score"], bare["watermark_score"])


@pytest.mark.parametrize("num_proc", [None, 2])
@pytest.mark.parametrize(
    ("column", "value", "error", "match"),
    [
        ("owner_id", -1, ValueError, r"`owner_id\[7\]` must be in 0..2\*\*32-1"),
        ("owner_id", 2**32, ValueError, r"`owner_id\[7\]` must be in 0..2\*\*32-1"),
        # One float makes the whole Arrow column float: its first row is named.
        ("owner_id", 1.5, TypeError, r"`owner_id\[0\]` must be an integer"),
        ("text", None, TypeError, r"`text` of row 7 is a NoneType, not a string"),
    ],
)
def test_bad_rows_name_the_row(tok, tmp_path, num_proc, column, value, error, match):
    data = {"text": ["w1 w2 w3"] * 12, "owner_id": [KEYS[0]] * 12}
    data[column][7] = value
    Dataset.from_dict(data).save_to_disk(tmp_path / "bad")
    with pytest.raises(error, match=match) as raised:
        run(load_from_disk(str(tmp_path / "bad")), tok, batch_size=4, num_proc=num_proc)
    assert str(KEYS[0]) not in str(raised.value)


def test_not_a_single_dataset(rows, tok):
    with pytest.raises(TypeError, match="one split at a time"):
        run(DatasetDict({"train": Dataset.from_dict(rows)}), tok)
    with pytest.raises(TypeError, match="use `waterdrum_hf.verify_texts`"):
        run(rows["text"], tok)
