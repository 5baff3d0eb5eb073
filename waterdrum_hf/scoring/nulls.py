"""What keys that own nothing read on the queries: the empirical null (random keys) or the
analytic one (exact moments from the token-pair counts), behind one interface, from what the
verifier read (:meth:`~waterdrum_hf.Verifier.null_evidence`) pooled as the owners' values are."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from waterdrum_hf.config import Pooling
from waterdrum_hf.scoring.analytic_null import AnalyticNull, normal_p_value
from waterdrum_hf.scoring.inputs import Queries
from waterdrum_hf.scoring.pooling import pool_queries, sample_weights
from waterdrum_hf.scoring.verification import NullReference
from waterdrum_hf.statistics import null_p_value


class NullReading(ABC):
    """What keys that own nothing read on the queries: the null mean, spread and p-value of
    the mean value of some rows (queries), and each query's null mean."""

    @abstractmethod
    def statistics(self, value: float, rows: np.ndarray) -> tuple[float, float, float | None]:
        """``(null mean, null std, p-value or None)`` of ``value``, the mean of ``rows``."""

    @abstractmethod
    def query_means(self, scored: np.ndarray) -> np.ndarray:
        """Each query's null mean (NaN where not ``scored``)."""


@dataclass(frozen=True, eq=False)
class EmpiricalReading(NullReading):
    """The queries' values ``(num_queries, K)`` under ``K`` random keys."""

    values: np.ndarray

    def statistics(self, value: float, rows: np.ndarray) -> tuple[float, float, float | None]:
        key_means = self.values[rows].mean(axis=0)  # the rows' value under each null key
        return float(key_means.mean()), float(key_means.std()), null_p_value(value, key_means)

    def query_means(self, scored: np.ndarray) -> np.ndarray:
        means: np.ndarray = self.values.mean(axis=1)
        return means


@dataclass(frozen=True, eq=False)
class AnalyticReading(NullReading):
    """The exact null moments of the queries' pooled values (:mod:`~waterdrum_hf.scoring.analytic_null`):
    each sample's token sum enters its query's value with ``sample_weights``."""

    null: AnalyticNull
    sample_weights: np.ndarray
    sample_query: np.ndarray

    def statistics(self, value: float, rows: np.ndarray) -> tuple[float, float, float | None]:
        samples = np.flatnonzero(rows[self.sample_query])
        mean, std = self.null.mean_std(samples, self.sample_weights[samples] / rows.sum())
        return mean, std, normal_p_value(value, mean, std) if std > 0 else None

    def query_means(self, scored: np.ndarray) -> np.ndarray:
        return np.where(scored, self.null.moments.mean, np.nan)


def read_null(
    evidence: NullReference | AnalyticNull, counts: np.ndarray, queries: Queries, pooling: Pooling
) -> NullReading:
    """The null reading of ``evidence`` (the null keys' token sums, or the analytic null of the
    queries' token pairs), pooled as the owners' values are (``counts``: each sample's
    countable tokens)."""
    if isinstance(evidence, NullReference):
        return EmpiricalReading(pool_queries(evidence.sums, evidence.counts, queries, pooling))
    return AnalyticReading(evidence, sample_weights(counts, queries, pooling), queries.sample_query)
