"""Text attacks: named, seeded edits of generated text, applied before verification.

How far does a WaterDrum value hold when the text it reads was edited, by a model owner's
post-processing or by plain noise? Watermark toolkits test detection under such edits; this
module applies them to the completions a metric reads::

    from waterdrum_hf import attacks

    edited = attacks.apply(completions, "deletion", 0.2, seed=0)  # 20 % of the words removed
    attacks.names()  # ('deletion', 'substitution', 'insertion', 'copy_paste', 'truncation', 'paraphrase')

``strength`` is the share of each text's words affected, in [0, 1]: ``k = floor(strength * n +
1/2)`` of its ``n`` words (whitespace-separated; half rounds up). Strength 0 returns every text
unchanged. A text without a word is returned as it is.

* ``deletion``: ``k`` words removed.
* ``substitution``: ``k`` words replaced by other words (the word count stays).
* ``insertion``: ``k`` words inserted.
* ``copy_paste``: a run of ``k`` consecutive words replaced by as many words of unwatermarked
  text, taken from ``source`` (a list of unwatermarked texts: the original passages, or a base
  model's completions). It has no default: without ``source`` it raises, since pasting other
  *watermarked* outputs would not dilute anything.
* ``truncation``: the last ``k`` words cut (the result is a prefix of the text).
* ``paraphrase``: a run of ``k`` consecutive words rewritten by a paraphrasing ``model`` (with
  its ``tokenizer``), unwatermarked (:mod:`waterdrum_hf.attacks.paraphrase`); needs both.

Substituted and inserted words come from (:mod:`waterdrum_hf.attacks.sources`): with neither
``tokenizer`` nor ``model``, the words of ``texts`` themselves; with a ``tokenizer``, whole words
of its vocabulary; with a ``model`` and its ``tokenizer``, "synonyms": the vocabulary word
nearest to the word in the model's input embeddings (an inserted word is the neighbour of the
word before it). Arguments an attack does not use are ignored, so one call site can run
every attack.

Reproducible: the same texts, name, strength and seed give the same output. Every text draws
from its own generator (seeded by ``seed``, the attack's name, the text and how often the same
text came before it), so two texts' edits are independent, and a text is edited the same way
whatever else is in the list (except for words drawn from the texts themselves: the list is
then what they are drawn from; and paraphrase, sampled per batch). The positions a weaker deletion, substitution or insertion
edits are among those a stronger one edits.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from waterdrum_hf.attacks import edits
from waterdrum_hf.attacks.sources import (
    EmbeddingNeighbours,
    TextWords,
    VocabularyWords,
    WordSource,
)
from waterdrum_hf.attacks.words import Words, affected, text_rngs
from waterdrum_hf.utils.validation import check_positive_int, check_string_list

__all__ = ["affected", "apply", "chain", "names", "parse", "spec", "word_source"]

_NAMES = ("deletion", "substitution", "insertion", "copy_paste", "truncation", "paraphrase")


def names() -> tuple[str, ...]:
    """Every attack's name, as :func:`apply` takes it."""
    return _NAMES


def parse(spec: str) -> tuple[str, float]:
    """``"NAME:STRENGTH"`` (e.g. ``"deletion:0.2"``, as a command line writes an attack) as
    ``(name, strength)``, both checked."""
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ValueError(
            f"an attack is written NAME:STRENGTH, e.g. deletion:0.2, got {spec!r}; the names "
            f"are {', '.join(_NAMES)}."
        )
    name, strength = (part.strip() for part in spec.split(":"))
    if name not in _NAMES:
        raise ValueError(f"unknown attack {name!r} in {spec!r}: the names are {', '.join(_NAMES)}.")
    try:
        value = float(strength)
    except ValueError:
        raise ValueError(
            f"the strength in {spec!r} must be a number in [0, 1], e.g. {name}:0.2."
        ) from None
    return name, _checked_strength(value)


def spec(name: str, strength: float) -> str:
    """The ``"NAME:STRENGTH"`` form of an attack that :func:`parse` reads back (``"deletion:0.2"``)."""
    return f"{name}:{float(strength)!r}"


def chain(
    samples: Sequence[Sequence[str]],
    specs: Sequence[str],
    seed: int = 0,
    *,
    tokenizer: Any = None,
    paraphraser: tuple[Any, Any] | None = None,
    source: Sequence[str] | None = None,
    show_progress: bool | None = None,
) -> list[list[str]]:
    """Each query's samples after every attack of ``specs`` (``"NAME:STRENGTH"``), in order,
    each attack editing all samples in one :func:`apply` with ``seed``: what a command
    verifies instead of the samples.

    Substitution and insertion draw whole words of ``tokenizer``'s vocabulary (of the samples
    themselves without one); paraphrase rewrites with ``paraphraser``, a ``(model,
    tokenizer)`` pair; copy_paste pastes from ``source`` (unwatermarked texts).
    """
    inputs: dict[str, dict[str, Any]] = {
        "substitution": {"tokenizer": tokenizer},
        "insertion": {"tokenizer": tokenizer},
        "copy_paste": {"source": source},
        "paraphrase": dict(zip(("model", "tokenizer"), paraphraser or (None, None), strict=True)),
    }
    sizes = [len(query) for query in samples]
    flat = [text for query in samples for text in query]
    for name, strength in map(parse, specs):
        flat = apply(
            flat, name, strength, seed, show_progress=show_progress, **inputs.get(name, {})
        )
    bounds = np.cumsum([0, *sizes]).tolist()
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def apply(
    texts: Sequence[str],
    name: str,
    strength: float,
    seed: int = 0,
    *,
    tokenizer: Any = None,
    model: Any = None,
    source: Sequence[str] | None = None,
    batch_size: int = 16,
    show_progress: bool | None = None,
) -> list[str]:
    """``texts`` after the attack ``name`` at ``strength`` (see the module's docstring).

    Args:
        texts: the texts to edit (e.g. completions, before verification).
        name: one of :func:`names`.
        strength: share of each text's words affected, in [0, 1].
        seed: seed of the random draws (an int >= 0).
        tokenizer: substitution and insertion draw whole words of its vocabulary; the
            paraphraser's tokenizer.
        model: with ``tokenizer``: substitution and insertion draw embedding neighbours; the
            paraphrasing model.
        source: unwatermarked texts that ``copy_paste`` pastes from (required by it).
        batch_size: texts paraphrased together.
        show_progress: progress bar of paraphrasing (``None``: on a terminal).
    """
    texts = check_string_list(texts, "texts")
    strength = _checked_strength(strength)
    seed = check_positive_int(seed, "seed", minimum=0)
    if name not in _NAMES:
        raise ValueError(f"unknown attack {name!r}: `name` must be one of {', '.join(_NAMES)}.")
    if name == "paraphrase" and (model is None or tokenizer is None):
        raise ValueError(
            "the paraphrase attack needs a paraphrasing `model` and its `tokenizer` "
            "(e.g. `model, tokenizer = waterdrum_hf.tiny.load()`)."
        )
    pasted = _checked_source(source) if name == "copy_paste" else None
    if model is not None and tokenizer is None and name in ("substitution", "insertion"):
        raise ValueError(
            "embedding-neighbour words need the model's `tokenizer` beside `model` (it maps "
            "words to the embedding rows); pass it, or drop `model` for vocabulary words."
        )
    check_positive_int(batch_size, "batch_size")
    parsed = [Words.of(text) for text in texts]
    counts = [affected(strength, len(words)) for words in parsed]
    if not any(counts):
        return list(texts)
    rngs = text_rngs(texts, name, seed)
    if name == "paraphrase":
        from waterdrum_hf.attacks.paraphrase import paraphrase_spans

        return paraphrase_spans(
            parsed, counts, rngs, model=model, tokenizer=tokenizer, seed=seed,
            batch_size=batch_size, show_progress=show_progress,
        )  # fmt: skip
    edit = _word_edit(name, texts, tokenizer, model, pasted)
    return [
        edit(words, k, rng) if k else words.text
        for words, k, rng in zip(parsed, counts, rngs, strict=True)
    ]


def _word_edit(
    name: str, texts: list[str], tokenizer: Any, model: Any, pasted: list[Words] | None
) -> Callable[[Words, int, np.random.Generator], str]:
    """The word-level attack ``name`` as a function of (words, k, generator)."""
    if name == "deletion":
        return edits.deletion
    if name == "truncation":
        return lambda words, k, rng: edits.truncation(words, k)
    if name == "copy_paste":
        assert pasted is not None  # the caller reads the source for copy_paste
        return lambda words, k, rng: edits.copy_paste(words, k, rng, pasted)
    words = word_source(texts, tokenizer=tokenizer, model=model)
    edit = edits.substitution if name == "substitution" else edits.insertion
    return lambda text, k, rng: edit(text, k, rng, words)


def word_source(texts: Sequence[str], *, tokenizer: Any = None, model: Any = None) -> WordSource:
    """Where substitution and insertion draw words: embedding neighbours with a ``model`` and
    its ``tokenizer``, the tokenizer's vocabulary with a ``tokenizer`` alone, else ``texts``."""
    if model is not None:
        return EmbeddingNeighbours(model, tokenizer)
    if tokenizer is not None:
        return VocabularyWords(tokenizer)
    return TextWords(texts)


def _checked_strength(strength: object) -> float:
    if isinstance(strength, bool) or not isinstance(strength, numbers.Real):
        raise TypeError(f"`strength` must be a number in [0, 1], got {type(strength).__name__}.")
    if not (math.isfinite(strength) and 0 <= float(strength) <= 1):
        raise ValueError(
            f"`strength` must be in [0, 1] (the share of each text's words affected), got "
            f"{strength!r}."
        )
    return float(strength)


def _checked_source(source: Sequence[str] | None) -> list[Words]:
    """The unwatermarked texts of copy_paste, as words (texts without a word left out)."""
    if source is None:
        raise ValueError(
            "copy_paste needs `source`: a list of unwatermarked texts to paste from (e.g. the "
            "original, unwatermarked passages or a base model's completions). There is no "
            "default: the other texts given are watermarked, so pasting them dilutes nothing."
        )
    parsed = [Words.of(text) for text in check_string_list(source, "source")]
    parsed = [words for words in parsed if len(words)]
    if not parsed:
        raise ValueError("`source` holds no word: pass unwatermarked texts with words in them.")
    return parsed
