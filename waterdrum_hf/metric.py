"""WaterDrum values from generated text: the logic behind the `evaluate` module.

``metrics/waterdrum/waterdrum.py`` is a thin `evaluate` wrapper around :func:`compute_waterdrum`;
:func:`load_metric` loads that module by absolute path, which works offline and never resolves a
bare name against the current directory or the Hub.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._validation import check_positive_int, check_texts, check_watermark_ids
from .statistics import separability_auroc
from .verification import NullReference, Verifier

logger = logging.getLogger(__name__)


def metric_path() -> Path:
    """Folder of the shipped `evaluate` module (``metrics/waterdrum`` in the source tree)."""
    from . import metrics

    return Path(metrics.__file__).resolve().parent / "waterdrum"


def load_metric(**load_kwargs: Any) -> Any:
    """Load the WaterDrum `evaluate` module shipped with this package (offline, by path).

    Keyword arguments go to ``evaluate.load`` (e.g. ``experiment_id``, ``keep_in_memory``).
    """
    import evaluate

    return evaluate.load(str(metric_path()), **load_kwargs)


def _set_summary(scores: np.ndarray) -> float | None:
    return float(scores.mean()) if len(scores) else None


def _null_summary(null: NullReference) -> dict[str, float | None]:
    if len(null.scores) == 0:
        return {"mean": None, "std": None}
    return {"mean": null.mean, "std": null.std}


def compute_waterdrum(
    predictions: Sequence[str],
    references: Sequence[int],
    watermark_tokenizer: Any = None,
    *,
    forget_ids: Sequence[int] | None = None,
    k_p: int = 1,
    n_gram: int = 2,
    vocab_size: int | None = None,
    null_keys: int = 0,
    null_seed: int = 0,
    return_scores: bool = False,
) -> dict[str, Any]:
    """WaterDrum values of generated texts, each verified with its owner's key.

    Args:
        predictions: generated text (the completion only, not the query).
        references: watermark id of the owner whose data formed each query.
        watermark_tokenizer: tokenizer of the model that watermarked the data, or its name/path.
        forget_ids: owners who asked to be forgotten. Without it only ``overall`` is reported.
        k_p, n_gram: the watermark's parameters (paper: 1 and 2).
        vocab_size: the watermark's vocabulary size N, if known (128000 for the published
            datasets); a tokenizer with another ``vocab_size`` raises instead of scoring ~0.
        null_keys: if > 0, also score every set under that many random non-owner keys and
            report their mean and spread (``null``), the level that "no watermark" reads at.
        null_seed: seed of those random keys.
        return_scores: add the per-sample ``scores`` (NaN where a text had nothing to count).

    Returns:
        ``forget``/``retain`` (or ``overall``): uniform means of per-sample scores;
        ``per_owner``: ``{id: {"mean", "count"}}``; ``separability_auroc`` (retain positive)
        when both sets have scored samples; ``num_scored``, ``num_skipped``;
        ``missing_forget_ids`` when some forget id never occurs in ``references``.
    """
    if watermark_tokenizer is None:
        raise ValueError(
            "`watermark_tokenizer` is required: pass the tokenizer of the model that "
            "watermarked the data (the paraphraser's), or its name/path; for the published "
            "WaterDrum datasets that is meta-llama/Llama-3.1-8B-Instruct's."
        )
    predictions = check_texts(predictions, "predictions")
    owners = check_watermark_ids(list(references), len(predictions), "references")
    check_positive_int(null_keys, "null_keys", minimum=0)
    verifier = Verifier(watermark_tokenizer, k_p=k_p, n_gram=n_gram, vocab_size=vocab_size)
    token_ids = verifier.token_ids(predictions)
    scores = verifier.score_token_ids(token_ids, owners)
    scored = ~np.isnan(scores)

    result: dict[str, Any] = {}
    sets: dict[str, np.ndarray] = {}
    if forget_ids is None:
        sets["overall"] = np.ones(len(scores), dtype=bool)
    else:
        forget = check_watermark_ids(list(forget_ids), len(forget_ids), "forget_ids")
        missing = sorted(set(forget.tolist()) - set(owners.tolist()))
        if missing:
            warnings.warn(
                f"{len(missing)} of {len(set(forget.tolist()))} forget_ids never occur in "
                "`references`; they contribute nothing (see `missing_forget_ids`).",
                stacklevel=2,
            )
            result["missing_forget_ids"] = missing
        in_forget = np.isin(owners, forget)
        sets["forget"], sets["retain"] = in_forget, ~in_forget
    for name, members in sets.items():
        result[name] = _set_summary(scores[members & scored])
    if "forget" in sets:
        forget_scores, retain_scores = scores[sets["forget"] & scored], scores[sets["retain"] & scored]
        if len(forget_scores) and len(retain_scores):
            result["separability_auroc"] = separability_auroc(retain_scores, forget_scores)
    result["per_owner"] = {
        int(owner): {
            "mean": _set_summary(scores[(owners == owner) & scored]),
            "count": int(((owners == owner) & scored).sum()),
        }
        for owner in np.unique(owners)
    }
    result["num_scored"] = int(scored.sum())
    result["num_skipped"] = int((~scored).sum())
    if null_keys:
        null = verifier.null_reference_of_token_ids(
            token_ids, null_keys, exclude_ids=np.unique(owners).tolist(), seed=null_seed
        )
        result["null"] = {
            name: _null_summary(null.subset(members & scored)) for name, members in sets.items()
        }
    if return_scores:
        result["scores"] = scores.tolist()
    return result
