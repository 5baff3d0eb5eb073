"""Where substituted and inserted words come from.

* :class:`TextWords` (no tokenizer, no model): the words of the given texts themselves.
* :class:`VocabularyWords` (a tokenizer): whole words of the tokenizer's base vocabulary.
* :class:`EmbeddingNeighbours` (a model and its tokenizer): a "synonym": the vocabulary word
  whose input embedding is nearest (cosine) to the word's own.

Every source works on a word's core (:func:`~waterdrum_hf.attacks.words.split_affixes`), so
punctuation around a word stays, and never returns the word it is asked about.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from waterdrum_hf.attacks.words import split_affixes


class WordSource(ABC):
    """Draws a word to put in place of (or next to) a given word."""

    @abstractmethod
    def draw(self, rng: np.random.Generator, word: str) -> str:
        """A word other than ``word``'s core, for ``word``'s place."""

    def replace(self, rng: np.random.Generator, word: str) -> str:
        """``word`` with its core replaced by :meth:`draw` (its punctuation kept)."""
        before, core, after = split_affixes(word)
        return before + self.draw(rng, core) + after


class _PoolSource(WordSource):
    """Uniform draws from a fixed list of words, redrawn while equal to the word asked about."""

    def __init__(self, pool: Sequence[str], what: str) -> None:
        self.pool = list(pool)
        if len(set(self.pool)) < 2:
            raise ValueError(
                f"substitution and insertion need at least two distinct words to draw from, "
                f"and {what} has {len(set(self.pool))}: pass longer texts, or a tokenizer."
            )

    def draw(self, rng: np.random.Generator, word: str) -> str:
        while True:
            candidate = self.pool[int(rng.integers(len(self.pool)))]
            if candidate.lower() != word.lower():
                return candidate


class TextWords(_PoolSource):
    """The cores of the words of ``texts`` (as often as they occur there)."""

    def __init__(self, texts: Iterable[str]) -> None:
        pool = [split_affixes(w)[1] for text in texts for w in text.split()]
        super().__init__([w for w in pool if w], "the given texts")


def vocabulary_words(tokenizer: Any) -> tuple[list[str], list[int]]:
    """The base vocabulary's whole words: each token id below ``tokenizer.vocab_size`` whose
    decoded text, stripped, is alphabetic with at least two letters, and that text."""
    ids = range(int(tokenizer.vocab_size))
    pieces = tokenizer.batch_decode([[i] for i in ids])
    kept = [(p.strip(), i) for p, i in zip(pieces, ids, strict=True) if _is_word(p.strip())]
    return [w for w, _ in kept], [i for _, i in kept]


def _is_word(text: str) -> bool:
    return len(text) >= 2 and text.isalpha()


class VocabularyWords(_PoolSource):
    """Whole words of the tokenizer's vocabulary (:func:`vocabulary_words`), uniformly."""

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(vocabulary_words(tokenizer)[0], "the tokenizer's vocabulary")


class EmbeddingNeighbours(WordSource):
    """The nearest vocabulary word by the cosine of input embeddings (deterministic).

    A word's vector is the mean input embedding of the tokens of ``" " + word`` (its form
    inside a sentence); a candidate's is its token's embedding. Candidates are
    :func:`vocabulary_words` other than the word itself (case ignored); ties go to the lower
    token id.
    """

    def __init__(self, model: Any, tokenizer: Any) -> None:
        import torch

        self.tokenizer = tokenizer
        self.words, ids = vocabulary_words(tokenizer)
        if len(set(w.lower() for w in self.words)) < 2:
            raise ValueError("the tokenizer's vocabulary has fewer than two whole words.")
        with torch.no_grad():
            weight = model.get_input_embeddings().weight.detach().float().cpu()
        if weight.shape[0] < int(tokenizer.vocab_size):
            raise ValueError(
                f"the model's input embeddings have {weight.shape[0]} rows for a tokenizer of "
                f"{tokenizer.vocab_size} tokens: pass the model's own tokenizer."
            )
        self.weight = weight
        self.candidates = torch.nn.functional.normalize(weight[ids], dim=1)
        self._positions: dict[str, list[int]] = {}  # candidates by lower-cased word
        for position, candidate in enumerate(self.words):
            self._positions.setdefault(candidate.lower(), []).append(position)
        self._cache: dict[str, str] = {}

    def vector(self, word: str) -> Any:
        """The word's vector: the mean input embedding of the tokens of ``" " + word``."""
        ids = self.tokenizer(" " + word, add_special_tokens=False)["input_ids"]
        return self.weight[ids].mean(dim=0)

    def draw(self, rng: np.random.Generator, word: str) -> str:
        if word not in self._cache:
            self._cache[word] = self._nearest(word)
        return self._cache[word]

    def _nearest(self, word: str) -> str:
        import torch

        query = torch.nn.functional.normalize(self.vector(word), dim=0)
        similarity = self.candidates @ query
        similarity[self._positions.get(word.lower(), [])] = -torch.inf
        return self.words[int(torch.argmax(similarity))]
