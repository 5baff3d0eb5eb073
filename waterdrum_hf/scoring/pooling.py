"""A query's value pools its samples' token sums: token-weighted (the paper's) or the mean of
its sample scores. Both are linear in the sums, so the weight of each sample is known too (the
analytic null needs it)."""

from __future__ import annotations

import numpy as np

from waterdrum_hf.config import Pooling
from waterdrum_hf.scoring.inputs import Queries


def pool_queries(
    sums: np.ndarray, counts: np.ndarray, queries: Queries, pooling: Pooling
) -> np.ndarray:
    """Per-query values ``(num_queries, K)`` from per-sample token sums ``(num_samples, K)``."""
    num_queries = len(queries.watermark_ids)
    index = queries.sample_query
    with np.errstate(invalid="ignore", divide="ignore"):
        if pooling == "tokens":
            totals = np.zeros((num_queries, sums.shape[1]))
            np.add.at(totals, index, sums)
            tokens = np.bincount(index, weights=counts, minlength=num_queries)
            return np.where(tokens[:, None] > 0, totals / tokens[:, None], np.nan)
        scored = counts > 0
        scores = np.where(scored[:, None], sums / np.maximum(counts, 1)[:, None], 0.0)
        totals = np.zeros((num_queries, sums.shape[1]))
        np.add.at(totals, index, scores)
        samples = np.bincount(index, weights=scored, minlength=num_queries)
        return np.where(samples[:, None] > 0, totals / samples[:, None], np.nan)


def sample_weights(counts: np.ndarray, queries: Queries, pooling: Pooling) -> np.ndarray:
    """The weight of each sample's token sum in its query's value (linear, as :func:`pool_queries`
    computes it): ``1 / T_q`` (tokens) or ``1 / (S_q T_s)`` (mean); 0 for unscored samples."""
    index = queries.sample_query
    num_queries = len(queries.watermark_ids)
    scored = counts > 0
    if pooling == "tokens":
        per_query = np.bincount(index, weights=counts, minlength=num_queries)
        return np.where(scored, 1.0 / np.maximum(per_query[index], 1), 0.0)
    per_query = np.bincount(index, weights=scored, minlength=num_queries)
    return np.where(scored, 1.0 / (np.maximum(per_query[index], 1) * np.maximum(counts, 1)), 0.0)
