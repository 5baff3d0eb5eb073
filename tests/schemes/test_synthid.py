"""Adapted Synth-ID: g-values against transformers' own ``compute_g_values``, the writer against
transformers' processor, written text read back per owner, the exact null against brute force
and against random keys, bad input, and ``scheme="synthid"`` by name through every entry point."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tokenizer_builders import word_texts, word_tokenizer
from transformers import SynthIDTextWatermarkLogitsProcessor

from waterdrum_hf import Verifier, WatermarkingConfig, verify_texts
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.schemes import SynthIDScheme, resolve_scheme, synthid_keys
from waterdrum_hf.schemes.synthid.scheme import HASH_MULTIPLIER, ngram_hashes
from waterdrum_hf.scoring.analytic_null import AnalyticNull

N = 1000


def transformers_processor(
    scheme: SynthIDScheme, owner: int
) -> SynthIDTextWatermarkLogitsProcessor:
    return SynthIDTextWatermarkLogitsProcessor(
        ngram_len=scheme.n_gram,
        keys=scheme.keys(owner)[0].tolist(),
        sampling_table_size=scheme.sampling_table_size,
        sampling_table_seed=scheme.sampling_table_seed,
        context_history_size=16,
        device="cpu",
    )


@pytest.mark.parametrize(
    ("n_gram", "depth", "size", "seed"),
    [(2, 1, 2**16, 0), (3, 7, 2**10, 5), (5, 30, 2**16, 0), (4, 4, 1000, 2**32 - 1), (2, 3, 7, 1)],
)
def test_g_values_equal_transformers_compute_g_values(n_gram, depth, size, seed):
    """Random owners and token ids, including ids past 2**15 (hash products that overflow
    int64) and table sizes that are not a power of two (torch's floor modulo of a negative
    hash; 7, one below a power of two). Catches a hash over the tokens in the wrong order, a key mixed in differently, a
    C-style remainder on negative hashes, or table bits that are not torch's."""
    rng = np.random.default_rng(n_gram * 100 + depth)
    scheme = SynthIDScheme(
        n_gram=n_gram, depth=depth, sampling_table_size=size, sampling_table_seed=seed
    )
    for owner in rng.integers(0, 2**32, size=3).tolist():
        ids = rng.integers(0, 200_000, size=(2, 25))
        want = transformers_processor(scheme, owner).compute_g_values(torch.tensor(ids)).numpy()
        windows = np.lib.stride_tricks.sliding_window_view(ids, n_gram, axis=1)
        contexts = windows[..., :-1].reshape(-1, n_gram - 1)
        ours = scheme.g_values(np.full(len(contexts), owner), contexts, windows[..., -1].ravel())
        np.testing.assert_array_equal(ours.reshape(want.shape), want)


def test_a_text_scores_the_mean_g_value_of_its_n_grams():
    """Through the public Verifier: the score is the mean over every n-gram of the text (first
    n - 1 tokens uncounted) and every layer of transformers' g-values. Catches counting the
    first tokens, or averaging layers and tokens with other weights."""
    scheme = SynthIDScheme(n_gram=3, depth=5)
    [text] = word_texts(N, 1, 60, seed=2)
    ids = [int(word[1:]) for word in text.split()]
    g = transformers_processor(scheme, 1234).compute_g_values(torch.tensor([ids])).numpy()
    score = Verifier(word_tokenizer(N), scheme).verify(text, 1234)[0]
    assert score == pytest.approx(g.mean(), abs=1e-12)
    assert g.shape[1] == len(ids) - 2


def test_keys_follow_the_documented_derivation():
    """splitmix64 of (id << 32 | layer), top bit cleared, by hand with Python integers: a change
    of derivation would silently orphan every watermark written before it."""

    def splitmix(x: int) -> int:
        mask = 2**64 - 1
        z = (x + 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return (z ^ (z >> 31)) & (2**63 - 1)

    keys = synthid_keys([0, 7, 2**32 - 1], 4)
    for row, owner in enumerate([0, 7, 2**32 - 1]):
        assert keys[row].tolist() == [splitmix((owner << 32) | layer) for layer in range(4)]
    assert len(set(synthid_keys(np.arange(50), 30).ravel().tolist())) == 50 * 30
    with pytest.raises(ValueError, match=r"watermark_ids\[0\].*0\.\.2\*\*32-1|4294967296"):
        synthid_keys(2**32, 3)


def test_the_writer_is_transformers_processor_per_owner():
    """Four rows of two owners (blocks 0, 0, 1, 1 of one id per input row) against
    transformers' processor run on each owner's rows alone, over several steps: equal. Catches
    rows given another owner's keys, or state shared between owners."""
    scheme = SynthIDScheme(n_gram=3, depth=6)
    writer = scheme.logits_processor(N, [11, 22])
    oracles = {
        owner: SynthIDTextWatermarkLogitsProcessor(
            ngram_len=3,
            keys=scheme.keys(owner)[0].tolist(),
            sampling_table_size=scheme.sampling_table_size,
            sampling_table_seed=0,
            context_history_size=1024,
            device="cpu",
        )
        for owner in (11, 22)
    }
    generator = torch.Generator().manual_seed(0)
    input_ids = torch.randint(0, N, (4, 5), generator=generator)
    for _ in range(4):
        scores = torch.randn(4, N + 3, generator=generator)  # a padded model vocabulary
        ours = writer(input_ids, scores)
        for owner, rows in ((11, [0, 1]), (22, [2, 3])):
            want = oracles[owner](input_ids[rows], scores[rows])
            torch.testing.assert_close(ours[rows], want, rtol=0, atol=0)
        input_ids = torch.cat([input_ids, torch.randint(0, N, (4, 1), generator=generator)], 1)
    assert "11" not in repr(writer) and "22" not in repr(writer)  # keys never shown


@pytest.mark.kernels
def test_text_written_under_one_owner_reads_high_under_it_and_null_under_another(tiny_model):
    """The built-in model samples (do_sample=True) with the writer, one owner per row, four
    rows each: pooled over an owner's texts (Stouffer's z, each text's z from the exact null),
    the texts read far above the null under their owner and as the null under the other (a
    row that ends at once has nothing to read; at least three of four must have text).

    The bounds follow from the null, not from one machine's values: under a key that did not
    write them, each text's z is about N(0, 1) and so is the pooled z, so ``|z| < 4`` fails by
    chance with probability 6e-5 per owner. Under the writer's key a single text's z ranges
    from about 2 (a repetitive text) to 22 (measured on the shipped model under avx2 and
    avx512 kernels), so one text may fall short of any fixed bound; pooled over four it reads
    about 30, against a bound of 5. Catches a writer that ignores the keys, swaps owners, or a
    reader whose keys differ from the writer's."""
    model, tokenizer = tiny_model
    scheme = SynthIDScheme()
    owners = [12345, 987654321]
    starts = ["The module", "A function", "The class", "This method"]
    rows = [(start, owner) for start in starts for owner in owners]
    writer = scheme.logits_processor(tokenizer.vocab_size, [owner for _, owner in rows])
    prompts = tokenizer([start for start, _ in rows], return_tensors="pt", padding=True)
    torch.manual_seed(0)
    output = model.generate(
        **prompts,
        do_sample=True,
        top_k=0,
        max_new_tokens=150,
        logits_processor=[writer],
        pad_token_id=tokenizer.eos_token_id,
    )
    texts = tokenizer.batch_decode(
        output[:, prompts["input_ids"].shape[1] :], skip_special_tokens=True
    )
    verifier = Verifier(tokenizer, scheme)
    moments = scheme.null_moments(verifier.vocab_size)

    def z(text: str, key: int) -> float:
        contexts, tokens, sample_of = verifier.countable_pairs(verifier.token_ids(text))
        null = AnalyticNull(contexts, tokens, sample_of, 1, moments)
        mean, std = null.mean_std(np.array([0]), np.array([1.0 / len(tokens)]))
        assert abs(mean - 0.5) < 0.01
        return (verifier.verify(text, key)[0] - mean) / std

    for mine, theirs in (owners, owners[::-1]):
        written = [text for text, (_, owner) in zip(texts, rows, strict=True) if owner == mine]
        # A row may end at once (EOS); it has nothing to read and is left out, counted.
        written = [t for t in written if len(verifier.countable_pairs(verifier.token_ids(t))[1])]
        assert len(written) >= 3
        pooled_mine = sum(z(text, mine) for text in written) / np.sqrt(len(written))
        pooled_theirs = sum(z(text, theirs) for text in written) / np.sqrt(len(written))
        assert pooled_mine > 5, (mine, pooled_mine)
        assert abs(pooled_theirs) < 4, (theirs, pooled_theirs)


def test_analytic_null_is_exact_over_every_key_residue():
    """A table of 64 bits: the variance of a weighted sum over the 64 residues of a layer's
    key, computed directly, divided by the depth, is the analytic one (to rounding), for
    random pairs and for pairs whose hashes fall on 4 residues only. On the latter, treating
    pairs as independent Bernoulli bits understates the spread several times. Catches the
    table read by residue without the hash's last step (``table[u]`` for
    ``table[(u M + 1) mod S]``), a missing division by the depth, or dropped collisions."""
    scheme = SynthIDScheme(n_gram=2, depth=3, sampling_table_size=64, sampling_table_seed=3)
    moments = scheme.null_moments(N)
    table = scheme.table()
    rng = np.random.default_rng(1)
    pool = np.arange(5000)
    colliding = pool[(ngram_hashes(np.full((5000, 1), 7), pool) & 63) < 4][:40]
    for contexts, tokens in (
        (rng.integers(0, 500, (300, 1)), rng.integers(0, 500, 300)),
        (np.full((40, 1), 7), colliding),
    ):
        weights = rng.random(len(tokens))
        hashes = ngram_hashes(contexts, tokens)
        values = [
            weights @ table[((hashes + residue) * HASH_MULTIPLIER + 1) & 63]
            for residue in range(64)
        ]
        variance = moments.sum_variance(weights, contexts, tokens)
        assert variance == pytest.approx(np.var(values) / 3, rel=1e-9)
        assert np.mean(values) == pytest.approx(moments.mean * weights.sum(), rel=1e-12)
    independent = moments.mean * (1 - moments.mean) * (weights @ weights) / 3
    assert variance > 3 * independent


def test_analytic_null_agrees_with_the_empirical_null_over_many_keys():
    """Texts with repeated pairs (Zipf ids): the set mean under 2,000 random owners' keys
    spreads as the analytic null says (within its sampling error, ~1.6 %), around its level.
    Catches keys whose residues are not uniform or layers that are not independent."""
    tokenizer = word_tokenizer(64)
    verifier = Verifier(tokenizer, SynthIDScheme(n_gram=2, depth=8))
    token_ids = verifier.token_ids(word_texts(64, 12, 30, seed=4, zipf=2.0))
    reference = verifier.null_reference_of_token_ids(token_ids, 2000, seed=1)
    key_means = reference.scores.mean(axis=0)
    null = AnalyticNull(
        *verifier.countable_pairs(token_ids),
        len(token_ids),
        verifier.scheme.null_moments(verifier.vocab_size),
    )
    weights = 1.0 / (len(token_ids) * reference.counts)
    mean, std = null.mean_std(np.arange(len(token_ids)), weights)
    assert key_means.std() == pytest.approx(std, rel=0.06)
    assert abs(key_means.mean() - mean) < 4 * std / np.sqrt(2000)


def test_bad_input_gets_one_clear_line():
    """Catches a setting silently dropped or applied to the wrong scheme by the generic
    registry, unchecked settings, a vocabulary mismatch read as ~0.5, an analytic null given
    where it is not exact, and keys outside the ids' range."""
    with pytest.raises(
        ValueError, match="`depth` is a setting of the SynthID scheme, not of 'waterfall'"
    ):
        resolve_scheme("waterfall", depth=4)
    with pytest.raises(
        ValueError, match="`gamma` is a setting of the KGW scheme, not of 'synthid'"
    ):
        WaterDrumConfig.from_keywords({"scheme": "synthid", "gamma": 0.3})
    with pytest.raises(ValueError, match="`depth` is a setting of the synthid scheme"):
        WatermarkingConfig(depth=4)
    with pytest.raises(ValueError, match="`sampling_table_size` must be in 2..16777216"):
        SynthIDScheme(sampling_table_size=2**25)
    with pytest.raises(TypeError, match="`depth` must be an integer"):
        SynthIDScheme(depth=2.5)
    with pytest.raises(ValueError, match="does not match the tokenizer's vocab_size 1000"):
        Verifier(word_tokenizer(N), SynthIDScheme(vocab_size=999))
    with pytest.raises(TypeError, match=r"power-of-two sampling_table_size.*null_keys=K"):
        SynthIDScheme(sampling_table_size=1000).null_moments(N)
    with pytest.raises(ValueError, match="0..2\\*\\*32-1"):
        verify_texts(["w1 w2 w3 w4 w5 w6"], 2**32, word_tokenizer(N), scheme="synthid")


def test_synthid_by_name_through_every_entry_point():
    """``--scheme synthid --depth 4`` through the scoring scripts' parser, the trainer flags,
    the flat keywords, the config's dict and the metric, each reading as
    ``SynthIDScheme(depth=4)``; the metric's per-sample scores are verify_texts'. Catches an
    entry point that drops a scheme setting (depth would read 30) or keeps a hand-written
    list of scheme names, and a metric whose null level is not Synth-ID's."""
    import waterdrum_hf
    from waterdrum_hf.callbacks.arguments import WaterDrumArguments
    from waterdrum_hf.experiments.demo_config import DemoConfig
    from waterdrum_hf.experiments.reproduction.config import ReproductionConfig
    from waterdrum_hf.scripts import show
    from waterdrum_hf.scripts.parser import ScriptParser
    from waterdrum_hf.scripts.scoring_arguments import ScoringArguments

    want = SynthIDScheme(depth=4)
    [scoring] = ScriptParser([ScoringArguments]).parse_args_into_dataclasses(
        ["--scheme", "synthid", "--depth", "4"]
    )
    assert scoring.scoring_config().scheme == want
    parsed = show.make_parser().parse_args_into_dataclasses(
        ["--file", "x.jsonl", "--watermark-tokenizer", "tiny", "--id", "5", "--output-dir", "o"]
        + ["--scheme", "synthid", "--depth", "4"]
    )
    assert parsed[-1].scoring_config().scheme == want
    trainer_flags = WaterDrumArguments(waterdrum_scheme="synthid", waterdrum_depth=4)
    assert trainer_flags.scoring_config().scheme == want
    config = WaterDrumConfig.from_keywords({"scheme": "synthid", "depth": 4})
    assert config.scheme == want and WaterDrumConfig.from_dict(config.to_dict()) == config
    assert DemoConfig(scheme="synthid").scoring_config().scheme == SynthIDScheme()
    assert ReproductionConfig(schemes=("waterfall", "synthid")).schemes[-1] == "synthid"
    assert ReproductionConfig(scheme="synthid").watermark_settings() == {
        "scheme": "synthid",
        "do_sample": True,
    }
    tokenizer = word_tokenizer(N)
    texts = word_texts(N, 4, 30, seed=9)
    owners = [5, 5, 6, 6]
    result = waterdrum_hf.load_metric().compute(
        predictions=texts,
        references=owners,
        watermark_tokenizer=tokenizer,
        scheme="synthid",
        depth=4,
        return_scores=True,
    )
    scores = verify_texts(texts, owners, tokenizer, scheme=want)
    np.testing.assert_allclose(result["scores"], scores, rtol=0, atol=1e-12)
    assert result["overall_null_mean"] == pytest.approx(want.null_moments(N).mean)


def test_the_token_view_shows_synthid_terms_about_their_null_level():
    """Synth-ID's terms lie in [0, 1] about 0.5: with one layer each counted token reads 0 or 1,
    so the shared view (levels) must show tokens for and against the watermark, each half-way
    from the null level (0.5) to the scale's end, and no neutral one. Catches colouring the raw
    terms (every 0 neutral, every 1 "for"), as for schemes whose null level is 0."""
    from waterdrum_hf.report import token_view
    from waterdrum_hf.report.token_view_render import LEVEL_WORDS, token_views_html

    verifier = Verifier(word_tokenizer(N), SynthIDScheme(n_gram=2, depth=1))
    [text] = word_texts(N, 1, 200, seed=3, zipf=None)
    view = token_view(text, 99, verifier)
    assert view.centre == verifier.scheme.null_moments(N).mean
    assert view.scale == pytest.approx(max(view.centre, 1 - view.centre))
    page = token_views_html([view])
    assert page.count(f'title="{LEVEL_WORDS["for"]}"') > 50
    assert page.count(f'title="{LEVEL_WORDS["against"]}"') > 50
    assert f'title="{LEVEL_WORDS["neutral"]}"' not in page


def test_hashes_and_keys_read_ids_of_any_integer_type_and_shape():
    """uint64 contexts and tokens hash as int64 ones do (not through float64); ids given as a
    2-D array are read flat."""
    rng = np.random.default_rng(5)
    contexts, tokens = rng.integers(0, 200_000, (6, 3)), rng.integers(0, 200_000, 6)
    np.testing.assert_array_equal(
        ngram_hashes(contexts.astype(np.uint64), tokens.astype(np.uint64)),
        ngram_hashes(contexts, tokens),
    )
    np.testing.assert_array_equal(synthid_keys([[0, 7]], 4), synthid_keys([0, 7], 4))


@pytest.mark.parametrize(
    ("setting", "largest"), [("depth", 1024), ("sampling_table_seed", 2**32 - 1)]
)
def test_settings_reach_their_largest_value_and_no_further(setting, largest):
    assert getattr(SynthIDScheme(**{setting: largest}), setting) == largest
    with pytest.raises(ValueError, match=f"`{setting}` must be in"):
        SynthIDScheme(**{setting: largest + 1})


def test_the_writer_keeps_its_settings_and_refuses_bad_ones():
    """Transformers' default context history (1024) unless given; the vocabulary and history
    checked by name; other writer settings refused; the repr without ids; the cache settings
    with the ids as digests."""
    from waterdrum_hf.schemes.synthid.processor import SynthIDLogitsProcessor
    from waterdrum_hf.utils.fingerprint import key_digest

    scheme = SynthIDScheme(n_gram=3, depth=6)
    writer = scheme.logits_processor(N, [11, 22])
    assert (writer.vocab_size, writer.context_history_size) == (N, 1024)
    assert SynthIDLogitsProcessor(scheme, 2, 7).context_history_size == 1024  # 2 tokens suffice
    assert scheme.logits_processor(N, 7, context_history_size=16).context_history_size == 16
    assert repr(writer) == (
        "SynthIDLogitsProcessor(vocab_size=1000, num_ids=2, depth=6, n_gram=3, "
        "context_history_size=1024)"
    )
    assert writer.settings() == {
        **scheme.settings(),
        "vocab_size": N,
        "keys": [key_digest(11), key_digest(22)],
        "context_history_size": 1024,
    }
    with pytest.raises(ValueError, match="`vocab_size`"):
        SynthIDLogitsProcessor(scheme, 1, 7)
    with pytest.raises(ValueError, match="`context_history_size`"):
        scheme.logits_processor(N, 7, context_history_size=0)
    with pytest.raises(TypeError, match="top_k"):
        scheme.logits_processor(N, 7, top_k=3)


def test_reset_starts_afresh_with_new_ids_or_the_same_ones():
    """After ``reset(ids)`` the rows are written under the new owner, from a fresh state, as a
    new processor of that owner writes them; ``reset()`` keeps the ids and forgets the state."""
    scheme = SynthIDScheme(n_gram=2, depth=4)
    generator = torch.Generator().manual_seed(1)
    input_ids = torch.randint(0, N, (2, 4), generator=generator)
    scores = torch.randn(2, N, generator=generator)
    writer = scheme.logits_processor(N, [11, 22])
    writer(input_ids, scores)
    writer.reset(33)
    first = writer(input_ids, scores)
    torch.testing.assert_close(first, scheme.logits_processor(N, 33)(input_ids, scores))
    writer(input_ids, scores)  # a context now seen: not watermarked again ...
    writer.reset()
    torch.testing.assert_close(writer(input_ids, scores), first)  # ... until reset
