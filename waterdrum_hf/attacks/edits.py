"""The word-level attacks: what each does to one text, given how many words it affects.

Each function takes the text as :class:`~waterdrum_hf.attacks.words.Words`, ``k`` (the number
of words affected, :func:`~waterdrum_hf.attacks.words.affected`, at least 1: ``k = 0`` is the
text itself and never gets here) and the text's own random generator. Positions are drawn one after another from the same generator, so the words a
weaker attack touches are among those a stronger one touches (deletion, substitution,
insertion): curves over strength are not blurred by fresh draws at every step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from waterdrum_hf.attacks.sources import WordSource
from waterdrum_hf.attacks.words import Word, Words, split_affixes


def deletion(words: Words, k: int, rng: np.random.Generator) -> str:
    """``k`` words removed, at positions drawn uniformly without replacement. The whitespace
    before the next kept word stays; with every word removed the text becomes ``""``."""
    removed = set(rng.permutation(len(words))[:k].tolist())
    return words.join([w for i, w in enumerate(words.words) if i not in removed])


def substitution(words: Words, k: int, rng: np.random.Generator, source: WordSource) -> str:
    """``k`` words, at positions drawn uniformly without replacement, each replaced by a word
    from ``source`` (punctuation around it kept): as many words as before, ``k`` of them
    different."""
    kept = list(words.words)
    for i in rng.permutation(len(words))[:k].tolist():
        kept[i] = Word(source.replace(rng, kept[i].text), kept[i].space)
    return words.join(kept)


def insertion(words: Words, k: int, rng: np.random.Generator, source: WordSource) -> str:
    """``k`` words inserted, one after another, each into a uniformly drawn gap (before the
    first word, between two, or after the last), separated by a space. Each comes from
    ``source`` for the word before the gap (after it, at the start)."""
    current = list(words.words)
    for _ in range(k):
        gap = int(rng.integers(len(current) + 1))
        neighbour = current[gap - 1] if gap else current[0]
        new = source.draw(rng, split_affixes(neighbour.text)[1])
        if gap == 0:
            current[0] = Word(current[0].text, " ")
        current.insert(gap, Word(new, " "))
    return words.join(current)


def truncation(words: Words, k: int) -> str:
    """The last ``k`` words cut: the text up to the end of its ``n - k``-th word, a prefix of
    the text (``""`` when every word is cut)."""
    kept = len(words) - k
    return words.text[: words.ends[kept - 1]] if kept else ""


def copy_paste(words: Words, k: int, rng: np.random.Generator, source: Sequence[Words]) -> str:
    """A run of ``k`` consecutive words, starting at a uniformly drawn word, replaced by ``k``
    words of unwatermarked text: the first ``k`` words of a uniformly drawn ``source`` text,
    continued by the next source texts (cyclically) when it is shorter; every source text
    holds a word. The whitespace between the text's words stays, so the word count does too."""
    start = int(rng.integers(len(words) - k + 1))
    index = int(rng.integers(len(source)))
    pasted: list[str] = []
    while len(pasted) < k:
        pasted += source[index % len(source)].strings()
        index += 1
    replaced = [
        Word(new, old.space)
        for new, old in zip(pasted[:k], words.words[start : start + k], strict=True)
    ]
    return words.join([*words.words[:start], *replaced, *words.words[start + k :]])
