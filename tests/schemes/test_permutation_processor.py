"""PermutationLogitsProcessor: the permutation cache, the identity context, settings and repr."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from waterdrum_hf.schemes import permutation_processor as processor_module
from waterdrum_hf.schemes.permutation import full_permutations
from waterdrum_hf.schemes.permutation_processor import PermutationLogitsProcessor
from waterdrum_hf.utils.fingerprint import key_digest

VOCAB = 64


def bias() -> np.ndarray:
    return np.random.default_rng(0).normal(size=VOCAB)


@pytest.fixture
def computed(monkeypatch) -> list[tuple[int, ...]]:
    """The seeds whose permutations the processor computes (cache misses), in order."""
    seeds = []

    def counting(missing: np.ndarray, vocab_size: int) -> np.ndarray:
        seeds.extend(tuple(int(v) for v in row) for row in missing)
        return full_permutations(missing, vocab_size)

    monkeypatch.setattr(processor_module, "full_permutations", counting)
    return seeds


def step(processor: PermutationLogitsProcessor, last_tokens: list[int]) -> torch.Tensor:
    """One generation step of one row per token, the prompt being one token long."""
    input_ids = torch.tensor([[0, t] for t in last_tokens])
    return processor(input_ids, torch.zeros(len(last_tokens), VOCAB))


def test_permutations_are_computed_once_and_evicted_least_recently_used(computed):
    processor = PermutationLogitsProcessor(VOCAB, 7, bias(), cache_size=2)
    processor.reset(prompt_length=1)
    first = step(processor, [1, 2, 1])
    assert computed == [(7, 1), (7, 2)]  # each distinct seed once
    assert torch.equal(step(processor, [2, 1]), first[[1, 0]])
    assert computed == [(7, 1), (7, 2)]  # both from the cache
    step(processor, [1])  # (7, 1) is now the most recently used
    step(processor, [3])  # a third seed evicts the least recently used, (7, 2)
    assert computed[2:] == [(7, 3)]
    step(processor, [1])
    assert computed[3:] == []
    step(processor, [2])
    assert computed[3:] == [(7, 2)]
    assert all(p.dtype == torch.int32 for p in processor._cache.values())  # 4 bytes per entry


def test_a_context_outside_the_vocabulary_uses_the_identity_permutation(computed):
    """Token ids from ``vocab_size`` up (added or special tokens) add ``bias`` in order."""
    values = bias()
    processor = PermutationLogitsProcessor(VOCAB, 7, values)
    processor.reset(prompt_length=1)
    out = step(processor, [VOCAB, VOCAB + 5, VOCAB - 1])
    expected = torch.from_numpy(values).float()
    assert torch.equal(out[0], expected) and torch.equal(out[1], expected)
    assert computed == [(7, VOCAB - 1)]
    permutation = full_permutations(np.array([[7, VOCAB - 1]]), VOCAB)[0]
    assert torch.equal(out[2], expected[torch.from_numpy(permutation)])
    # A seed after an identity row is still found in the cache, not computed again.
    assert torch.equal(step(processor, [VOCAB, VOCAB - 1])[1], out[2])
    assert computed == [(7, VOCAB - 1)]


def test_the_bias_is_added_in_the_scores_dtype():
    """float32 scores get the bias rounded to float32 first, as ``generate`` would add it."""
    values = bias()
    processor = PermutationLogitsProcessor(VOCAB, 7, values)
    processor.reset(prompt_length=1)
    scores = torch.randn(1, VOCAB, generator=torch.Generator().manual_seed(1)) * 1e3
    out = processor(torch.tensor([[0, 5]]), scores)
    permutation = torch.from_numpy(full_permutations(np.array([[7, 5]]), VOCAB)[0])
    expected = scores + torch.from_numpy(values).float()[permutation]
    assert out.dtype == torch.float32 and torch.equal(out, expected)


def test_settings_hold_digests_of_the_keys_and_of_the_bias():
    values = bias()
    settings = PermutationLogitsProcessor(VOCAB, [7, 9], values, n_gram=3).settings()
    assert settings == {
        "vocab_size": VOCAB,
        "keys": [key_digest(7), key_digest(9)],
        "bias": settings["bias"],
        "n_gram": 3,
    }
    other = PermutationLogitsProcessor(VOCAB, [7, 9], values * 2, n_gram=3).settings()
    assert len(settings["bias"]) == 64 and other["bias"] != settings["bias"]


def test_repr_names_the_class_and_settings_but_no_key():
    processor = PermutationLogitsProcessor(VOCAB, [4_000_000_007], bias())
    text = repr(processor)
    assert text.startswith(f"PermutationLogitsProcessor(vocab_size={VOCAB}, num_ids=1, bias=")
    assert text.endswith(", n_gram=2)") and "4000000007" not in text


def test_bad_watermark_ids_are_named():
    with pytest.raises(ValueError, match=r"`watermark_ids\[1\]`"):
        PermutationLogitsProcessor(VOCAB, [1, 2**32], bias())


def test_permutations_and_bias_follow_the_scores_device():
    """On the ``meta`` device (shapes and devices only, no data) a CPU run shows what a GPU
    would: the permutations (computed, cached, and the identity of an out-of-vocabulary
    context) and the perturbed scores must be on the scores' device, not the CPU's."""
    processor = PermutationLogitsProcessor(VOCAB, 7, bias())
    processor.reset(prompt_length=1)
    scores = torch.zeros(2, VOCAB + 2, device="meta")
    perturbed = processor(torch.tensor([[0, 3], [0, VOCAB + 1]]), scores)
    assert perturbed.device.type == "meta" and perturbed.shape == scores.shape
    assert [p.device.type for p in processor._cache.values()] == ["meta"]
    meta = torch.device("meta")
    for context in ([3], [VOCAB + 1]):  # cached, then the identity alone
        rows = processor._permutations(np.array([7]), np.array([context]), meta)
        assert rows.device == meta and rows.shape == (1, VOCAB) and rows.dtype == torch.int32


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_bias_is_added_on_the_gpu():
    """The processor on CUDA scores: the same perturbation as on the CPU, on the GPU."""
    processor = PermutationLogitsProcessor(VOCAB, 7, bias())
    input_ids = torch.tensor([[0, 3], [0, 5], [0, VOCAB + 1]])
    scores = torch.randn(3, VOCAB + 2, generator=torch.Generator().manual_seed(0))
    processor.reset(prompt_length=1)
    on_cpu = processor(input_ids, scores)
    assert not torch.equal(on_cpu, scores)  # perturbed
    processor.reset(prompt_length=1)
    on_gpu = processor(input_ids.cuda(), scores.cuda())
    assert on_gpu.device.type == "cuda"
    torch.testing.assert_close(on_gpu.cpu(), on_cpu)


@pytest.mark.parametrize(("vocab_size", "cached"), [(128_000, 524), (2**25 + 1, 1)])
def test_the_default_cache_holds_what_fits_in_256_mib(vocab_size, cached):
    """Permutations are cached as int32: 256 MiB // (4 N) of them, at least one."""
    processor = PermutationLogitsProcessor(vocab_size, 7, np.zeros(vocab_size))
    assert processor.cache_size == cached
