"""The verification core against its peer, the `waterfall` package's own verifier."""

from __future__ import annotations

import copy
import logging
import tracemalloc
import warnings

import numpy as np
import pytest
from tokenizer_builders import pydoc_bpe_tokenizer, word_texts, word_tokenizer
from waterfall.WatermarkerBase import Watermarker

import waterdrum_hf
from waterdrum_hf import NullConfig, Verifier, null_reference, verify_texts
from waterdrum_hf.keys import random_keys
from waterdrum_hf.scoring.analytic_null import AnalyticNull
from waterdrum_hf.scoring.verification import NullReference


def waterfall_scores(texts: list[str], key: int, tokenizer, k_p: int = 1) -> np.ndarray:
    """Scores from the peer implementation (it mutates its tokenizer: give it a copy)."""
    watermarker = Watermarker(tokenizer=copy.deepcopy(tokenizer), k_p=1)
    return watermarker.verify(texts, id=[key], k_p=[k_p])[:, 0, 0]


def numpy_position(key: int, previous: int, token: int, vocab_size: int = 64) -> int:
    return int(np.random.RandomState((key, previous)).permutation(vocab_size)[token])


def max_freq(n: int) -> int:
    return n // 2 - 1 if n % 2 == 0 else n // 2


EDGE_KEYS = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 3_141_592_653]


@pytest.mark.parametrize(
    ("vocab_size", "num_texts", "zipf"),
    [(4096, 40, None), (4096, 40, 1.1), (32000, 20, 1.2), (128000, 8, 1.3), (128256, 8, 1.3)],
)
def test_equals_waterfall_across_vocab_sizes_keys_and_branches(vocab_size, num_texts, zipf):
    tok = word_tokenizer(vocab_size)
    texts = word_texts(vocab_size, num_texts, 50, seed=vocab_size, zipf=zipf)
    m = max_freq(vocab_size)
    rng = np.random.default_rng(vocab_size)
    cases = [(k, 1) for k in EDGE_KEYS] + [
        (int(rng.integers(0, 2**32)), k_p) for k_p in (2, m, m + 1, m + 7, 2 * m)
    ]
    verifier = Verifier(tok)
    token_ids = verifier.token_ids(texts)
    for key, k_p in cases:
        ours = Verifier(tok, k_p=k_p).score_token_ids(token_ids, key)
        np.testing.assert_allclose(ours, waterfall_scores(texts, key, tok, k_p), atol=1e-6, rtol=0)


def test_equals_waterfall_on_real_bpe_text_with_per_text_keys():
    from pydoc_data.topics import topics

    tok = pydoc_bpe_tokenizer()
    texts = [body[:600] for body in list(topics.values())[:30]]
    keys = [(7919 * i) % 2**32 for i in range(len(texts))]
    ours = verify_texts(texts, keys, tok)
    expected = [waterfall_scores([t], k, tok)[0] for t, k in zip(texts, keys, strict=True)]
    np.testing.assert_allclose(ours, expected, atol=1e-6, rtol=0)
    assert ours.dtype == np.float64 and ours.shape == (len(texts),)


def test_trigram_watermark_context():
    """n_gram=3 seeds with two previous tokens; waterfall's verifier reads n_gram from itself."""
    tok = word_tokenizer(4096)
    texts = word_texts(4096, 10, 40, seed=3)
    watermarker = Watermarker(tokenizer=copy.deepcopy(tok), k_p=1, n_gram=3)
    expected = watermarker.verify(texts, id=[42], k_p=[1])[:, 0, 0]
    np.testing.assert_allclose(verify_texts(texts, 42, tok, n_gram=3), expected, atol=1e-6)


def test_token_outside_vocabulary_is_skipped_not_the_end_of_the_text():
    tok = word_tokenizer(4096)
    head, tail = "w11 w12 w13", "w14 w15 w16 w17"
    text = f"{head} <eos> {tail}"
    ours = verify_texts([text, head, tail], 5, tok)
    # head has 2 countable pairs, tail 3; the pairs touching <eos> (id 4096 >= N) are skipped.
    assert ours[0] == pytest.approx((2 * ours[1] + 3 * ours[2]) / 5, abs=1e-12)
    # waterfall stops at <eos>: its score is the head's alone.
    assert waterfall_scores([text], 5, tok)[0] == pytest.approx(ours[1], abs=1e-6)
    assert abs(ours[0] - ours[1]) > 1e-3


def test_text_with_nothing_to_count_is_nan_and_reported(caplog):
    tok = word_tokenizer(4096)
    with caplog.at_level(logging.WARNING, logger="waterdrum_hf.scoring.verification"):
        scores = verify_texts(["", "w5", "<eos> <eos>", "w1 w2"], 9, tok)
    assert np.isnan(scores[:3]).all() and np.isfinite(scores[3])
    assert "3 of 4 texts" in caplog.text
    # waterfall reads the same texts as 0: indistinguishable from "no watermark".
    assert (waterfall_scores(["w5"], 9, tok) == 0).all()


def test_chunking_gives_identical_scores():
    tok = word_tokenizer(4096)
    texts = word_texts(4096, 60, 30, seed=1)
    keys = list(range(60))
    whole = Verifier(tok).verify(texts, keys)
    chunked = Verifier(tok, chunk_pairs=50).verify(texts, keys)
    np.testing.assert_array_equal(whole, chunked)


def test_memory_stays_flat_in_the_number_of_texts():
    """No dense texts x N arrays: 3000 texts at N=32000 would need 768 MB as float64."""
    tok = word_tokenizer(32000)
    verifier = Verifier(tok, chunk_pairs=20_000)
    token_ids = verifier.token_ids(word_texts(32000, 3000, 40, seed=2))
    tracemalloc.start()
    verifier.score_token_ids(token_ids, 17)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 40 * 2**20


def test_null_reference_scores_each_text_under_random_non_owner_keys():
    tok = word_tokenizer(4096)
    texts = word_texts(4096, 12, 40, seed=4)
    null = null_reference(texts, tok, num_keys=6, exclude_ids=[1, 2], seed=7)
    assert null.scores.shape == (12, 6) and len(set(null.keys.tolist())) == 6
    assert not set(null.keys.tolist()) & {1, 2}
    for j, key in enumerate(null.keys):
        np.testing.assert_allclose(null.scores[:, j], verify_texts(texts, int(key), tok))
    np.testing.assert_allclose(null.key_means, null.scores.mean(axis=0))
    assert null.mean == pytest.approx(null.scores.mean())
    assert null.std == pytest.approx(null.scores.mean(axis=0).std())
    # The token sums behind the scores, to pool texts token-weighted (the metric's queries).
    counts = np.array([len(t.split()) - 1 for t in texts])  # word tokenizer: a word, an id
    np.testing.assert_array_equal(null.counts, counts)
    np.testing.assert_allclose(null.sums, null.scores * counts[:, None])
    again = null_reference(texts, tok, num_keys=6, exclude_ids=[1, 2], seed=7)
    np.testing.assert_array_equal(again.keys, null.keys)
    other = null_reference(texts, tok, num_keys=6, seed=8)
    assert set(other.keys.tolist()) != set(null.keys.tolist())


@pytest.mark.parametrize(
    ("vocab_size", "options"),
    [(1000, {}), (3000, {"n_gram": 3}), (1000, {"scheme": "kgw"}), (50_000, {"k_p": 3})],
)
def test_null_keys_batched_give_the_per_key_sums_bit_for_bit(vocab_size, options):
    """The null reference's batched route (distinct pairs scored once per key, keys batched,
    several chunks and key batches here) gives exactly the floats of the per-key route."""
    tok = word_tokenizer(vocab_size)
    verifier = Verifier(tok, chunk_pairs=900, **options)
    token_ids = verifier.token_ids(word_texts(vocab_size, 40, 60, seed=2) + ["w5", ""])
    null = verifier.null_reference_of_token_ids(token_ids, 7, exclude_ids=[11], seed=3)
    per_key = verifier.token_sums(token_ids, np.broadcast_to(null.keys, (len(token_ids), 7)))
    np.testing.assert_array_equal(null.sums, per_key[0])
    np.testing.assert_array_equal(null.counts, per_key[1])


def test_null_evidence_is_what_the_config_asks_for():
    """The empirical null reads the null reference of the config's keys and seed, none of the
    excluded owners; the analytic null, the exact moments of the same token pairs."""
    tok = word_tokenizer(1000)
    verifier = Verifier(tok)
    token_ids = verifier.token_ids(word_texts(1000, 12, 40, seed=5) + ["w5"])
    owner = int(random_keys(1, seed=3)[0])  # the first key seed 3 draws: excluded, not used
    empirical = verifier.null_evidence(
        NullConfig("empirical", keys=7, seed=3), token_ids, exclude_ids=[owner]
    )
    expected = verifier.null_reference_of_token_ids(token_ids, 7, exclude_ids=[owner], seed=3)
    assert isinstance(empirical, NullReference) and owner not in empirical.keys.tolist()
    np.testing.assert_array_equal(empirical.keys, expected.keys)
    np.testing.assert_array_equal(empirical.sums, expected.sums)
    np.testing.assert_array_equal(empirical.counts, expected.counts)

    analytic = verifier.null_evidence(NullConfig("analytic"), token_ids)
    assert isinstance(analytic, AnalyticNull)
    built = AnalyticNull(
        *verifier.countable_pairs(token_ids), len(token_ids), verifier.scheme.null_moments(1000)
    )
    samples, weights = np.array([0, 3, 12]), np.array([0.5, 0.25, 0.25])
    assert analytic.mean_std(samples, weights) == built.mean_std(samples, weights)
    assert analytic.mean_std(samples[:1], weights[:1]) != analytic.mean_std(samples, weights)


def test_null_evidence_refuses_an_analytic_null_the_scheme_cannot_state():
    verifier = Verifier(word_tokenizer(200), "exp_edit")
    with pytest.raises(TypeError, match="empirical null"):
        verifier.null_evidence(NullConfig("analytic"), verifier.token_ids(["w1 w2 w3"]))


def test_null_keys_read_like_waterfall():
    tok = word_tokenizer(500)
    texts = word_texts(500, 6, 30, seed=9)
    null = null_reference(texts, tok, num_keys=2, seed=4)
    for j, key in enumerate(null.keys):
        np.testing.assert_allclose(null.scores[:, j], waterfall_scores(texts, int(key), tok))


def test_tokenizer_given_by_local_path(tmp_path):
    tok = word_tokenizer(4096)
    tok.save_pretrained(tmp_path)
    texts = word_texts(4096, 5, 20)
    np.testing.assert_array_equal(
        verify_texts(texts, 3, str(tmp_path)), verify_texts(texts, 3, tok)
    )


def test_repr_names_configuration_without_keys():
    text = repr(Verifier(word_tokenizer(4096), k_p=3))
    assert "vocab_size=4096" in text and "k_p=3" in text


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda tok: verify_texts([], 1, tok), ValueError, "`texts` is empty"),
        (lambda tok: verify_texts(["w1 w2", 5], 1, tok), TypeError, r"`texts\[1\]`"),
        (lambda tok: verify_texts(["w1 w2"], -1, tok), ValueError, "0..2\\*\\*32-1"),
        (lambda tok: verify_texts(["w1 w2"], 2**32, tok), ValueError, "0..2\\*\\*32-1"),
        (lambda tok: verify_texts(["w1 w2"], [1, 2], tok), ValueError, "one id per text"),
        (lambda tok: verify_texts(["w1 w2"], 1.5, tok), TypeError, "`watermark_ids`"),
        (lambda tok: verify_texts(["w1 w2"], [True], tok), TypeError, r"`watermark_ids\[0\]`"),
        (lambda tok: verify_texts(["w1 w2"], 1, tok, k_p=0), ValueError, "`k_p`"),
        (lambda tok: verify_texts(["w1 w2"], 1, tok, k_p=4095), ValueError, "1..4094"),
        (lambda tok: verify_texts(["w1 w2"], 1, tok, n_gram=1), ValueError, "`n_gram`"),
        (lambda tok: verify_texts(["w1 w2"], 1, object()), TypeError, "`tokenizer`"),
        (lambda tok: Verifier(tok, vocab_size=32000), ValueError, "does not match"),
        (lambda tok: null_reference(["w1 w2"], tok, num_keys=0), ValueError, "`num_keys`"),
    ],
)
def test_bad_input_is_rejected_with_the_argument_named(call, error, match):
    with pytest.raises(error, match=match):
        call(word_tokenizer(4096))


def test_errors_never_contain_the_key():
    secret = 2**32 + 123_456_789
    with pytest.raises(ValueError) as info:
        verify_texts(["w1 w2"], secret, word_tokenizer(4096))
    assert str(secret) not in str(info.value)


def test_public_api_is_exported():
    for name in ("Verifier", "verify_texts", "null_reference", "NullReference"):
        assert name in waterdrum_hf.__all__ and getattr(waterdrum_hf, name) is not None


def test_old_keyword_names_are_refused():
    tok = word_tokenizer(64)
    with pytest.raises(TypeError, match="ids"):
        verify_texts(word_texts(64, 3, 20), ids=7, tokenizer=tok)
    with pytest.raises(TypeError, match="ids"):
        Verifier(tok).verify(["w1 w2"], ids=7)


@pytest.mark.parametrize(
    "settings", [{"k_p": 2}, {"n_gram": 3}, {"scheme": "kgw"}], ids=["k_p", "n_gram", "scheme"]
)
def test_null_reference_reads_with_the_watermarks_settings(settings):
    tok = word_tokenizer(4096)
    texts = word_texts(4096, 6, 30, seed=5)
    null = null_reference(texts, tok, num_keys=3, seed=2, **settings)
    for j, key in enumerate(null.keys):
        np.testing.assert_allclose(
            null.scores[:, j], verify_texts(texts, int(key), tok, **settings)
        )
    assert not np.allclose(null.scores, null_reference(texts, tok, num_keys=3, seed=2).scores)


def test_excluded_ids_are_never_drawn_as_null_keys():
    """The keys a seed draws, then the same seed with the first of them excluded (the owner's
    key among the draws): it is skipped and the next draw takes its place."""
    tok = word_tokenizer(4096)
    texts = word_texts(4096, 4, 20, seed=6)
    drawn = random_keys(5, seed=11)
    for null in (
        null_reference(texts, tok, num_keys=4, exclude_ids=[int(drawn[0])], seed=11),
        Verifier(tok).null_reference(texts, 4, exclude_ids=[int(drawn[0])], seed=11),
    ):
        np.testing.assert_array_equal(null.keys, drawn[1:])


def test_a_negative_token_id_skips_its_pairs_only():
    """An id below 0 (a -100 label left in by a caller) is outside the vocabulary: the pairs it
    is in are skipped, the rest of its text and the other texts of its chunk still count."""
    verifier = Verifier(word_tokenizer(4096))
    key = 77
    sums, counts = verifier.token_sums(
        [[5, 6, -100, 7, 8, 9], [1, 2, 3], [-1, -2]], np.full((3, 1), key)
    )
    np.testing.assert_array_equal(counts, [3, 2, 0])  # (5,6) (7,8) (8,9); (1,2) (2,3); none
    assert counts.dtype == np.int64
    parts, part_counts = verifier.token_sums([[5, 6], [7, 8, 9], [1, 2, 3]], np.full((3, 1), key))
    np.testing.assert_allclose(sums[:, 0], [parts[0, 0] + parts[1, 0], parts[2, 0], 0.0])
    assert part_counts.tolist() == [1, 2, 2]
    scores = verifier.score_token_ids([[5, 6, -100, 7, 8, 9], [1, 2, 3]], key)
    assert np.isfinite(scores).all()


def test_default_null_reference_is_100_keys_of_seed_0():
    tok = word_tokenizer(64)
    texts = word_texts(64, 2, 10, seed=7)
    expected = random_keys(100, seed=0)
    np.testing.assert_array_equal(null_reference(texts, tok).keys, expected)
    np.testing.assert_array_equal(Verifier(tok).null_reference(texts).keys, expected)
    token_ids = Verifier(tok).token_ids(texts)
    np.testing.assert_array_equal(
        Verifier(tok).null_reference_of_token_ids(token_ids).keys, expected
    )


def test_special_tokens_the_tokenizer_would_add_are_not_read():
    """Waterfall tokenises with ``add_special_tokens=False``: a BOS (here an id inside N, so it
    would be counted) is not part of the text."""
    from tokenizers import processors

    tok = copy.deepcopy(word_tokenizer(64))
    tok._tokenizer.post_processor = processors.TemplateProcessing(
        single="w5 $A", special_tokens=[("w5", 5)]
    )
    assert tok("w1 w2")["input_ids"] == [5, 1, 2]
    verifier = Verifier(tok)
    assert [ids.tolist() for ids in verifier.token_ids(["w1 w2 w3"])] == [[1, 2, 3]]
    assert verifier.verify("w1 w2 w3", 9)[0] == verify_texts("w1 w2 w3", 9, word_tokenizer(64))[0]


def test_verifier_repr_is_exact():
    tok = word_tokenizer(4096)
    assert repr(Verifier(tok, scheme="kgw")) == (
        "Verifier(tokenizer='', vocab_size=4096, scheme=kgw, gamma=0.5, n_gram=2)"
    )

    class Bare:
        """A tokenizer without ``name_or_path``: the repr names its type."""

        vocab_size = 64

        def __call__(self, texts, add_special_tokens=False):
            return {"input_ids": [[1, 2] for _ in texts]}

    assert repr(Verifier(Bare())).startswith("Verifier(tokenizer='Bare', vocab_size=64, ")


@pytest.mark.parametrize("tokenizer", [type("NoCall", (), {"vocab_size": 64})(), print])
def test_a_tokenizer_must_be_callable_and_have_a_vocab_size(tokenizer):
    with pytest.raises(TypeError, match="`tokenizer` must be a transformers tokenizer"):
        Verifier(tokenizer)


def test_chunks_stay_under_chunk_pairs():
    verifier = Verifier(word_tokenizer(64), chunk_pairs=10)

    def chunks(lengths):
        return verifier._chunks([[0] * n for n in lengths])

    assert chunks([5, 5, 5]) == [(0, 2), (2, 3)]  # 10 pairs fit, 15 do not
    assert chunks([4, 4, 4, 12, 1]) == [(0, 2), (2, 3), (3, 4), (4, 5)]
    assert chunks([12, 3]) == [(0, 1), (1, 2)]  # a long text is a chunk of its own
    assert chunks([3]) == [(0, 1)]


def test_progress_bar_policy():
    tok = word_tokenizer(64)
    assert Verifier(tok)._progress_enabled(1) is False  # one step: never a bar
    assert Verifier(tok)._progress_enabled(2) is None  # several: on a terminal
    assert Verifier(tok, show_progress=True)._progress_enabled(1) is True
    assert Verifier(tok, show_progress=False)._progress_enabled(5) is False


def test_progress_bar_counts_steps(monkeypatch):
    """One bar step per (chunk, key column), named, shown as asked (the bar itself is
    ``_progress.progress_bar``'s; recorded here, so no tqdm lock is taken)."""
    calls = []

    def recorder(steps, **kwargs):
        calls.append(kwargs)
        return steps

    monkeypatch.setattr(waterdrum_hf.scoring.verification, "progress_bar", recorder)
    tok = word_tokenizer(64)
    Verifier(tok, chunk_pairs=3, show_progress=True).verify(["w1 w2 w3", "w4 w5 w6"], [1, 2])
    Verifier(tok, show_progress=False).verify(["w1 w2 w3", "w4 w5 w6"], [1, 2])
    assert calls == [
        {"desc": "Verifying", "unit": "step", "enabled": True},
        {"desc": "Verifying", "unit": "step", "enabled": False},
    ]


def test_chunks_without_a_countable_pair_do_not_stop_the_others():
    tok = word_tokenizer(64)
    texts, keys = ["w1", "w2 w3", "w4 w5 w6"], [1, 2, 3]
    chunked = Verifier(tok, chunk_pairs=1).verify(texts, keys)
    assert np.isnan(chunked[0])
    np.testing.assert_array_equal(chunked[1:], Verifier(tok).verify(texts, keys)[1:])
    assert chunked[1] == pytest.approx(float(np.cos(2 * np.pi * numpy_position(2, 2, 3) / 64)))


def test_null_chunks_without_a_pair_or_with_one_pair_are_read():
    """One text per chunk: "w1" has no countable pair (the next chunks still count), "w2 w3"
    exactly one; the null's batched sums are the per-key ones."""
    verifier = Verifier(word_tokenizer(64), chunk_pairs=1)
    token_ids = verifier.token_ids(["w1", "w2 w3", "w4 w5 w6"])
    keys = np.array([5, 6])
    sums, counts = verifier.shared_key_sums(token_ids, keys)
    per_key = verifier.token_sums(token_ids, np.broadcast_to(keys, (3, 2)))
    np.testing.assert_array_equal(sums, per_key[0])
    np.testing.assert_array_equal(counts, [0, 1, 2])
    assert (sums[1:] != 0).all()


@pytest.mark.parametrize(("chunk_pairs", "keys_per_call"), [(4, 1), (10, 2), (15, 3)])
def test_null_scores_as_many_keys_per_call_as_chunk_pairs_allows(
    monkeypatch, chunk_pairs, keys_per_call
):
    """One text of 5 distinct pairs: a call holds ``chunk_pairs // 5`` keys, at least one,
    so a chunk never asks the scheme for more than ``max(chunk_pairs, 5)`` terms at once."""
    verifier = Verifier(word_tokenizer(64), chunk_pairs=chunk_pairs)
    token_ids = verifier.token_ids(["w1 w2 w3 w4 w5 w6"])
    keys = np.arange(1, 8)
    sizes = []
    scheme_terms = type(verifier.scheme).token_terms

    def counted(scheme, ids, *args):
        sizes.append(len(ids))
        return scheme_terms(scheme, ids, *args)

    monkeypatch.setattr(type(verifier.scheme), "token_terms", counted)
    sums, _ = verifier.shared_key_sums(token_ids, keys)
    monkeypatch.undo()
    full, last = divmod(len(keys), keys_per_call)
    assert sizes == [5 * keys_per_call] * full + ([5 * last] if last else [])
    per_key = verifier.token_sums(token_ids, keys[None, :])[0]
    np.testing.assert_array_equal(sums, per_key)


def test_scores_of_texts_without_pairs_raise_no_numpy_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = Verifier(word_tokenizer(64)).verify(["w1", "w2 w3"], 4)
    assert np.isnan(scores[0]) and np.isfinite(scores[1])


def test_a_texts_ids_may_come_as_a_row_of_a_2d_array():
    verifier = Verifier(word_tokenizer(64))
    flat = verifier.score_token_ids([[1, 2, 3, 4], [5, 6, 7]], [3, 4])
    rows = verifier.score_token_ids([np.array([[1, 2, 3, 4]]), np.array([[5, 6, 7]])], [3, 4])
    np.testing.assert_array_equal(rows, flat)
    with pytest.raises(ValueError, match="`chunk_pairs`"):
        Verifier(word_tokenizer(64), chunk_pairs=0)


def test_a_null_reference_of_texts_with_nothing_to_count_is_nan_without_warnings():
    """No text has a countable pair: every null level is NaN, quietly (numpy's all-NaN-slice
    warnings are silenced, and only they)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        null = Verifier(word_tokenizer(64)).null_reference(["w1", "w2"], 5)
        assert np.isnan(null.scores).all() and np.isnan(null.key_means).all()
        assert np.isnan(null.mean) and np.isnan(null.std)


def test_null_keys_progress_bar_is_shown_as_asked(monkeypatch, capsys):
    """``show_progress`` decides the null keys' bar as it does verify()'s: shown when True,
    never when False, on a terminal only when None (and never for one key)."""
    tok = word_tokenizer(64)
    Verifier(tok, show_progress=True).null_reference(["w1 w2 w3"], 3)
    assert "Null keys" in capsys.readouterr().err
    Verifier(tok, show_progress=False).null_reference(["w1 w2 w3"], 3)
    assert capsys.readouterr().err == ""
    calls = []

    def recorder(steps, **kwargs):
        calls.append(kwargs)
        return steps

    monkeypatch.setattr(waterdrum_hf.scoring.verification, "progress_bar", recorder)
    for show, keys in ((True, 3), (False, 3), (None, 3), (None, 1)):
        Verifier(tok, show_progress=show).null_reference(["w1 w2 w3"], keys)
    assert calls == [
        {"desc": "Null keys", "unit": "chunk", "enabled": enabled}
        for enabled in (True, False, None, False)
    ]


def test_token_ids_are_int64_even_for_an_empty_text():
    """An empty text encodes to no ids; its array is int64 like every other (numpy would make
    an empty list float64)."""
    ids = Verifier(word_tokenizer(64)).token_ids(["", "w1 w2"])
    assert [a.dtype for a in ids] == [np.dtype(np.int64)] * 2
    assert [a.tolist() for a in ids] == [[], [1, 2]]


@pytest.mark.parametrize(
    "token_ids",
    [
        [],  # no texts
        [[], [5, 6, 7]],  # an empty text first: its list alone would be float64
        [np.array([5, 6, 7], dtype=np.uint64)],  # uint64 ids
        [[[5, 6], [7, 8]]],  # 2-D ids: read flat
    ],
)
def test_countable_pairs_are_int64_whatever_the_ids_came_as(token_ids):
    """The pairs are (previous token, token, text) of the ids read as int64, whatever dtype or
    shape the ids came in: numbers a caller can index with and compare to int64 keys."""
    contexts, tokens, text_of = Verifier(word_tokenizer(64)).countable_pairs(token_ids)
    flat = [np.asarray(ids).reshape(-1).tolist() for ids in token_ids]
    expected = [(t[j - 1], t[j], i) for i, t in enumerate(flat) for j in range(1, len(t))]
    assert [a.dtype for a in (contexts, tokens, text_of)] == [np.dtype(np.int64)] * 3
    assert contexts.shape == (len(expected), 1)
    pairs = zip(contexts[:, 0].tolist(), tokens.tolist(), text_of.tolist(), strict=True)
    assert list(pairs) == expected


def test_shared_key_sums_read_the_keys_flat():
    """Keys given as one row of a 2-D array are the same keys as the flat list: one column
    per key, each equal to token_sums under that key."""
    verifier = Verifier(word_tokenizer(97))
    token_ids = verifier.token_ids(word_texts(97, 4, 20, seed=5))
    keys = [3_000_000_017, 5, 9]
    sums, counts = verifier.shared_key_sums(token_ids, np.array([keys]))
    assert sums.shape == (4, 3)
    expected, expected_counts = verifier.token_sums(token_ids, np.tile(keys, (4, 1)))
    np.testing.assert_array_equal(sums, expected)
    np.testing.assert_array_equal(counts, expected_counts)


def test_an_unscored_text_scores_numpys_nan():
    """A text without a countable token scores ``np.nan`` itself: not 0/0, whose NaN has the
    sign bit set on x86 (np.signbit, the bytes and any digest of them would tell)."""
    scores = Verifier(word_tokenizer(64)).score_token_ids([[1, 2, 3], [4], []], 9)
    assert np.isnan(scores[1:]).all() and not np.signbit(scores[1:]).any()
    assert scores[1:].tobytes() == np.array([np.nan, np.nan]).tobytes()


def test_texts_with_nothing_to_count_are_logged_with_the_shortest_text_read(caplog):
    with caplog.at_level(logging.WARNING, logger="waterdrum_hf.scoring.verification"):
        scores = Verifier(word_tokenizer(64)).verify(["w1", "w1 w2 w3"], 5)
    assert np.isnan(scores[0]) and not np.isnan(scores[1])
    assert "1 of 2 texts have no countable token (fewer than n_gram=2 tokens" in caplog.text


def test_the_built_in_tokenizers_name_is_refused_with_what_to_pass():
    with pytest.raises(ValueError, match=r"pass waterdrum_hf.tiny.load\(\)\[1\]"):
        Verifier("tiny")


def test_a_missing_local_tokenizer_is_named_as_a_tokenizer(tmp_path):
    with pytest.raises(ValueError, match=r"^the tokenizer '.*missing' does not exist"):
        Verifier(str(tmp_path / "missing"))
