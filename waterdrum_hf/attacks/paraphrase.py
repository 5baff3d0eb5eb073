"""The paraphrase attack: a share of each text rewritten by a paraphrasing model, unwatermarked.

A run of ``k`` consecutive words (``k`` as for every attack, starting at a uniformly drawn
word) is rewritten by :class:`~waterdrum_hf.generation.paraphraser.Paraphraser` with no
watermark, one sampled candidate, and spliced back in place of the
run; at strength 1 the whole text is paraphrased. The paraphraser is the library's own (the
prompt the built-in tiny model was trained to answer), sampling is seeded per batch from
``seed`` and the batch's texts, so the same call gives the same output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from waterdrum_hf.attacks.words import Words

NO_REPEAT_NGRAM_SIZE = 3
"""Small paraphrasers loop without it (the demo watermarks with the same setting)."""


def paraphrase_spans(
    texts: Sequence[Words],
    counts: Sequence[int],
    rngs: Sequence[np.random.Generator],
    *,
    model: Any,
    tokenizer: Any,
    seed: int,
    batch_size: int,
    show_progress: bool | None,
) -> list[str]:
    """Each text with a run of ``counts[i]`` words paraphrased (the text itself for 0): one
    unwatermarked, sampled paraphrase of each run, spliced back in its place."""
    from waterdrum_hf.generation.paraphrase_config import ParaphraseConfig
    from waterdrum_hf.generation.paraphraser import Paraphraser
    from waterdrum_hf.utils.progress import progress_bar
    from waterdrum_hf.utils.torch_plumbing import inference_mode

    todo = _random_runs(texts, counts, rngs)
    runs = [texts[i].text[first:last] for i, (first, last) in todo]
    penalty = getattr(getattr(model, "generation_config", None), "repetition_penalty", None)
    config = ParaphraseConfig(
        do_sample=True,
        num_beam_groups=1,
        beams_per_group=1,
        no_repeat_ngram_size=NO_REPEAT_NGRAM_SIZE,
        repetition_penalty=float(penalty or 1.0),
        seed=seed,
    )
    paraphraser = Paraphraser(model, tokenizer, config)
    rewritten: list[str] = []
    batches = range(0, len(runs), batch_size)
    with inference_mode(model):
        for start in progress_bar(batches, desc="paraphrasing", enabled=show_progress):
            batch = runs[start : start + batch_size]
            prompts = [paraphraser.prompt_ids(text) for text in batch]
            candidates = paraphraser.candidates(prompts, batch, [0] * len(batch))
            rewritten += [row[0] for row in candidates]
    out = [words.text for words in texts]
    for (i, (first, last)), new in zip(todo, rewritten, strict=True):
        out[i] = out[i][:first] + new + out[i][last:]
    return out


def _random_runs(
    texts: Sequence[Words], counts: Sequence[int], rngs: Sequence[np.random.Generator]
) -> list[tuple[int, tuple[int, int]]]:
    """``(text index, (first, last) character span)`` of a run of ``counts[i]`` consecutive
    words at a uniformly drawn start, for each text with a count above 0."""
    todo = []
    for i, (words, k, rng) in enumerate(zip(texts, counts, rngs, strict=True)):
        if k == 0:
            continue
        start = int(rng.integers(len(words) - k + 1))
        first = words.ends[start] - len(words.words[start].text)
        todo.append((i, (first, words.ends[start + k - 1])))
    return todo
