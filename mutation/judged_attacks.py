"""Surviving mutants of ``waterdrum_hf/attacks/`` judged equivalent (read by
``judged.py``): each entry is ``(function, before, after, reason)``, as
``judged.Judged`` takes them."""

from __future__ import annotations

_ATTACKS = "waterdrum_hf.attacks."  # attacks/__init__.py, as mutmut names its functions
_PARAPHRASE = "waterdrum_hf.attacks.paraphrase."
_PENALTY = (
    "with repetition_penalty None, transformers' generate takes the value of the model's own "
    "generation_config, which is where the attack reads it (float(penalty or 1.0)); unset "
    "there, None and 1.0 both mean no penalty (the tests at 1.3 and at None pass either way)"
)
_EDITS = "waterdrum_hf.attacks.edits."
_WORDS = "waterdrum_hf.attacks.words."
_SOURCES = "waterdrum_hf.attacks.sources."
_DEFAULT_SPACE = 'Word\'s default space is " ", the value the line passes'
_K_AND_K = (
    "the loop leaves at least k pasted words, and start <= n - k leaves k words in the "
    "slice, so both sides hold exactly k and the zip has nothing to refuse"
)
_ONE_PIECE_PER_ID = (
    "batch_decode decodes each of the len(ids) one-token sequences it is given into one "
    "string, so pieces and ids always have the same length and the zip has nothing to refuse"
)
_ONE_ROW_PER_PROMPT = (
    "candidates() returns one row per prompt, so rewritten has exactly one entry per run of "
    "todo and the zip never has unequal lengths to refuse"
)

_ONE_PER_TEXT = (
    "parsed and counts are built one per text of texts, and text_rngs(texts, ...) appends one "
    "generator per text, so the three lists always have the same length and the zip has "
    "nothing to refuse"
)
_BOUNDS = (
    "bounds = cumsum([0, *sizes]) has len(sizes) + 1 entries, so bounds[:-1] and bounds[1:] "
    "both have len(sizes) and the zip has nothing to refuse"
)

JUDGED_ENTRIES: tuple[tuple[str, str | None, str | None, str], ...] = (
    *(
        (
            _ATTACKS + "x_apply",
            "for words, k, rng in zip(parsed, counts, rngs, strict=True)",
            f"for words, k, rng in zip(parsed, counts, rngs, {strict})",
            _ONE_PER_TEXT,
        )
        for strict in ("strict=None", "", "strict=False")
    ),
    *(
        (
            _ATTACKS + "x_chain",
            "return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]",
            f"return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], {strict})]",
            _BOUNDS,
        )
        for strict in ("strict=None", "", "strict=False")
    ),
    (
        _PARAPHRASE + "x_paraphrase_spans",
        "repetition_penalty=float(penalty or 1.0),",
        "repetition_penalty=None,",
        _PENALTY,
    ),
    (_PARAPHRASE + "x_paraphrase_spans", "repetition_penalty=float(penalty or 1.0),", "", _PENALTY),
    (
        _PARAPHRASE + "x_paraphrase_spans",
        "candidates = paraphraser.candidates(prompts, batch, [0] * len(batch))",
        "candidates = paraphraser.candidates(prompts, batch, [1] * len(batch))",
        "the ids are watermark keys; at kappa = 0 the Waterfall bias is all zero, so the "
        "logits processor is inactive and no key changes a logit",
    ),
    *(
        (
            _PARAPHRASE + "x_paraphrase_spans",
            "for (i, (first, last)), new in zip(todo, rewritten, strict=True):",
            f"for (i, (first, last)), new in zip(todo, rewritten, {strict}):",
            _ONE_ROW_PER_PROMPT,
        )
        for strict in ("strict=None", "", "strict=False")
    ),
    *(
        (
            _SOURCES + "x_vocabulary_words",
            "kept = [(p.strip(), i) for p, i in zip(pieces, ids, strict=True) if _is_word(p.strip())]",
            f"kept = [(p.strip(), i) for p, i in zip(pieces, ids, {strict}) if _is_word(p.strip())]",
            _ONE_PIECE_PER_ID,
        )
        for strict in ("strict=None", "", "strict=False")
    ),
    (
        _SOURCES + "xǁEmbeddingNeighboursǁ__init__",
        "self.candidates = torch.nn.functional.normalize(weight[ids], dim=1)",
        "self.candidates = torch.nn.functional.normalize(weight[ids], )",
        "dim=1 is torch.nn.functional.normalize's default",
    ),
    (
        _SOURCES + "xǁEmbeddingNeighboursǁ_nearest",
        "query = torch.nn.functional.normalize(self.vector(word), dim=0)",
        "query = torch.nn.functional.normalize(self.vector(word), dim=None)",
        "the word's vector is 1-D, so the norm over all its elements is its norm over dim 0 "
        "(and the argmax of candidates @ query ignores any positive scale of the query)",
    ),
    (
        _EDITS + "x_copy_paste",
        "while len(pasted) < k:",
        "while len(pasted) <= k:",
        "it only pastes one more source text than needed: pasted[:k] is all that is read and "
        "index is not read after the loop, which ends since every source text holds a word",
    ),
    *(
        (
            _EDITS + "x_copy_paste",
            "for new, old in zip(pasted[:k], words.words[start : start + k], strict=True)",
            f"for new, old in zip(pasted[:k], words.words[start : start + k], {strict})",
            _K_AND_K,
        )
        for strict in ("strict=None", "", "strict=False")
    ),
    (
        _EDITS + "x_insertion",
        'current[0] = Word(current[0].text, " ")',
        "current[0] = Word(current[0].text, )",
        _DEFAULT_SPACE,
    ),
    (
        _EDITS + "x_insertion",
        'current.insert(gap, Word(new, " "))',
        "current.insert(gap, Word(new, ))",
        _DEFAULT_SPACE,
    ),
    (
        _WORDS + "xǁWordsǁof",
        'Word(m.group(), text[matches[i - 1].end() : m.start()] if i else "")',
        'Word(m.group(), text[matches[i - 1].end() : m.start()] if (i) or True else "")',
        "for i = 0 the slice runs from the end of the last match to the start of the first, "
        'and the last match never ends before the first starts, so the slice is "" too',
    ),
    (
        _WORDS + "xǁWordsǁof",
        'Word(m.group(), text[matches[i - 1].end() : m.start()] if i else "")',
        'Word(m.group(), text[matches[i - 1].end() : m.start()] if i else "XXXX")',
        "the first word's space is documented as ignored and nothing reads it: join takes "
        "only words[0].text, and an attack that puts another word first gives it its own "
        'space (insertion sets the old first word\'s to " ")',
    ),
)
