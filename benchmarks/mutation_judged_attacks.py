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
)
