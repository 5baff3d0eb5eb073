"""ROUGE-L of predictions against references (``rouge_score``, the ``reproduce`` extra).

The paper's text-overlap baseline is ROUGE-L *recall* of a model's greedy continuation of a
text's prefix against the text's actual continuation, stemmed (TOFU's ``rougeL_recall``:
``locuslab/tofu`` ``evaluate_util.py``, ``eval_rouge_recall``; open-unlearning's
``src/evals/metrics/utils.py``, ``eval_text_similarity``). MUSE's KnowMem takes the F-measure
of the same LCS score without stemming (:mod:`waterdrum_hf.baselines.knowmem`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from waterdrum_hf.baselines.inputs import check_same_length
from waterdrum_hf.utils.validation import check_string_list


def rouge_l_scores(
    predictions: Sequence[str], references: Sequence[str], *, stemmer: bool
) -> list[Any]:
    """``rouge_score``'s ROUGE-L ``Score`` (precision, recall, fmeasure) of each prediction
    against its reference, with Porter stemming or without."""
    predictions = check_string_list(predictions, "predictions")
    references = check_string_list(references, "references")
    check_same_length(predictions, references, "predictions and references")
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        raise ImportError(
            "ROUGE-L needs the rouge-score package: pip install 'waterdrum-hf[reproduce]'"
        ) from None
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stemmer)
    return [
        scorer.score(ref, pred)["rougeL"] for pred, ref in zip(predictions, references, strict=True)
    ]


def rouge_l_recall(predictions: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """ROUGE-L recall of each prediction against its reference (``rouge_score``, stemmed):
    the longest common subsequence of words over the reference's length in words."""
    scores = rouge_l_scores(predictions, references, stemmer=True)
    return np.array([score.recall for score in scores], dtype=np.float64)
