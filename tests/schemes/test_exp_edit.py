"""EXP-edit (Kuditipudi et al.) as a data owner's scheme: key, writer and reader against
independent computations.

* the key against numpy's own ``Philox`` generator (the documented derivation);
* the reader against two pure-Python oracles (float64; the kernel runs the alignment in
  float32, as the authors' Levenshtein does, so they agree to 1e-5 relative): every monotone matching enumerated on tiny
  texts (the alignment's definition, no recurrence), and the authors' Levenshtein recurrence
  written out plainly over every window and shift (longer texts, key wrap-around, windows);
* the writer against ``argmax xi ** (1 / p)`` computed in numpy, and its marginal over many
  keys against ``p`` (distortion-free).

MarkLLM's ``EXPEdit`` is not run here: its Levenshtein is a Cython module built for
CPython 3.9 only; its statistic (whole text, ``gamma`` 0, minimum over the key's shifts) is
the one the recurrence oracle below writes out.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
import torch
from tokenizer_builders import word_tokenizer

from waterdrum_hf import Verifier
from waterdrum_hf.schemes.base import SequenceScheme
from waterdrum_hf.schemes.exp_edit.kernel import DOMAIN
from waterdrum_hf.schemes.exp_edit.scheme import EXPEditScheme


def numpy_key(watermark_id: int, key_length: int, vocab_size: int) -> np.ndarray:
    generator = np.random.Generator(np.random.Philox(key=watermark_id + (DOMAIN << 64)))
    return generator.random(key_length * vocab_size).reshape(key_length, vocab_size)


@pytest.mark.parametrize("watermark_id", [0, 1, 2**31 + 5, 2**32 - 1])
def test_key_is_numpys_philox_stream(watermark_id):
    expected = numpy_key(watermark_id, 9, 13)
    np.testing.assert_array_equal(EXPEditScheme(key_length=9).key(watermark_id, 13), expected)
    rows = EXPEditScheme(key_length=9).key(watermark_id, 13, rows=[3, 12])  # 12 wraps to 3
    np.testing.assert_array_equal(rows, expected[[3, 3]])


def matching_cost(tokens, xi, shift, gamma):
    """Least cost over every monotone matching of the text to key positions shift.. (each
    pair costs log(1 - xi), each unmatched token or key position gamma): enumerated."""
    k, n = len(tokens), len(xi)
    best = math.inf
    for r in range(k + 1):
        for text_side in itertools.combinations(range(k), r):
            for key_side in itertools.combinations(range(k), r):
                cost = gamma * 2 * (k - r)
                for i, j in zip(text_side, key_side, strict=True):
                    cost += math.log(1 - xi[(shift + j) % n, tokens[i]])
                best = min(best, cost)
    return best


@pytest.mark.parametrize("gamma", [0.0, 0.7])
def test_whole_text_cost_is_the_best_matching_over_every_shift(gamma):
    vocab, n = 6, 5
    scheme = EXPEditScheme(key_length=n, gamma_edit=gamma)
    rng = np.random.default_rng(3)
    texts = [rng.integers(0, vocab, size) for size in (1, 2, 3, 4)]
    ids = np.array([[11, 12], [13, 14], [15, 16], [17, 18]])
    costs, counts = scheme.alignment_costs(texts, ids, vocab)
    np.testing.assert_array_equal(counts, [1, 2, 3, 4])
    for t, tokens in enumerate(texts):
        for k, key in enumerate(ids[t]):
            xi = numpy_key(int(key), n, vocab)
            expected = min(matching_cost(tokens, xi, s, gamma) for s in range(n))
            assert costs[t, k] == pytest.approx(expected, rel=1e-5, abs=1e-5)  # float32 DP


def levenshtein(tokens, xi_rows, gamma):
    """The authors' recurrence, written out plainly."""
    a = [[0.0] * (len(xi_rows) + 1) for _ in range(len(tokens) + 1)]
    for i in range(len(tokens) + 1):
        for j in range(len(xi_rows) + 1):
            if i == 0:
                a[i][j] = j * gamma
            elif j == 0:
                a[i][j] = i * gamma
            else:
                cost = math.log(1 - xi_rows[j - 1][tokens[i - 1]])
                a[i][j] = min(a[i - 1][j] + gamma, a[i][j - 1] + gamma, a[i - 1][j - 1] + cost)
    return a[-1][-1]


def statistic(tokens, xi, block, gamma):
    n = len(xi)
    return min(
        levenshtein(tokens[i : i + block], [xi[(j + s) % n] for s in range(block)], gamma)
        for i in range(len(tokens) - block + 1)
        for j in range(n)
    )


@pytest.mark.parametrize(
    ("key_length", "block_size", "gamma"),
    [(40, None, 0.0), (7, None, 0.4), (45, 6, 0.0), (5, 8, 1.0)],  # 7, 5: the key wraps
)
def test_statistic_is_the_authors_recurrence_over_windows_and_shifts(key_length, block_size, gamma):
    vocab = 30
    scheme = EXPEditScheme(key_length=key_length, gamma_edit=gamma, block_size=block_size)
    rng = np.random.default_rng(key_length)
    texts = [rng.integers(0, vocab, size) for size in (13, 20)]
    costs, counts = scheme.alignment_costs(texts, np.array([[5], [2**32 - 1]]), vocab)
    for t, key in enumerate([5, 2**32 - 1]):
        xi = numpy_key(key, key_length, vocab)
        expected = statistic(texts[t], xi, block_size or len(texts[t]), gamma)
        assert costs[t, 0] == pytest.approx(expected, rel=1e-5)  # float32, as the authors
        assert counts[t] == (block_size or len(texts[t]))


def test_out_of_vocabulary_tokens_are_dropped_and_short_texts_are_skipped():
    scheme = EXPEditScheme(key_length=16, block_size=3)
    ids = np.array([[9]] * 4)
    texts = [[1, 2, 50, 3], [1, 2, 3], [4, 50, 5], []]
    sums, counts = scheme.text_sums(texts, ids, 20)
    np.testing.assert_array_equal(counts, [3, 3, 0, 0])
    assert sums[0, 0] == sums[1, 0] and sums[0, 0] > 0  # minus a cost below 0
    np.testing.assert_array_equal(sums[2:], 0.0)
    costs, _ = scheme.alignment_costs(texts, ids, 20)
    assert np.isnan(costs[2:]).all() and sums[0, 0] == -costs[0, 0]


def write(scheme, watermark_id, length, vocab, seed=0):
    """Tokens sampled by the processor from random next-token distributions."""
    rng = np.random.default_rng(seed)
    processor = scheme.logits_processor(vocab, watermark_id)
    prompt = torch.zeros((1, 4), dtype=torch.long)
    tokens = prompt
    for _ in range(length):
        logits = torch.from_numpy(rng.normal(0, 2, (1, vocab)))
        out = processor(tokens, logits)
        tokens = torch.cat([tokens, out.argmax(-1, keepdim=True)], dim=1)
    return tokens[0, 4:].numpy()


def test_writer_leaves_exactly_the_argmax_of_xi_to_the_one_over_p():
    vocab, n = 7, 3
    scheme = EXPEditScheme(key_length=n)
    rng = np.random.default_rng(1)
    processor = scheme.logits_processor(vocab, [21, 22])
    prompt = torch.ones((4, 5), dtype=torch.long)  # two samples per key
    processor.reset([21, 22], prompt_length=5)
    for step in range(5):  # 3, 4 wrap around the key
        scores = torch.from_numpy(rng.normal(0, 1.5, (4, vocab + 2)))  # padded vocabulary
        out = processor(torch.cat([prompt, torch.zeros((4, step), dtype=torch.long)], 1), scores)
        probs = torch.softmax(scores[:, :vocab], -1).numpy()
        for row, key in enumerate([21, 21, 22, 22]):
            xi = numpy_key(key, n, vocab)[step % n]
            chosen = int(np.argmax(xi ** (1 / probs[row])))
            assert out[row, chosen] == 0
            assert torch.isinf(out[row]).sum() == vocab + 1


@pytest.mark.parametrize("step", [0, 3])
def test_writer_is_distortion_free_over_keys(step):
    """Chi-square of the chosen tokens over 6000 keys against p: 4 degrees of freedom, so
    28 is exceeded by chance once in ~70000; xi ** p instead of xi ** (1 / p), or a uniform
    pick, reads in the thousands."""
    vocab, keys = 5, 6000
    p = np.array([0.5, 0.25, 0.15, 0.07, 0.03])
    processor = EXPEditScheme(key_length=4).logits_processor(vocab, list(range(keys)))
    scores = torch.log(torch.from_numpy(p)).repeat(keys, 1)
    out = processor(torch.zeros((keys, 2), dtype=torch.long), scores)  # the prompt: 2 tokens
    for i in range(1, step + 1):
        out = processor(torch.zeros((keys, 2 + i), dtype=torch.long), scores)
    chosen = np.bincount(out.argmax(-1).numpy(), minlength=vocab)
    chi_square = float(((chosen - keys * p) ** 2 / (keys * p)).sum())
    assert chi_square < 28


def test_written_text_reads_high_under_its_key_and_at_the_null_under_others():
    vocab = 60
    scheme = EXPEditScheme()
    tokens = write(scheme, 424242, 80, vocab)
    edited = np.delete(tokens, np.arange(0, 80, 7))  # every 7th token deleted
    others = np.arange(1000, 1030)
    sums, counts = scheme.text_sums([tokens, edited], np.array([[424242, *others]] * 2), vocab)
    scores = sums / counts[:, None]
    for own, null in zip(scores[:, 0], scores[:, 1:], strict=True):
        assert own > null.max() + 5 * null.std()


def test_verifier_scores_whole_texts_through_the_scheme():
    vocab = 40
    verifier = Verifier(word_tokenizer(vocab), EXPEditScheme(key_length=32))
    texts = [" ".join(f"w{i}" for i in write(verifier.scheme, 7, 30, vocab)), "w1 w2 <eos> w3"]
    ids = verifier.token_ids(texts)
    sums, counts = verifier.token_sums(ids, np.array([[7, 8], [9, 7]]))
    expected, expected_counts = verifier.scheme.text_sums(ids, np.array([[7, 8], [9, 7]]), vocab)
    np.testing.assert_array_equal(sums, expected)
    np.testing.assert_array_equal(counts, [30, 3])  # <eos> is outside the vocabulary
    null_sums, null_counts = verifier.shared_key_sums(ids, np.array([8, 7]))
    np.testing.assert_array_equal(null_sums[0], sums[0, ::-1])
    np.testing.assert_array_equal(null_counts, counts)
    scores = verifier.verify(texts, [7, 7])
    np.testing.assert_allclose(scores, [sums[0, 0] / 30, sums[1, 1] / 3])


def test_per_token_readers_refuse_it():
    scheme = EXPEditScheme()
    assert isinstance(scheme, SequenceScheme)
    with pytest.raises(TypeError, match="scores whole texts"):
        scheme.token_terms(np.zeros(1), np.zeros((1, 1)), np.zeros(1), 10)
    from waterdrum_hf.report.token_view import token_view

    verifier = Verifier(word_tokenizer(10), scheme)
    with pytest.raises(ValueError, match="no token view"):
        token_view("w1 w2 w3", 5, verifier)


@pytest.mark.parametrize(
    ("settings", "error", "match"),
    [
        ({"key_length": 0}, ValueError, "key_length"),
        ({"gamma_edit": -1.0}, ValueError, "gamma_edit"),
        ({"gamma_edit": math.inf}, ValueError, "gamma_edit"),
        ({"gamma_edit": True}, TypeError, "gamma_edit"),
        ({"block_size": 0}, ValueError, "block_size"),
        ({"n_gram": 3}, ValueError, "n_gram"),
    ],
)
def test_settings_are_checked(settings, error, match):
    with pytest.raises(error, match=match):
        EXPEditScheme(**settings)


def test_settings_and_writer_refusals():
    assert EXPEditScheme(gamma_edit=0).settings() == {
        "scheme": "exp_edit", "key_length": 256, "gamma_edit": 0.0, "block_size": None,
        "n_gram": 2, "vocab_size": None,
    }  # fmt: skip
    with pytest.raises(TypeError, match="no settings"):
        EXPEditScheme().logits_processor(10, 1, delta=2.0)
    with pytest.raises(ValueError, match="0..2"):
        EXPEditScheme().logits_processor(10, 2**32)
    assert "num_ids=2" in repr(EXPEditScheme().logits_processor(10, [123456, 7]))
    assert "123456" not in repr(EXPEditScheme().logits_processor(10, [123456, 7]))


def test_metric_reads_owners_against_the_empirical_null_and_refuses_the_analytic_one():
    from waterdrum_hf import NullConfig, WaterDrumConfig, waterdrum_result

    vocab, scheme = 50, EXPEditScheme(key_length=64)
    owners = [101, 202, 303, 404]
    texts = [
        " ".join(f"w{i}" for i in write(scheme, owner, 40, vocab, seed=s))
        for owner in owners
        for s in range(2)
    ]
    references = [owner for owner in owners for _ in range(2)]
    forget = texts[:4]  # owners 101, 202: the model still writes their watermark
    unwatermarked = [" ".join(f"w{i}" for i in np.random.default_rng(s).integers(0, vocab, 40))
                     for s in range(4)]  # fmt: skip
    config = WaterDrumConfig(scheme=scheme, null=NullConfig("empirical", keys=30))
    result = waterdrum_result(
        forget + unwatermarked, references, word_tokenizer(vocab), config=config,
        forget_ids=[101, 202],
    )  # fmt: skip
    assert result.forget.p_value == pytest.approx(1 / 31)  # above every null key
    # retain (unwatermarked) reads at the null, below every forget query (AUROC: retain positive)
    assert result.retain.p_value > 0.05 and result.separability_auroc == 0.0


def test_the_analytic_null_is_refused_before_any_text_is_scored(monkeypatch):
    """EXP-edit states no null moments: the analytic null is refused up front, not after a
    scoring pass that may take minutes (a check placed after scoring fails here)."""
    from waterdrum_hf import NullConfig, WaterDrumConfig, waterdrum_result

    def no_scoring(*args, **kwargs):
        raise AssertionError("scored before the null was checked")

    monkeypatch.setattr(Verifier, "token_sums", no_scoring)
    vocab, scheme = 50, EXPEditScheme(key_length=64)
    with pytest.raises(TypeError, match=r"use the empirical null \(null_keys=K\)"):
        waterdrum_result(
            ["w1 w2 w3 w4"], [7], word_tokenizer(vocab),
            config=WaterDrumConfig(scheme=scheme, null=NullConfig("analytic")),
        )  # fmt: skip


def test_reset_sets_the_ids_and_where_generation_starts():
    vocab, scheme = 9, EXPEditScheme(key_length=4)
    processor = scheme.logits_processor(vocab, 1)
    scores = torch.from_numpy(np.random.default_rng(2).normal(0, 1, (1, vocab)))
    probs = torch.softmax(scores, -1).numpy()[0]
    for key, prompt_length, length in [(33, 3, 5), (34, 5, 5), (35, 1, 8)]:
        processor.reset(key, prompt_length=prompt_length)
        out = processor(torch.zeros((1, length), dtype=torch.long), scores)
        xi = numpy_key(key, 4, vocab)[(length - prompt_length) % 4]
        assert int(out.argmax()) == int(np.argmax(xi ** (1 / probs)))


def test_paraphrase_watermark_reads_under_the_owner_key_against_other_keys(tiny_model):
    """The tiny model paraphrases under EXP-edit (sampling, as it must); each text reads
    higher under its owner's key than under any of 20 keys that own nothing."""
    from datasets import Dataset

    from waterdrum_hf import WatermarkedDataset
    from waterdrum_hf.data.corpus import toy_corpus

    model, tokenizer = tiny_model
    texts = toy_corpus().shuffle(seed=0).select(range(4))["text"]
    passages = Dataset.from_dict({"text": list(texts), "owner_id": [11, 22, 11, 22]})
    wm = WatermarkedDataset(
        model, tokenizer, scheme="exp_edit", do_sample=True, max_new_tokens=32,
        show_progress=False,
    )  # fmt: skip
    out = passages.map(wm, batched=True, batch_size=4)
    verifier = Verifier(tokenizer, "exp_edit")
    ids = verifier.token_ids(out["text"])
    keys = np.array([[owner, *range(100, 120)] for owner in out["owner_id"]])
    sums, counts = verifier.token_sums(ids, keys)
    scores = sums / counts[:, None]
    np.testing.assert_allclose(out["watermark_score"], scores[:, 0], rtol=1e-6)  # self-check
    assert (scores[:, 0] > scores[:, 1:].max(axis=1)).all()


def test_exp_edit_by_name_through_the_entry_points():
    """``--scheme exp_edit --key-length 64`` through the scoring scripts' parser, the trainer
    flags, the flat keywords and the config's dict; the reproduction and watermarking configs
    take it (sampling) and refuse its settings under another scheme."""
    from waterdrum_hf import WatermarkingConfig
    from waterdrum_hf.callbacks.arguments import WaterDrumArguments
    from waterdrum_hf.config import WaterDrumConfig
    from waterdrum_hf.experiments.reproduction.config import ReproductionConfig
    from waterdrum_hf.scripts.parser import ScriptParser
    from waterdrum_hf.scripts.scoring_arguments import ScoringArguments

    want = EXPEditScheme(key_length=64)
    [scoring] = ScriptParser([ScoringArguments]).parse_args_into_dataclasses(
        ["--scheme", "exp_edit", "--key-length", "64"]
    )
    assert scoring.scoring_config().scheme == want
    trainer_flags = WaterDrumArguments(waterdrum_scheme="exp_edit", waterdrum_key_length=64)
    assert trainer_flags.scoring_config().scheme == want
    config = WaterDrumConfig.from_keywords({"scheme": "exp_edit", "key_length": 64})
    assert config.scheme == want and WaterDrumConfig.from_dict(config.to_dict()) == config
    assert ReproductionConfig(scheme="exp_edit").watermark_settings() == {
        "scheme": "exp_edit", "do_sample": True,
    }  # fmt: skip
    with pytest.raises(ValueError, match="`gamma_edit` is a setting of the EXPEdit scheme"):
        WaterDrumConfig.from_keywords({"scheme": "kgw", "gamma_edit": 0.3})
    with pytest.raises(ValueError, match="`gamma` is a setting of the KGW scheme, not of"):
        WaterDrumConfig.from_keywords({"scheme": "exp_edit", "gamma": 0.3})
    with pytest.raises(ValueError, match="`key_length` is a setting of the exp_edit scheme"):
        WatermarkingConfig(key_length=64)
    with pytest.raises(ValueError, match="scheme='exp_edit' watermarks by sampling"):
        WatermarkingConfig(scheme="exp_edit")
    assert WatermarkingConfig(scheme="exp_edit", do_sample=True).writer_settings() == {}


def test_whole_text_counts_are_integers_and_the_bar_counts_chunks_as_asked(capsys):
    """Counts are int64 as for per-token schemes (bincount's); one bar step per chunk of texts,
    labelled as the per-token bars are ("Verifying", "Null keys"), shown when asked, never
    when not (stderr is not a terminal here, so only ``show_progress=True`` shows it)."""
    texts = ["w1 w2 w3", "w4 w5 w6"]  # 3 pairs each: two chunks of chunk_pairs=3
    shown = Verifier(
        word_tokenizer(40), EXPEditScheme(key_length=32), chunk_pairs=3, show_progress=True
    )
    ids = shown.token_ids(texts)
    sums, counts = shown.token_sums(ids, np.array([[7], [8]]))
    assert counts.dtype == np.int64 and counts.tolist() == [3, 3]
    verifying = capsys.readouterr().err
    assert re.search(r"Verifying: 100%\|[^\r\n]*\| 2/2 \[[^\]]*(chunk/s|s/chunk)\]", verifying)
    null_sums, null_counts = shown.shared_key_sums(ids, np.array([7, 8]))
    assert null_counts.dtype == np.int64 and null_counts.tolist() == [3, 3]
    null = capsys.readouterr().err
    assert re.search(r"Null keys: 100%\|[^\r\n]*\| 2/2 \[[^\]]*(chunk/s|s/chunk)\]", null)
    quiet = Verifier(
        word_tokenizer(40), EXPEditScheme(key_length=32), chunk_pairs=3, show_progress=False
    )
    quiet.token_sums(ids, np.array([[7], [8]]))
    quiet.shared_key_sums(ids, np.array([7, 8]))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: EXPEditScheme(key_length=0), ValueError, "`key_length` must be >= 1"),
        (lambda: EXPEditScheme(key_length=2.0), TypeError, "`key_length` must be an integer"),
        (lambda: EXPEditScheme(block_size=0), ValueError, "`block_size` must be >= 1"),
        (lambda: EXPEditScheme().check_vocab_size(1), ValueError, "`vocab_size` must be >= 2"),
        (lambda: EXPEditScheme().key(2**32, 10), ValueError, r"`watermark_id\[0\]` must be in"),
        (lambda: EXPEditScheme().logits_processor(1, 7), ValueError, "`vocab_size` must be >= 2"),
    ],
)
def test_refusals_name_their_argument(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_settings_keep_their_types_and_two_tokens_are_a_vocabulary():
    scheme = EXPEditScheme(key_length=np.int64(8), gamma_edit=1, block_size=np.int64(4))
    assert (type(scheme.key_length), type(scheme.gamma_edit), type(scheme.block_size)) == (
        int, float, int,
    )  # fmt: skip
    assert scheme.settings()["key_length"] == 8 and scheme.settings()["block_size"] == 4
    scheme.check_vocab_size(2)
    processor = scheme.logits_processor(2, 7)
    out = processor(torch.zeros((1, 1), dtype=torch.long), torch.zeros(1, 2))
    assert sorted(out[0].tolist()) == [-math.inf, 0.0]


def test_the_shortest_text_it_reads_is_named():
    assert EXPEditScheme().min_tokens() == "1 token"
    assert EXPEditScheme(block_size=4).min_tokens() == "block_size=4 tokens"


def test_writer_settings_follow_the_vocabulary_and_the_ids_without_showing_them():
    scheme = EXPEditScheme(key_length=8)
    settings = scheme.logits_processor(10, [123456, 7]).settings()
    assert settings == scheme.logits_processor(10, [123456, 7]).settings()
    assert settings != scheme.logits_processor(12, [123456, 7]).settings()
    assert settings != scheme.logits_processor(10, [123456, 8]).settings()
    assert "123456" not in repr(settings)


def test_no_texts_one_text_and_only_short_texts_read_as_any_batch():
    """A text's cost does not depend on the batch it comes in: alone, or beside texts too
    short to score; no texts give empty results of the usual types."""
    scheme = EXPEditScheme(key_length=8, block_size=3)
    long, short = [3, 1, 4, 1, 5], [2]
    keys = np.array([[21, 22]] * 3)
    costs, counts = scheme.alignment_costs([long, short, long], keys, 10)
    alone, alone_counts = scheme.alignment_costs([long], keys[:1], 10)
    np.testing.assert_array_equal(alone, costs[:1])
    assert alone_counts.tolist() == [3] and np.isfinite(alone).all()
    only_short, short_counts = scheme.alignment_costs([short, []], keys[:2], 10)
    assert np.isnan(only_short).all() and short_counts.tolist() == [0, 0]
    for reader in (scheme, EXPEditScheme(key_length=8)):  # with blocks and without
        none, none_counts = reader.alignment_costs([], np.zeros((0, 2), dtype=np.int64), 10)
        assert none.shape == (0, 2) and none_counts.shape == (0,)
        assert none_counts.dtype == np.int64
    with pytest.raises(ValueError, match=r"a row of keys per text, shape \(2, K\)"):
        scheme.alignment_costs([long, long], np.array([21, 22]), 10)


def test_a_one_token_text_is_read():
    """Without blocks a single token is a text (min_tokens says "1 token"): its sum is minus its
    cost, not 0."""
    scheme = EXPEditScheme(key_length=8)
    sums, counts = scheme.text_sums([[4]], np.array([[21]]), 10)
    costs, _ = scheme.alignment_costs([[4]], np.array([[21]]), 10)
    assert counts.tolist() == [1] and sums[0, 0] == -costs[0, 0] != 0


def test_ids_and_sizes_of_any_integer_type_read_the_same():
    """Texts' ids as uint64 beside int64, key rows as uint8, the vocabulary size as a numpy
    integer: the same numbers as with Python ints."""
    scheme = EXPEditScheme(key_length=256)
    texts = [[3, 1, 4, 1, 5], [9, 2, 6]]
    keys = np.array([[21], [22]])
    expected, _ = scheme.alignment_costs(texts, keys, 10)
    mixed = [np.array(texts[0], dtype=np.uint64), np.array(texts[1])]
    np.testing.assert_array_equal(scheme.alignment_costs(mixed, keys, np.uint64(10))[0], expected)
    np.testing.assert_array_equal(
        scheme.key(21, 10, rows=np.array([1, 255], dtype=np.uint8)),
        scheme.key(21, 10, rows=[1, 255]),
    )
