"""Tokenizers built in code for tests (no download): exact-vocabulary word tokenizers and a
byte-level BPE trained on Python's own documentation text."""

from __future__ import annotations

import functools

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast


@functools.cache
def word_tokenizer(
    vocab_size: int, special_tokens: tuple[str, ...] = ("<eos>",)
) -> PreTrainedTokenizerFast:
    """Word-level tokenizer whose word ``w{i}`` is token ``i``: token ids are exactly controllable.

    Special tokens are added after the base vocabulary, so their ids are ``>= vocab_size``.
    """
    vocab = {f"w{i}": i for i in range(vocab_size)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="w0"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend)
    tok.add_special_tokens({"additional_special_tokens": list(special_tokens)})
    return tok


def word_texts(
    vocab_size: int, num_texts: int, length: int, seed: int = 0, zipf: float | None = 1.1
) -> list[str]:
    """Random texts of ``w{i}`` words with Zipf-like (real-text-like) or uniform ids."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(num_texts):
        if zipf is None:
            ids = rng.integers(0, vocab_size, size=length)
        else:
            ids = (rng.zipf(zipf, size=length) - 1) % vocab_size
        texts.append(" ".join(f"w{i}" for i in ids))
    return texts


@functools.cache
def pydoc_bpe_tokenizer(vocab_size: int = 4096) -> PreTrainedTokenizerFast:
    """Byte-level BPE trained on ``pydoc_data.topics`` (ships with CPython)."""
    from pydoc_data.topics import topics

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(list(topics.values()), trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=backend)
    tok.add_special_tokens({"eos_token": "<|eos|>"})
    return tok
