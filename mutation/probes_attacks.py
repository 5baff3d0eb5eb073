"""Probes of the text attacks' uncounted mutants (``waterdrum_hf/attacks/``): see
``probes.py``. Each returns what a caller of the attacks sees: the edited texts, the
words drawn, the exceptions raised."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probe_kit import each, use_test_helpers

_ATTACKS = "waterdrum_hf.attacks."
_EDITS = "waterdrum_hf.attacks.edits."
_PARAPHRASE = "waterdrum_hf.attacks.paraphrase."
_SOURCES = "waterdrum_hf.attacks.sources."
_WORDS = "waterdrum_hf.attacks.words."

_TEXT = " ".join(f"w{i}" for i in range(30))
_TEXTS = [_TEXT, "  lead\tand trail  ", "one", "", "(such, words: are.) " * 4]
_SOURCE = ["alpha beta gamma", "", "delta epsilon"]


def _stand_ins() -> Any:
    """The tests' tokenizer and embedding-model stand-ins (``tests/attacks/test_attacks.py``)."""
    use_test_helpers()
    import test_attacks

    return test_attacks.PieceTokenizer, test_attacks.EmbeddingModel


def parse(tmp: Path) -> Any:
    """Every refusal of parse, and what it reads."""
    from waterdrum_hf import attacks

    return each(
        lambda: attacks.parse(" deletion : 0.5 "),
        lambda: attacks.parse("deletion"),
        lambda: attacks.parse("a:b:c"),
        lambda: attacks.parse(3),
        lambda: attacks.parse("synonym:0.2"),
        lambda: attacks.parse("deletion:much"),
        lambda: attacks.parse("deletion:1.5"),
    )


def checked_strength(tmp: Path) -> Any:
    """Strengths of the wrong type or out of [0, 1], and good ones."""
    from waterdrum_hf import attacks

    return each(
        *(
            lambda strength=strength: attacks.apply([_TEXT], "deletion", strength)
            for strength in ("0.2", True, None, -0.1, 1.5, float("nan"), 0, 1)
        )
    )


def checked_source(tmp: Path) -> Any:
    """copy_paste without a source, with one of no word, of the wrong type, and a good one."""
    from waterdrum_hf import attacks

    return each(
        *(
            lambda source=source: attacks.apply(_TEXTS, "copy_paste", 0.4, 2, source=source)
            for source in (None, ["", "  "], "alpha beta", [1], _SOURCE)
        )
    )


def apply(tmp: Path) -> Any:
    """Every word attack at several strengths and seeds, and every refusal of apply."""
    from waterdrum_hf import attacks

    tokenizer = _stand_ins()[0](["alpha", "beta", "gamma", "x"])
    edited = each(
        *(
            lambda name=name, strength=strength, seed=seed: attacks.apply(
                _TEXTS, name, strength, seed, source=_SOURCE
            )
            for name in ("deletion", "substitution", "insertion", "copy_paste", "truncation")
            for strength in (0.0, 0.3, 1.0)
            for seed in (0, 7)
        ),
        lambda: attacks.apply([_TEXT, _TEXT], "substitution", 0.5, 1, tokenizer=tokenizer),
    )
    refused = each(
        lambda: attacks.apply([_TEXT], "typo", 0.2),
        lambda: attacks.apply([_TEXT], "paraphrase", 0.2),
        lambda: attacks.apply([_TEXT], "paraphrase", 0.2, model=object()),
        lambda: attacks.apply([_TEXT], "paraphrase", 0.2, tokenizer=object()),
        lambda: attacks.apply([_TEXT], "substitution", 0.2, model=object()),
        lambda: attacks.apply([_TEXT], "insertion", 0.2, model=object()),
        lambda: attacks.apply([_TEXT], "deletion", 0.2, batch_size=0),
        lambda: attacks.apply([_TEXT], "deletion", 0.2, seed=-1),
        lambda: attacks.apply(_TEXT, "deletion", 0.2),
    )
    return [edited, refused]


def chain(tmp: Path) -> Any:
    """Chains of attacks over queries of several samples (one with none)."""
    from waterdrum_hf import attacks

    samples = [[_TEXT, _TEXT], [], _TEXTS]
    return each(
        lambda: attacks.chain(samples, ["deletion:0.2", "copy_paste:0.5"], 3, source=_SOURCE),
        lambda: attacks.chain(samples, ["insertion:0.3", "truncation:0.4"]),
        lambda: attacks.chain(samples, []),
        lambda: attacks.chain(samples, ["paraphrase:0.2"]),
    )


def paraphrase_spans(tmp: Path) -> Any:
    """Paraphrases by the built-in tiny model, with its generation config's repetition
    penalty (1.3) and without one, in batches of 2."""
    from waterdrum_hf import attacks, tiny

    model, tokenizer = tiny.load(show_progress=False)
    texts = ["the cat sat on the mat today", "a dog ran far away", "one", "x y z w v"]
    outputs = []
    for penalty in (model.generation_config.repetition_penalty, None):
        model.generation_config.repetition_penalty = penalty
        outputs.append(
            attacks.apply(
                texts,
                "paraphrase",
                0.5,
                seed=1,
                model=model,
                tokenizer=tokenizer,
                batch_size=2,
                show_progress=False,
            )  # fmt: skip
        )
    return outputs


def vocabulary_words(tmp: Path) -> Any:
    """The whole words of a real byte-level BPE vocabulary, with their ids."""
    use_test_helpers()
    from tokenizer_builders import pydoc_bpe_tokenizer

    from waterdrum_hf.attacks.sources import vocabulary_words

    return vocabulary_words(pydoc_bpe_tokenizer(512))


_PIECES = ["alpha", "beta", "Alpha", "gamma", "x", "delta"]


def _neighbours_model() -> Any:
    piece_tokenizer, embedding_model = _stand_ins()
    weight = [[1.0, 0.0], [0.9, 0.1], [1.0, 0.05], [0.0, 1.0], [0.5, 0.5], [-1.0, 0.2]]
    return embedding_model(weight), piece_tokenizer(_PIECES)


def embedding_neighbours(tmp: Path) -> Any:
    """The candidates' normalised embeddings, and the refusals of a vocabulary of one word
    and of embeddings with fewer rows than the vocabulary."""
    from waterdrum_hf.attacks.sources import EmbeddingNeighbours

    piece_tokenizer, embedding_model = _stand_ins()
    model, tokenizer = _neighbours_model()
    return each(
        lambda: EmbeddingNeighbours(model, tokenizer).candidates.numpy(),
        lambda: EmbeddingNeighbours(model, piece_tokenizer(["alpha", "ALPHA", "x"])),
        lambda: EmbeddingNeighbours(model, piece_tokenizer([*_PIECES, "eta"])),
    )


def nearest(tmp: Path) -> Any:
    """The nearest neighbour of each word (case ignored; never the word itself)."""
    import numpy as np

    from waterdrum_hf.attacks.sources import EmbeddingNeighbours

    neighbours = EmbeddingNeighbours(*_neighbours_model())
    rng = np.random.default_rng(0)
    return [neighbours.draw(rng, w) for w in ("alpha", "Alpha", "beta", "gamma", "x", "delta")]


def edits(tmp: Path) -> Any:
    """copy_paste and insertion through apply, at every strength that changes the count."""
    from waterdrum_hf import attacks

    return [
        attacks.apply(_TEXTS, name, strength, seed, source=_SOURCE)
        for name in ("copy_paste", "insertion")
        for strength in (0.1, 0.5, 1.0)
        for seed in (0, 1, 2)
    ]


def words_of(tmp: Path) -> Any:
    """What the attacks read of Words.of (the words, the whitespace around and between them,
    where each ends, the text joined back) and the attacks that put a word first."""
    from waterdrum_hf import attacks
    from waterdrum_hf.attacks.words import Words

    texts = [*_TEXTS, "a b", " \n a", "a  b\tc "]
    parsed = [Words.of(text) for text in texts]
    return [
        [
            [words.strings(), words.lead, [w.space for w in words.words[1:]], words.trail]
            + [words.ends, words.text, words.join(words.words)]
            for words in parsed
        ],
        [attacks.apply(texts, name, 1.0, 3) for name in ("insertion", "substitution")],
    ]


PROBES = {
    _ATTACKS + "x_parse": parse,
    _ATTACKS + "x__checked_strength": checked_strength,
    _ATTACKS + "x__checked_source": checked_source,
    _ATTACKS + "x_apply": apply,
    _ATTACKS + "x_chain": chain,
    _PARAPHRASE + "x_paraphrase_spans": paraphrase_spans,
    _SOURCES + "x_vocabulary_words": vocabulary_words,
    _SOURCES + "xǁEmbeddingNeighboursǁ__init__": embedding_neighbours,
    _SOURCES + "xǁEmbeddingNeighboursǁ_nearest": nearest,
    _EDITS + "x_copy_paste": edits,
    _EDITS + "x_insertion": edits,
    _WORDS + "xǁWordsǁof": words_of,
}
