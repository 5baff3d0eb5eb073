"""The scheme seam: what a watermark provides to the writer and the reader, and Waterfall's.

Reference values come from numpy itself (``RandomState((id, prev)).permutation(N)``), the
definition Waterfall's published watermarks use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from tokenizer_builders import word_tokenizer

from waterdrum_hf import (
    KGWScheme,
    Verifier,
    WaterfallLogitsProcessor,
    WaterfallScheme,
    WatermarkScheme,
)
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.schemes import SCHEMES, PermutationScheme
from waterdrum_hf.schemes.permutation_processor import PermutationLogitsProcessor
from waterdrum_hf.schemes.waterfall.function import watermark_function

N = 97


def numpy_position(key: int, previous: int, token: int, vocab_size: int = N) -> int:
    return int(np.random.RandomState((key, previous)).permutation(vocab_size)[token])


@dataclass(frozen=True)
class FirstHalf(PermutationScheme):
    """A toy scheme: +1 for a token in the first half of its permutation, -1 otherwise."""

    name = "first-half"

    def check_vocab_size(self, vocab_size: int) -> None:
        if vocab_size < 2:
            raise ValueError("too small")

    def position_terms(self, positions: np.ndarray, vocab_size: int) -> np.ndarray:
        return np.where(positions < vocab_size // 2, 1.0, -1.0)

    def position_bias(self, vocab_size: int, *, delta: float = 1.0) -> np.ndarray:
        return delta * (np.arange(vocab_size) < vocab_size // 2)


@pytest.mark.parametrize("k_p", [1, 3, N // 2 + 2])
def test_waterfall_token_terms_are_its_function_at_numpys_positions(k_p):
    rng = np.random.default_rng(k_p)
    keys = rng.integers(0, 2**32, 30)
    contexts = rng.integers(0, N, (30, 1))
    tokens = rng.integers(0, N, 30)
    terms = WaterfallScheme(k_p=k_p).token_terms(keys, contexts, tokens, N)
    positions = [
        numpy_position(int(k), int(c[0]), int(t))
        for k, c, t in zip(keys, contexts, tokens, strict=True)
    ]
    np.testing.assert_allclose(terms, watermark_function(np.array(positions), k_p, N))


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.float64, np.int32])
def test_token_terms_take_watermark_ids_of_any_integer_valued_dtype(dtype):
    """uint64 or float-valued ids read as the same int64 keys (the bug: ``token_terms``
    without ``dtype=np.int64`` concatenates uint64 with int64 contexts into float64 seeds,
    and float ids stay float, which the permutation refuses with a TypeError)."""
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 2**31, 20)  # exact in every dtype above
    contexts = rng.integers(0, N, (20, 1))
    tokens = rng.integers(0, N, 20)
    scheme = WaterfallScheme(k_p=3)
    expected = scheme.token_terms(keys, contexts, tokens, N)
    terms = scheme.token_terms(keys.astype(dtype), contexts, tokens, N)
    assert terms.dtype == np.float64
    np.testing.assert_array_equal(terms, expected)


def test_the_watermark_function_is_float64_whatever_the_positions_dtype():
    """The docstring promises float64: float32 (or float16) positions must not give float32
    values (the bug: ``watermark_function`` without ``dtype=np.float64``)."""
    positions = np.arange(N)
    expected = watermark_function(positions, 3, N)
    assert expected.dtype == np.float64
    for dtype in (np.float32, np.float16, np.int32, np.uint16):
        values = watermark_function(positions.astype(dtype), 3, N)
        assert values.dtype == np.float64, dtype
        np.testing.assert_array_equal(values, expected)


def test_permutation_processor_adds_the_bias_at_each_tokens_permuted_position():
    bias = np.linspace(-1.0, 1.0, N)
    processor = PermutationLogitsProcessor(N, [5, 6], bias, n_gram=2)
    prompt = torch.tensor([[3, 4], [8, 9]])
    scores = torch.zeros(2, N + 3, dtype=torch.float64)  # a padded model vocabulary
    processor(prompt, scores)  # the first call fixes the prompt length: nothing added yet
    out = processor(torch.tensor([[3, 4, 11], [8, 9, 12]]), scores)
    for row, (key, previous) in enumerate([(5, 11), (6, 12)]):
        permutation = np.random.RandomState((key, previous)).permutation(N)
        np.testing.assert_allclose(out[row, :N].numpy(), bias[permutation])
        assert torch.equal(out[row, N:], scores[row, N:])


def test_waterfall_processor_is_the_permutation_processor_with_waterfalls_bias():
    key = 3_141_592
    named = WaterfallLogitsProcessor(N, key, kappa=1.5, k_p=2)
    generic = PermutationLogitsProcessor(N, key, WaterfallScheme(k_p=2).position_bias(N, kappa=1.5))
    from_scheme = WaterfallScheme(k_p=2).logits_processor(N, key, kappa=1.5)
    assert isinstance(from_scheme, WaterfallLogitsProcessor)
    for processor in (named, generic, from_scheme):
        processor(torch.tensor([[1, 2]]), torch.zeros(1, N))
    results = [
        p(torch.tensor([[1, 2, 3]]), torch.zeros(1, N)) for p in (named, generic, from_scheme)
    ]
    assert torch.equal(results[0], results[1]) and torch.equal(results[0], results[2])
    assert str(key) not in repr(named) and "kappa=1.5" in repr(named)


def test_a_new_scheme_plugs_into_the_verifier_and_the_writer():
    tokenizer = word_tokenizer(N)
    text = " ".join(f"w{i}" for i in range(1, 40))
    verifier = Verifier(tokenizer, scheme=FirstHalf())
    ids = verifier.token_ids(text)[0]
    expected = np.mean(
        [1.0 if numpy_position(9, int(p), int(t), verifier.vocab_size) < verifier.vocab_size // 2 else -1.0
         for p, t in zip(ids[:-1], ids[1:], strict=True)]
    )  # fmt: skip
    assert verifier.verify(text, 9)[0] == pytest.approx(expected)
    assert Verifier(tokenizer).verify(text, 9)[0] != pytest.approx(expected)
    processor = FirstHalf().logits_processor(verifier.vocab_size, 9, delta=2.0)
    assert isinstance(processor, PermutationLogitsProcessor)


def test_scheme_settings_are_checked():
    with pytest.raises(ValueError, match="`k_p` must be in"):
        WaterfallScheme(k_p=0)
    with pytest.raises(TypeError, match="`k_p` must be an integer"):
        WaterfallScheme(k_p="1")
    with pytest.raises(ValueError, match="`k_p` must be in 1..96"):
        Verifier(word_tokenizer(N), scheme=WaterfallScheme(k_p=500))
    with pytest.raises(ValueError, match=re.escape(f"`scheme` must be one of {sorted(SCHEMES)}")):
        Verifier(word_tokenizer(N), scheme="kirchenbauer")
    with pytest.raises(
        ValueError, match="`k_p` is a setting of the Waterfall scheme, not of 'kgw'"
    ):
        Verifier(word_tokenizer(N), scheme="kgw", k_p=2)
    with pytest.raises(TypeError, match="pass `k_p` inside the scheme"):
        Verifier(word_tokenizer(N), scheme=WaterfallScheme(), k_p=2)
    with pytest.raises(ValueError, match="`bias` must hold"):
        PermutationLogitsProcessor(N, 1, np.zeros(N - 1))
    assert issubclass(WaterfallScheme, WatermarkScheme)
    assert WaterfallScheme(k_p=2) == WaterfallScheme(k_p=2) and WaterfallScheme().settings() == {
        "scheme": "waterfall",
        "k_p": 1,
        "n_gram": 2,
        "vocab_size": None,
    }
    assert list(WaterfallScheme().settings()) == ["scheme", "k_p", "n_gram", "vocab_size"]


def test_schemes_by_name_and_every_reader_takes_one():
    from waterdrum_hf import null_reference, verify_texts, waterdrum_metrics
    from waterdrum_hf.schemes import KGWScheme, resolve_scheme

    assert resolve_scheme() == WaterfallScheme() and resolve_scheme("KGW") == KGWScheme()
    assert resolve_scheme("waterfall", k_p=3) == WaterfallScheme(k_p=3)
    assert resolve_scheme("kgw", gamma=0.25) == KGWScheme(gamma=0.25)
    tokenizer = word_tokenizer(N)
    texts = [" ".join(f"w{(7 * i + j) % N}" for j in range(30)) for i in range(6)]
    owners = [11, 11, 12, 12, 13, 13]
    kgw = Verifier(tokenizer, scheme="kgw").verify(texts, owners)
    np.testing.assert_array_equal(verify_texts(texts, owners, tokenizer, scheme="kgw"), kgw)
    assert not np.allclose(kgw, verify_texts(texts, owners, tokenizer))
    null = null_reference(texts, tokenizer, num_keys=5, scheme=KGWScheme(gamma=0.25))
    assert null.scores.shape == (6, 5)
    waterfall_result = waterdrum_metrics(
        texts,
        owners,
        tokenizer,
        config=WaterDrumConfig.from_keywords(dict(null_keys=4)),
        forget_ids=[13],
    )
    kgw_result = waterdrum_metrics(
        texts,
        owners,
        tokenizer,
        config=WaterDrumConfig.from_keywords(dict(null_keys=4, scheme="kgw")),
        forget_ids=[13],
    )
    assert set(kgw_result) == set(waterfall_result)  # the same keys, whatever the scheme
    assert kgw_result["forget"] == pytest.approx(kgw[4:].mean())


def test_a_schemes_processor_takes_the_n_gram_and_the_cache_size():
    processor = FirstHalf(n_gram=3).logits_processor(N, 9, cache_size=5, delta=2.0)
    assert (processor.n_gram, processor.cache_size) == (3, 5)
    trigram = PermutationLogitsProcessor(N, 9, FirstHalf().position_bias(N, delta=2.0), 3)
    prompt, scores = torch.tensor([[1, 2, 3]]), torch.zeros(1, N)
    for p in (processor, trigram):
        p(prompt, scores)
    step = torch.tensor([[1, 2, 3, 4]])
    assert torch.equal(processor(step, scores), trigram(step, scores))


def test_waterfall_function_numbers():
    """N = 100: max_freq 49, so k_p 1..49 are cosines, 50..98 sines of frequency k_p - 49."""
    from waterdrum_hf.schemes.waterfall.function import watermark_function_terms

    assert watermark_function_terms(49, 100) == ("cos", 49)
    function, frequency = watermark_function_terms(60, 100)
    assert (function, frequency) == ("sin", 11) and type(frequency) is int
    assert watermark_function_terms(51, 101) == ("sin", 1)  # N odd: max_freq 50
    with pytest.raises(ValueError, match=r"1\.\.98 for a vocabulary of 100 tokens \(1\.\.49 cos"):
        watermark_function_terms(99, 100)
    for bad in (1.5, True, np.float64(2.0)):
        with pytest.raises(TypeError, match="`k_p` must be an integer"):
            watermark_function_terms(bad, 100)
    for tiny in (1, 2):  # max_freq 0: no function at all, and the refusal says so
        with pytest.raises(
            ValueError, match=rf"1\.\.0 for a vocabulary of {tiny} tokens \(1\.\.0 cos"
        ):
            watermark_function_terms(1, tiny)


@pytest.mark.parametrize(
    ("scheme", "settings", "error", "message"),
    [("kgw", {"k_p": 2}, ValueError,
      "`k_p` is a setting of the Waterfall scheme, not of 'kgw': drop it, or set `gamma` instead."),
     ("waterfall", {"gamma": 0.3}, ValueError, "`gamma` is a setting of the KGW scheme"),
     ("kgw", {"gamma": 1.5}, ValueError, "`gamma` must be in (0, 1)"),
     ("kirchenbauer", {}, ValueError, "`scheme` must be one of"),
     ("synthid", {"k_p": 2}, ValueError,
      "`k_p` is a setting of the Waterfall scheme, not of 'synthid': drop it, or set `depth` or "
      "`sampling_table_size` or `sampling_table_seed` instead."),
     ("waterfall", {"depth": 4}, ValueError, "`depth` is a setting of the SynthID scheme"),
     ("waterfall", {"kappa": 4}, TypeError, "['kappa'] are not settings of any scheme"),
     (WaterfallScheme(), {"k_p": 2}, TypeError, "pass `k_p` inside the scheme")],
)  # fmt: skip
def test_resolve_scheme_refuses_another_schemes_setting(scheme, settings, error, message):
    from waterdrum_hf.schemes import resolve_scheme

    with pytest.raises(error, match=re.escape(message)):
        resolve_scheme(scheme, **settings)


def test_the_watermarking_config_reads_its_scheme_through_the_registry():
    from waterdrum_hf.schemes import KGWScheme
    from waterdrum_hf.watermarking.config import WatermarkingConfig

    assert WatermarkingConfig(k_p=2).watermark_scheme() == WaterfallScheme(k_p=2)
    config = WatermarkingConfig(scheme="kgw", gamma=0.25, delta=3.0)
    assert config.watermark_scheme() == KGWScheme(gamma=0.25)
    with pytest.raises(ValueError, match="`kappa` is a setting of the waterfall scheme"):
        WatermarkingConfig(scheme="kgw", kappa=3.0)


def test_the_waterfall_scheme_builds_the_papers_perturbation():
    """kappa 2 by default (the paper's), the scheme's k_p (a numpy integer stored as an int),
    n_gram and the processor's own options passed through."""
    scheme = WaterfallScheme(k_p=np.int64(3))
    assert type(scheme.k_p) is int and scheme.k_p == 3
    positions = np.arange(1000)
    np.testing.assert_array_equal(
        scheme.position_bias(1000), 2.0 * watermark_function(positions, 3, 1000)
    )
    default = scheme.logits_processor(1000, 7)
    assert (default.kappa, default.k_p, default.n_gram) == (2.0, 3, 2)
    wider = WaterfallScheme(k_p=3, n_gram=3).logits_processor(1000, 7, kappa=0.5, cache_size=5)
    assert (wider.kappa, wider.n_gram, wider.cache_size) == (0.5, 3, 5)


def test_a_processors_settings_name_its_kappa_and_k_p():
    """The settings that key cached watermarked data: kappa and k_p under their own names."""
    settings = WaterfallLogitsProcessor(1000, 7, kappa=1.5, k_p=4).settings()
    assert (settings["kappa"], settings["k_p"]) == (1.5, 4)
    assert "kappa=1.5, k_p=4" in repr(WaterfallLogitsProcessor(1000, 7, kappa=1.5, k_p=4))


def test_a_scheme_comes_back_from_its_settings_and_nothing_else():
    from waterdrum_hf.schemes import scheme_from_settings

    scheme = KGWScheme(gamma=0.25, vocab_size=60)
    assert scheme_from_settings(scheme.settings()) == scheme
    for bad in (["scheme"], {"gamma": 0.25}):  # not a dict; no name
        with pytest.raises(ValueError, match=r"^A scheme's settings must be a dict with its name"):
            scheme_from_settings(bad)
    with pytest.raises(ValueError, match=r"^\['k_p'\] are not settings of the 'kgw' scheme"):
        scheme_from_settings({"scheme": "kgw", "k_p": 2})


def test_a_settings_help_is_its_own_schemes_field_help():
    """``setting_help`` reads the named setting's own field (not the first field with help)."""
    from waterdrum_hf.schemes.registry import setting_help

    assert setting_help("gamma") == "KGW's green share of the vocabulary (default 0.5)."
    assert setting_help("depth") == "Synth-ID's tournament layers, keys per owner (default 30)."
    with pytest.raises(KeyError):
        setting_help("n_gram")  # a common setting: no scheme's own help
