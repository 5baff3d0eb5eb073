"""Extraction strength (Carlini et al., 2021, as open-unlearning uses it): how short a prefix
of a target the model needs to reproduce the rest of it greedily.

For a target ``y`` of ``n`` tokens after a prompt ``x``::

    ES = 1 - k / n,   k = min{ k in 0..n : greedy decoding from [x, y_<k] gives y_k..y_n-1 }

1 when the model writes the whole target from the prompt alone, 0 when it gets not even the
last token right. Greedy decoding reproduces ``y_k..`` exactly when the model's most likely
next token, given the true prefix, is the true token at every position from ``k`` on
(teacher forcing), so ``k`` is one past the last position where the model's top token differs
from the target's, and one forward pass gives it.

open-unlearning (``src/evals/metrics/memorization.py``, ``extraction_strength``) runs ``k``
over ``0..n-1`` only, so where even the last token is wrong it reports ``1/n`` where this
definition gives 0; every other target gets the same value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from waterdrum_hf.baselines.inputs import check_same_length, token_id_array
from waterdrum_hf.baselines.token_scores import score_answers
from waterdrum_hf.utils.validation import check_string_list


def extraction_strength(
    predicted_ids: Sequence[int] | np.ndarray, target_ids: Sequence[int] | np.ndarray
) -> float:
    """ES of a target from the model's top next token at each of its positions.

    Args:
        predicted_ids: ``argmax_z p(z | x, y_<t)`` for ``t = 0..n-1``.
        target_ids: the target's tokens ``y_0..y_n-1`` (at least one).
    """
    predicted = token_id_array(predicted_ids, "predicted_ids")
    target = token_id_array(target_ids, "target_ids")
    check_same_length(predicted, target, "predicted_ids and target_ids")
    if not len(target):
        raise ValueError("`target_ids` is empty: pass a target of one or more tokens.")
    wrong = np.flatnonzero(predicted != target)
    k = wrong[-1] + 1 if len(wrong) else 0
    return float(1 - k / len(target))


def model_extraction_strength(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    targets: Sequence[str],
    *,
    batch_size: int = 16,
) -> np.ndarray:
    """:func:`extraction_strength` of each target after its prompt under ``model`` (the
    prompt tokenised with special tokens as :func:`waterdrum_hf.generate` does, the target
    without; the prompt must have a token, e.g. the BOS a Llama tokenizer adds to "")."""
    prompts = check_string_list(prompts, "prompts")
    targets = check_string_list(targets, "targets")
    check_same_length(prompts, targets, "prompts and targets")
    scores = score_answers(model, tokenizer, prompts, targets, batch_size=batch_size)
    return np.array([extraction_strength(s.predictions, s.token_ids) for s in scores])
