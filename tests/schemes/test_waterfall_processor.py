"""WaterfallLogitsProcessor: equal to waterfall's perturbation, keys per row, a bounded cache."""

from __future__ import annotations

import math

import pytest
import torch

from waterdrum_hf import (
    WaterfallLogitsProcessor,
)


@pytest.mark.parametrize("k_p", [1, 3, 700])
def test_processor_matches_waterfall(k_p):
    from waterfall.WatermarkerBase import PerturbationProcessor
    from waterfall.WatermarkingFnFourier import WatermarkingFnFourier

    vocab, key = 1000, 4_000_000_007
    reference = PerturbationProcessor(N=vocab, id=key)
    reference.set_phi(WatermarkingFnFourier(id=key, k_p=k_p, N=vocab, kappa=2.0).phi)
    reference.reset(2)
    ours = WaterfallLogitsProcessor(vocab, key, kappa=2.0, k_p=k_p)
    input_ids = torch.randint(0, vocab + 8, (6, 9), generator=torch.Generator().manual_seed(k_p))
    input_ids[0, -1] = vocab + 3  # an added token as context: identity permutation
    scores = torch.randn(6, vocab + 8, dtype=torch.float64)
    # The first call fixes the prompt length; nothing is added before one token is generated.
    assert torch.equal(ours(input_ids[:, :8], scores.clone()), scores)
    reference(input_ids[:, :8], scores.clone())
    torch.testing.assert_close(
        ours(input_ids, scores.clone()), reference(input_ids, scores.clone())
    )


def test_processor_keys_per_row_and_bounded_cache():
    vocab = 500
    input_ids = torch.randint(0, vocab, (6, 5), generator=torch.Generator().manual_seed(0))
    scores = torch.zeros(6, vocab)
    batched = WaterfallLogitsProcessor(vocab, [5, 9, 13], cache_size=2)
    batched.reset(prompt_length=3)
    out = batched(input_ids, scores)
    assert len(batched._cache) == 2
    for row, key in enumerate([5, 5, 9, 9, 13, 13]):  # two beams per input row
        single = WaterfallLogitsProcessor(vocab, key)
        single.reset(prompt_length=3)
        assert torch.equal(out[row], single(input_ids[row : row + 1], scores[row : row + 1])[0])
    with pytest.raises(ValueError, match="cannot be split"):
        WaterfallLogitsProcessor(vocab, [1, 2, 3, 4])(input_ids, scores)
    with pytest.raises(ValueError, match="0..2\\*\\*32-1"):
        WaterfallLogitsProcessor(vocab, [1, 2**32])


def test_processor_defaults_are_the_papers_and_bad_settings_are_refused():
    """kappa 2 and k_p 1 by default (the paper's); kappa must be finite and >= 0; the
    vocabulary holds at least two tokens, the refusal naming `vocab_size`."""
    import numpy as np

    from waterdrum_hf.schemes.permutation_processor import PermutationLogitsProcessor

    default = WaterfallLogitsProcessor(1000, 7)
    assert (default.kappa, default.k_p) == (2.0, 1)
    for kappa in (-1.0, -0.5, math.inf, math.nan):
        with pytest.raises(ValueError, match="`kappa` must be a finite number >= 0"):
            WaterfallLogitsProcessor(1000, 7, kappa=kappa)
    for vocab in (0, 1):
        with pytest.raises(ValueError, match=rf"^`vocab_size` must be >= 2, got {vocab}\.$"):
            WaterfallLogitsProcessor(vocab, 7)
        with pytest.raises(ValueError, match=rf"^`vocab_size` must be >= 2, got {vocab}\.$"):
            PermutationLogitsProcessor(vocab, 7, np.zeros(max(vocab, 1)))
    assert PermutationLogitsProcessor(2, 7, np.zeros(2)).vocab_size == 2  # the smallest
    with pytest.raises(ValueError, match=r"^`n_gram` must be >= 2, got 1\.$"):
        PermutationLogitsProcessor(4, 7, np.zeros(4), n_gram=1)
    with pytest.raises(ValueError, match=r"^`cache_size` must be >= 1, got 0\.$"):
        PermutationLogitsProcessor(4, 7, np.zeros(4), cache_size=0)
    # two tokens pass the vocabulary's check; no function fits them (k_p's refusal)
    with pytest.raises(ValueError, match="`k_p` must be in 1..0 for a vocabulary of 2 tokens"):
        WaterfallLogitsProcessor(2, 7)


def test_a_bias_given_in_float32_keys_the_same_settings_as_in_float64():
    """The bias is held as float64: a float32 array of the same values gives the same
    settings (the digest that keys cached watermarked data) and the same perturbation."""
    import numpy as np

    from waterdrum_hf.schemes.permutation_processor import PermutationLogitsProcessor

    values = np.array([0.5, -0.25, 1.5, 0.0])
    wide = PermutationLogitsProcessor(4, 7, values)
    narrow = PermutationLogitsProcessor(4, 7, values.astype(np.float32))
    assert narrow.settings() == wide.settings()
    outputs = []
    for processor in (wide, narrow):
        processor(torch.tensor([[1, 2]]), torch.zeros(1, 4, dtype=torch.float64))
        outputs.append(processor(torch.tensor([[1, 2, 3]]), torch.zeros(1, 4, dtype=torch.float64)))
    assert torch.equal(outputs[0], outputs[1]) and outputs[0].dtype == torch.float64
