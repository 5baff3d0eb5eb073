"""Texts as words, the share an attack affects, and each text's own random draws.

A *word* is a maximal run of non-whitespace characters (``text.split()``). An attack edits
words and keeps the whitespace between the words it leaves alone, so an attack that affects
nothing returns the text unchanged, byte for byte.
"""

from __future__ import annotations

import hashlib
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_WORD = re.compile(r"\S+")
_AFFIXES = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)


@dataclass(frozen=True)
class Word:
    """One word of a text and the whitespace before it (ignored for a text's first word)."""

    text: str
    space: str = " "


@dataclass(frozen=True)
class Words:
    """A text as its words: ``text == lead + w0 + space1 + w1 + ... + w_last + trail``."""

    text: str
    lead: str
    words: tuple[Word, ...]
    trail: str
    ends: tuple[int, ...]
    """Where each word ends in the original text (for prefixes)."""

    @classmethod
    def of(cls, text: str) -> Words:
        matches = list(_WORD.finditer(text))
        if not matches:
            return cls(text, text, (), "", ())
        words = tuple(
            Word(m.group(), text[matches[i - 1].end() : m.start()] if i else "")
            for i, m in enumerate(matches)
        )
        ends = tuple(m.end() for m in matches)
        return cls(text, text[: matches[0].start()], words, text[matches[-1].end() :], ends)

    def __len__(self) -> int:
        return len(self.words)

    def strings(self) -> list[str]:
        return [w.text for w in self.words]

    def join(self, words: Sequence[Word]) -> str:
        """The text with ``words`` in place of its words (``""`` when none is left)."""
        if not words:
            return ""
        body = words[0].text + "".join(w.space + w.text for w in words[1:])
        return self.lead + body + self.trail


def affected(strength: float, num_words: int) -> int:
    """How many of ``num_words`` words an attack of ``strength`` affects: ``strength * n``
    rounded half up, ``floor(strength * n + 1/2)`` (0.25 of 10 words is 3, 0.24 is 2)."""
    return min(num_words, math.floor(strength * num_words + 0.5 + 1e-9))


def split_affixes(word: str) -> tuple[str, str, str]:
    """``(leading punctuation, core, trailing punctuation)`` of a word: ``"(such,"`` gives
    ``("(", "such", ",")``. Word sources replace the core and keep the punctuation."""
    match = _AFFIXES.match(word)
    assert match is not None  # the pattern matches every string
    return match.group(1), match.group(2), match.group(3)


def text_rngs(texts: Sequence[str], name: str, seed: int) -> list[np.random.Generator]:
    """One generator per text, from ``seed``, the attack's name, the text's content and how
    often the same text came before it in ``texts``: a text gets the same draws wherever it
    stands, and repeated texts (a query's identical samples) get independent ones."""
    seen: dict[str, int] = {}
    name_code = zlib.crc32(name.encode())
    rngs = []
    for text in texts:
        occurrence = seen[text] = seen.get(text, -1) + 1
        digest = np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.uint32)
        entropy = [seed, name_code, occurrence, *digest.tolist()]
        rngs.append(np.random.default_rng(np.random.SeedSequence(entropy)))
    return rngs
