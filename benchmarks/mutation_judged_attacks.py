"""Surviving mutants of ``waterdrum_hf/attacks/`` judged equivalent (read by
``mutation_judged.py``): each entry is ``(function, before, after, reason)``, as
``mutation_judged.Judged`` takes them."""

from __future__ import annotations

_PARAPHRASE = "waterdrum_hf.attacks.paraphrase."
_PENALTY = (
    "with repetition_penalty None, transformers' generate takes the value of the model's own "
    "generation_config, which is where the attack reads it (float(penalty or 1.0)); unset "
    "there, None and 1.0 both mean no penalty (the tests at 1.3 and at None pass either way)"
)
_SOURCES = "waterdrum_hf.attacks.sources."
_ONE_PIECE_PER_ID = (
    "batch_decode decodes each of the len(ids) one-token sequences it is given into one "
    "string, so pieces and ids always have the same length and the zip has nothing to refuse"
)
_ONE_ROW_PER_PROMPT = (
    "candidates() returns one row per prompt, so rewritten has exactly one entry per run of "
    "todo and the zip never has unequal lengths to refuse"
)

JUDGED_ENTRIES: tuple[tuple[str, str | None, str | None, str], ...] = (
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
)
