"""WaterDrum values from generated text: the logic behind the `evaluate` module.

``metrics/waterdrum/waterdrum.py`` is a thin `evaluate` wrapper around :func:`compute_waterdrum`;
:func:`load_metric` loads that module by absolute path, which works offline and never resolves a
bare name against the current directory or the Hub.

Results are typed inside (:func:`waterdrum_result` returns a :class:`WaterDrumResult`) and flat at
the edges: :meth:`WaterDrumResult.to_dict` (what :func:`compute_waterdrum` returns) is a dict of
scalars that ``Trainer.log``, ``evaluate.save`` and W&B take as it is, and
:meth:`WaterDrumResult.from_dict` reads one back. Per-owner and per-sample detail only with
``return_details=True``. Owners appear under display names, never under their watermark ids,
which are secret keys.
"""

from __future__ import annotations

import itertools
import logging
import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np

from waterdrum_hf._validation import check_positive_int, check_texts
from waterdrum_hf.analytic_null import AnalyticNull, PositionMoments, normal_p_value
from waterdrum_hf.bootstrap import (
    DEFAULT_RESAMPLES,
    bootstrap_replicates,
    check_confidence,
    check_resamples,
    percentile_interval,
)
from waterdrum_hf.keys import check_watermark_id, check_watermark_ids
from waterdrum_hf.schemes import WatermarkScheme
from waterdrum_hf.statistics import null_p_value, separability_auroc
from waterdrum_hf.verification import Verifier, scores_from_sums

logger = logging.getLogger(__name__)

Pooling = Literal["tokens", "mean"]
NullMethod = Literal["empirical", "analytic"]


def metric_path() -> Path:
    """Folder of the shipped `evaluate` module (``metrics/waterdrum`` in the source tree).

    Found through ``importlib.resources``: the module imports this one, so importing it here
    would make the two import each other.
    """
    return Path(str(resources.files("waterdrum_hf.metrics") / "waterdrum")).resolve()


def load_metric(**load_kwargs: Any) -> Any:
    """Load the WaterDrum `evaluate` module shipped with this package (offline, by path).

    Keyword arguments go to ``evaluate.load`` (e.g. ``experiment_id``, ``keep_in_memory``).
    """
    import evaluate

    return evaluate.load(str(metric_path()), **load_kwargs)


@dataclass(frozen=True)
class SetValue:
    """A set's WaterDrum value and, with a null, what "no watermark" reads on its queries.

    Attributes:
        value: mean value of the set's scored queries.
        null_mean, null_std: mean and spread of the set's value under keys that own nothing:
            over the null keys (empirical null) or exactly (analytic null); ``None`` without
            a null.
        z: ``(value - null_mean) / null_std`` (``None`` without a null or when the spread
            is 0).
        p_value: one-sided p-value of "no watermark": empirical, or the analytic null's normal
            approximation (``None`` without a null, or analytic with a spread of 0).
        ci_low, ci_high: the value's bootstrap confidence interval (``None`` without
            ``confidence``, or when no owner of the set has two scored queries).
    """

    value: float
    null_mean: float | None = None
    null_std: float | None = None
    z: float | None = None
    p_value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None


@dataclass(frozen=True)
class OwnerValue:
    """One owner's queries, value and verdict (``per_owner`` entries, by display name).

    Attributes:
        num_queries, num_scored_queries: the owner's queries, and those with a value.
        forget: whether the owner is in the forget set (``None`` without ``forget_ids``).
        value: mean of the owner's scored query values (``None`` when none was scored).
        std: standard deviation of those query values (with two or more).
        null_mean, null_std, z, p_value: as in :class:`SetValue`, over the owner's queries.
        ci_low, ci_high: the value's bootstrap confidence interval (``None`` without
            ``confidence``, or with fewer than two scored queries).
    """

    num_queries: int
    num_scored_queries: int
    forget: bool | None = None
    value: float | None = None
    std: float | None = None
    null_mean: float | None = None
    null_std: float | None = None
    z: float | None = None
    p_value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The entry of the flat result: the attributes that are not ``None``."""
        return _present(self)

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> OwnerValue:
        """The entry back from :meth:`to_dict` (or from a saved JSON result)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ValueError(
                f"`per_owner` entry has keys {unknown} that are not owner fields {sorted(known)}."
            )
        return cls(**{k: v for k, v in entry.items() if v is not None})


def _part(kind: str, **kwargs: Any) -> Any:
    """A :class:`WaterDrumResult` field tagged with the part of the flat dict it becomes."""
    return field(metadata={"part": kind}, **kwargs)


@dataclass(frozen=True, kw_only=True)
class WaterDrumResult:
    """What :func:`waterdrum_result` computes; :meth:`to_dict` gives the flat dict that
    :func:`compute_waterdrum`, ``evaluate``, ``Trainer.log`` and JSON take.

    Attributes:
        forget, retain: the sets' values with ``forget_ids``; ``overall`` without. ``None``
            when the set has no scored query.
        separability_auroc: AUROC of query values, retain positive (``None`` unless both sets
            have scored queries).
        separability_auroc_ci_low, separability_auroc_ci_high: its bootstrap confidence
            interval (with ``confidence``).
        confidence: the level of the intervals (``None`` without intervals).
        num_queries: queries; num_scored, num_skipped: samples with / without a countable token.
        num_missing_forget_ids: forget ids that own no query.
        per_owner: each owner's :class:`OwnerValue` by display name (details only).
        query_values, query_owners, query_null_means: per query: value (NaN when not scored),
            owner's display name, mean value under the null keys (details only; the last with
            null keys).
        scores: per sample (NaN where nothing was counted); with details or ``return_scores``.
    """

    forget: SetValue | None = _part("set", default=None)
    retain: SetValue | None = _part("set", default=None)
    overall: SetValue | None = _part("set", default=None)
    separability_auroc: float | None = _part("scalar", default=None)
    separability_auroc_ci_low: float | None = _part("scalar", default=None)
    separability_auroc_ci_high: float | None = _part("scalar", default=None)
    num_queries: int = _part("scalar")
    num_scored: int = _part("scalar")
    num_skipped: int = _part("scalar")
    num_missing_forget_ids: int = _part("scalar", default=0)
    confidence: float | None = _part("scalar", default=None)
    per_owner: dict[str, OwnerValue] | None = _part("detail", default=None, repr=False)
    query_values: tuple[float, ...] | None = _part("detail", default=None, repr=False)
    query_owners: tuple[str, ...] | None = _part("detail", default=None, repr=False)
    query_null_means: tuple[float, ...] | None = _part("detail", default=None, repr=False)
    scores: tuple[float, ...] | None = _part("detail", default=None, repr=False)

    @classmethod
    def scalar_names(cls) -> tuple[str, ...]:
        """Every scalar key the flat dict can hold: a set's value under its name, its null
        statistics and interval as ``<set>_null_mean``, ``<set>_ci_low`` etc., then the other
        scalars."""
        names = []
        for f in fields(cls):
            if f.metadata["part"] == "set":
                names += [f.name] + [f"{f.name}_{g.name}" for g in fields(SetValue)[1:]]
            elif f.metadata["part"] == "scalar":
                names.append(f.name)
        return tuple(names)

    def sets(self) -> dict[str, SetValue]:
        """The sets that have a value, by name (``forget``, ``retain`` or ``overall``)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.metadata["part"] == "set" and getattr(self, f.name) is not None
        }

    def scalars(self) -> dict[str, float | int]:
        """The flat scalars: sets' values, the AUROC and counts, then the sets' null
        statistics. A value that was not computed is left out, never ``None``."""
        sets = self.sets()
        flat: dict[str, float | int] = {name: value.value for name, value in sets.items()}
        for f in fields(self):
            # A scalar at its default (None, or no missing forget id) is left out.
            if f.metadata["part"] == "scalar" and getattr(self, f.name) != f.default:
                flat[f.name] = getattr(self, f.name)
        for name, value in sets.items():
            flat.update({f"{name}_{k}": v for k, v in _present(value).items() if k != "value"})
        return flat

    def to_dict(self) -> dict[str, Any]:
        """The flat dict: :meth:`scalars`, then the details that were asked for (lists; owners
        as dicts)."""
        flat: dict[str, Any] = self.scalars()
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata["part"] != "detail" or value is None:
                continue
            if f.name == "per_owner":
                flat[f.name] = {name: owner.to_dict() for name, owner in value.items()}
            else:
                flat[f.name] = list(value)
        return flat

    @classmethod
    def from_dict(cls, flat: Mapping[str, Any]) -> WaterDrumResult:
        """The result back from :meth:`to_dict`, e.g. a model's entry of a saved ``report.json``
        (whose NaN were written as ``null``)."""
        if not isinstance(flat, Mapping):
            raise TypeError(f"A WaterDrum result must be a dict, got {type(flat).__name__}.")
        details = [f.name for f in fields(cls) if f.metadata["part"] == "detail"]
        unknown = sorted(set(flat) - set(cls.scalar_names()) - set(details))
        if unknown:
            raise ValueError(
                f"{unknown} are not keys of a WaterDrum result (see compute_waterdrum)."
            )
        present = {k: v for k, v in flat.items() if v is not None}
        required = {f.name for f in fields(cls) if f.default is MISSING}
        missing = sorted(required - set(present))
        if missing:
            raise ValueError(f"The WaterDrum result lacks {missing}: pass a whole result dict.")
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in present:
                continue
            if f.metadata["part"] == "set":
                statistics = {
                    g.name: present.get(f"{f.name}_{g.name}") for g in fields(SetValue)[1:]
                }
                values[f.name] = SetValue(present[f.name], **statistics)
            elif f.metadata["part"] == "scalar":
                values[f.name] = present[f.name]
            elif f.name == "per_owner":
                values[f.name] = {
                    str(n): OwnerValue.from_dict(e) for n, e in present[f.name].items()
                }
            elif f.name == "query_owners":
                values[f.name] = tuple(present[f.name])
            else:
                values[f.name] = tuple(math.nan if v is None else float(v) for v in present[f.name])
        return cls(**values)


def _present(value: Any) -> dict[str, Any]:
    """A dataclass's attributes that are not ``None``, in field order."""
    return {
        f.name: getattr(value, f.name) for f in fields(value) if getattr(value, f.name) is not None
    }


@dataclass(frozen=True, repr=False)  # no repr: `watermark_ids` holds the owners' secret keys
class _Queries:
    """Samples grouped into queries: the text of each sample, its query, each query's owner."""

    samples: list[str]
    sample_query: np.ndarray
    watermark_ids: np.ndarray


def compute_waterdrum(
    predictions: Sequence[str] | Sequence[Sequence[str]],
    references: Sequence[int],
    watermark_tokenizer: Any = None,
    *,
    forget_ids: Sequence[int] | None = None,
    owner_names: Mapping[int, str] | None = None,
    query_ids: Sequence[Hashable] | None = None,
    pooling: Pooling = "tokens",
    k_p: int | None = None,
    n_gram: int = 2,
    scheme: str | WatermarkScheme = "waterfall",
    vocab_size: int | None = None,
    null: NullMethod | None = None,
    null_keys: int = 0,
    null_seed: int = 0,
    return_details: bool = False,
    return_scores: bool = False,
    confidence: float | None = None,
    bootstrap_resamples: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = 0,
) -> dict[str, Any]:
    """WaterDrum values of generated texts as a flat dict (what the `evaluate` module returns):
    :func:`waterdrum_result` (same arguments) ``.to_dict()``.

    Returns:
        Flat scalars: ``forget``/``retain`` (or ``overall``), ``separability_auroc`` (retain
        positive) when both sets have scored queries, ``num_queries``, ``num_scored`` and
        ``num_skipped`` (samples with / without a countable token), ``num_missing_forget_ids``
        when some forget id owns no query; with a null (``null_keys`` or ``null="analytic"``),
        for each set ``<set>_null_mean``, ``<set>_null_std``, ``<set>_z``, ``<set>_p_value``;
        with ``confidence``, ``<set>_ci_low``/``<set>_ci_high``,
        ``separability_auroc_ci_low``/``_ci_high`` and ``confidence``. A value that cannot be
        computed is left out, never ``None``. With ``return_details``: ``per_owner`` (by name),
        ``query_values``, ``query_owners``, ``query_null_means`` (with a null) and ``scores``;
        with ``return_scores``: ``scores``.
    """
    return waterdrum_result(
        predictions,
        references,
        watermark_tokenizer,
        forget_ids=forget_ids,
        owner_names=owner_names,
        query_ids=query_ids,
        pooling=pooling,
        k_p=k_p,
        n_gram=n_gram,
        scheme=scheme,
        vocab_size=vocab_size,
        null=null,
        null_keys=null_keys,
        null_seed=null_seed,
        return_details=return_details,
        return_scores=return_scores,
        confidence=confidence,
        bootstrap_resamples=bootstrap_resamples,
        bootstrap_seed=bootstrap_seed,
    ).to_dict()


def waterdrum_result(
    predictions: Sequence[str] | Sequence[Sequence[str]],
    references: Sequence[int],
    watermark_tokenizer: Any = None,
    *,
    forget_ids: Sequence[int] | None = None,
    owner_names: Mapping[int, str] | None = None,
    query_ids: Sequence[Hashable] | None = None,
    pooling: Pooling = "tokens",
    k_p: int | None = None,
    n_gram: int = 2,
    scheme: str | WatermarkScheme = "waterfall",
    vocab_size: int | None = None,
    null: NullMethod | None = None,
    null_keys: int = 0,
    null_seed: int = 0,
    return_details: bool = False,
    return_scores: bool = False,
    confidence: float | None = None,
    bootstrap_resamples: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = 0,
) -> WaterDrumResult:
    """WaterDrum values of generated texts, each verified with its owner's key.

    A *query* is one prompt made from an owner's data; the paper samples it 10 times. Its
    value pools its samples (``pooling="tokens"``: token-weighted, as the authors do, i.e. the
    mean watermark function over all counted tokens of its samples; ``"mean"``: the mean of
    the sample scores). Set values and the AUROC are over queries.

    Args:
        predictions: generated text (the completion only, not the query): one string per query,
            a list of samples per query (what :func:`waterdrum_hf.generate` returns), or flat
            samples grouped by ``query_ids``.
        references: watermark id (0..2**32-1) of the owner behind each query (one per entry of
            ``predictions``).
        watermark_tokenizer: tokenizer of the model that watermarked the data, or its name/path.
        forget_ids: owners who asked to be forgotten. Without it only ``overall`` is reported.
        owner_names: display name of each owner id (for ``per_owner``); by default owners are
            ``owner-1``, ``owner-2``, ... in order of first appearance in ``references``.
        query_ids: with flat ``predictions``, the query each sample answers (samples of one
            query must share its owner).
        pooling: ``"tokens"`` or ``"mean"`` (see above).
        k_p, n_gram: the watermark's parameters (paper: 1 and 2; ``k_p`` is Waterfall's).
        scheme: the watermark scheme the data was watermarked with: ``"waterfall"`` (the
            default), ``"kgw"``, or a :class:`~waterdrum_hf.schemes.WatermarkScheme`.
        vocab_size: the watermark's vocabulary size N, if known (128000 for the published
            datasets); a tokenizer with another ``vocab_size`` raises instead of scoring ~0.
        null: what "no watermark" reads at, for each set's (and, in the details, each owner's)
            null mean and spread, ``z`` and one-sided p-value. ``"empirical"`` (the default
            when ``null_keys`` > 0): score every query under ``null_keys`` random non-owner
            keys (:meth:`Verifier.null_reference_of_token_ids`, pooled like the owners'
            scores); p is ``(1 + #{null >= value}) / (1 + null_keys)``, at least
            ``1 / (1 + null_keys)``; each key costs about one scoring pass. ``"analytic"``: the
            exact null mean and spread from the pair counts (:mod:`waterdrum_hf.analytic_null`;
            Waterfall and KGW), p from the normal approximation; costs a few percent of the
            scoring. ``None`` (the default): the empirical null with ``null_keys``, else none.
        null_keys: random non-owner keys of the empirical null (0: none).
        null_seed: seed of those random keys.
        return_details: add ``per_owner`` (by name), per-sample ``scores``, per-query
            ``query_values`` and ``query_owners`` (names) and, with a null, each query's mean
            value under keys that own nothing (``query_null_means``: subtract it for a
            null-corrected value).
        return_scores: add only the per-sample ``scores`` (NaN where nothing was counted).
        confidence: if given (e.g. 0.95), add a confidence interval at this level to each set's
            value, the AUROC and (with ``return_details``) each owner's value: a percentile
            bootstrap over queries, resampled with replacement within each owner so that every
            owner keeps its number of queries (:mod:`waterdrum_hf.bootstrap` says why). The
            interval is about the sampled queries, the owners being given. Owners with a single
            scored query add no spread; a set or owner where none has two gets no interval.
            Off by default: it costs ``bootstrap_resamples`` passes over the query values.
        bootstrap_resamples: resamples of the bootstrap (at least 100; 1000 by default).
        bootstrap_seed: seed of the resampling: the same call gives the same interval.

    Owners appear under display names, never under their watermark ids (secret keys).
    """
    if watermark_tokenizer is None:
        raise ValueError(
            "`watermark_tokenizer` is required: pass the tokenizer of the model that "
            "watermarked the data (the paraphraser's), or its name/path; for the published "
            "WaterDrum datasets that is meta-llama/Llama-3.1-8B-Instruct's."
        )
    if pooling not in ("tokens", "mean"):
        raise ValueError(f"`pooling` must be 'tokens' or 'mean', got {pooling!r}.")
    null = resolve_null(null, check_positive_int(null_keys, "null_keys", minimum=0))
    if confidence is not None:
        confidence = check_confidence(confidence)
        check_resamples(bootstrap_resamples)
        check_positive_int(bootstrap_seed, "bootstrap_seed", minimum=0)
    queries = _group(predictions, references, query_ids)
    names = owner_display_names(queries.watermark_ids, owner_names)
    verifier = Verifier(
        watermark_tokenizer, k_p=k_p, n_gram=n_gram, vocab_size=vocab_size, scheme=scheme
    )
    token_ids = verifier.token_ids(queries.samples) if queries.samples else []
    sample_ids = queries.watermark_ids[queries.sample_query]
    sums, counts = verifier.token_sums(token_ids, sample_ids[:, None])
    values = _pool(sums, counts, queries, pooling)[:, 0]
    scored = ~np.isnan(values)
    sets, missing = _sets(queries.watermark_ids, forget_ids)
    num_skipped = int((counts == 0).sum())
    if num_skipped:
        _warn_skipped(queries.samples, counts, n_gram)

    null_reading: _NullReading | None = None
    if null == "empirical":
        reference = verifier.null_reference_of_token_ids(
            token_ids,
            null_keys,
            exclude_ids=np.unique(queries.watermark_ids).tolist(),
            seed=null_seed,
        )
        null_reading = _EmpiricalReading(_pool(reference.sums, reference.counts, queries, pooling))
    elif null == "analytic":
        null_reading = _AnalyticReading(
            AnalyticNull(
                *verifier.countable_pairs(token_ids),
                len(token_ids),
                PositionMoments.of(verifier.scheme, verifier.vocab_size),
            ),
            _sample_weights(counts, queries, pooling),
            queries.sample_query,
        )
    set_values = {
        name: _set_value(values, null_reading, members & scored)
        for name, members in sets.items()
        if (members & scored).any()
    }
    auroc = None
    if "forget" in set_values and "retain" in set_values:
        auroc = separability_auroc(values[sets["retain"] & scored], values[sets["forget"] & scored])
    details: dict[str, Any] = {}
    if return_details:
        details["per_owner"] = _per_owner(values, queries.watermark_ids, names, sets, null_reading)
        details["query_values"] = tuple(values.tolist())
        details["query_owners"] = tuple(names[int(owner)] for owner in queries.watermark_ids)
        if null_reading is not None:
            details["query_null_means"] = tuple(null_reading.query_means(scored).tolist())
    if return_details or return_scores:
        details["scores"] = tuple(scores_from_sums(sums, counts)[:, 0].tolist())
    result = WaterDrumResult(
        **set_values,
        separability_auroc=auroc,
        num_queries=len(queries.watermark_ids),
        num_scored=int((counts > 0).sum()),
        num_skipped=num_skipped,
        num_missing_forget_ids=missing,
        **details,
    )
    if confidence is None:
        return result
    owners = names if return_details else {}
    return _with_intervals(
        result,
        values,
        queries.watermark_ids,
        sets,
        owners,
        confidence,
        bootstrap_resamples,
        bootstrap_seed,
    )


def _group(
    predictions: Sequence[Any], references: Sequence[int], query_ids: Sequence[Hashable] | None
) -> _Queries:
    """Check the inputs and lay them out as samples, their queries and the queries' owners."""
    if isinstance(predictions, str) or not isinstance(predictions, Sequence) or not predictions:
        raise TypeError(
            "`predictions` must be a non-empty list of strings, or of lists of strings (the "
            "samples of each query)."
        )
    nested = not isinstance(predictions[0], str)
    references = list(references)
    if nested:
        if query_ids is not None:
            raise ValueError(
                "`query_ids` groups flat predictions; nested predictions are grouped already."
            )
        if len(references) != len(predictions):
            raise ValueError(
                f"`references` has {len(references)} entries but there are {len(predictions)} "
                "queries: pass one owner id per query (per list of samples)."
            )
        samples, sample_query = [], []
        for i, per_query in enumerate(predictions):
            if isinstance(per_query, str) or not isinstance(per_query, Sequence):
                raise TypeError(
                    f"`predictions[{i}]` is a {type(per_query).__name__}: pass either strings or "
                    "lists of strings, not a mix."
                )
            samples += check_texts(per_query, f"predictions[{i}]") if per_query else []
            sample_query += [i] * len(per_query)
        watermark_ids = check_watermark_ids(references, len(predictions), "references")
        return _Queries(samples, np.array(sample_query, dtype=np.int64), watermark_ids)

    samples = check_texts(predictions, "predictions")
    sample_ids = check_watermark_ids(references, len(samples), "references")
    if query_ids is None:
        return _Queries(samples, np.arange(len(samples)), sample_ids)
    query_ids = list(query_ids)
    if len(query_ids) != len(samples):
        raise ValueError(
            f"`query_ids` has {len(query_ids)} entries but there are {len(samples)} predictions."
        )
    index: dict[Hashable, int] = {}
    sample_query = np.array([index.setdefault(q, len(index)) for q in query_ids], dtype=np.int64)
    watermark_ids = np.full(len(index), -1, dtype=np.int64)
    watermark_ids[sample_query] = sample_ids
    if (watermark_ids[sample_query] != sample_ids).any():
        raise ValueError("`query_ids` puts samples of different owners into one query.")
    return _Queries(samples, sample_query, watermark_ids)


def _warn_skipped(samples: Sequence[str], counts: np.ndarray, n_gram: int) -> None:
    """Say how many samples could not be scored, why, and what to do about it."""
    skipped = np.flatnonzero(counts == 0)
    empty = sum(not samples[i].strip() for i in skipped)
    causes = []
    if empty:
        causes.append(
            f"{empty} are empty, which usually means the query was the whole text and the model "
            "had nothing left to write (build queries with completion_queries(..., "
            "max_fraction=0.5), the default, or `waterdrum score --max-fraction 0.5`)"
        )
    if len(skipped) > empty:
        causes.append(
            f"{len(skipped) - empty} have fewer than n_gram={n_gram} tokens of the watermarking "
            "vocabulary (the model stopped almost at once, or wrote tokens outside that "
            "vocabulary)"
        )
    logger.warning(
        "%d of %d samples have no countable token and are left out (counted in num_skipped): %s.",
        len(skipped),
        len(counts),
        "; ".join(causes),
    )


def _pool(sums: np.ndarray, counts: np.ndarray, queries: _Queries, pooling: Pooling) -> np.ndarray:
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


def _sets(
    watermark_ids: np.ndarray, forget_ids: Sequence[int] | None
) -> tuple[dict[str, np.ndarray], int]:
    """Query masks of ``overall`` or ``forget``/``retain``, and how many forget ids own no query."""
    if forget_ids is None:
        return {"overall": np.ones(len(watermark_ids), dtype=bool)}, 0
    if isinstance(forget_ids, (str, bytes)) or not hasattr(forget_ids, "__len__"):
        raise TypeError("`forget_ids` must be a list of watermark ids.")
    forget = np.unique(check_watermark_ids(list(forget_ids), len(forget_ids), "forget_ids"))
    missing = int((~np.isin(forget, watermark_ids)).sum())
    if missing:
        # Ids are secret keys: say how many, never which.
        warnings.warn(
            f"{missing} of {len(forget)} forget_ids own no query in `references`; they "
            "contribute nothing (counted in `num_missing_forget_ids`).",
            stacklevel=3,
        )
    in_forget = np.isin(watermark_ids, forget)
    return {"forget": in_forget, "retain": ~in_forget}, missing


def resolve_null(null: NullMethod | None, null_keys: int) -> NullMethod | None:
    """The null :func:`waterdrum_result` computes for ``null`` and ``null_keys`` (``None``:
    the empirical null with null keys, else none); a ValueError for a bad combination."""
    if null is None:
        return "empirical" if null_keys else None
    if null not in ("empirical", "analytic"):
        raise ValueError(f"`null` must be 'empirical', 'analytic' or None, got {null!r}.")
    if null == "empirical" and not null_keys:
        raise ValueError("`null`='empirical' needs `null_keys` > 0 (e.g. 100 random keys).")
    if null == "analytic" and null_keys:
        raise ValueError(
            "`null_keys` is the empirical null's; with `null`='analytic' leave it at 0."
        )
    return null


class _NullReading(ABC):
    """What keys that own nothing read on the queries: the null mean, spread and p-value of
    the mean value of some rows (queries), and each query's null mean."""

    @abstractmethod
    def statistics(self, value: float, rows: np.ndarray) -> tuple[float, float, float | None]:
        """``(null mean, null std, p-value or None)`` of ``value``, the mean of ``rows``."""

    @abstractmethod
    def query_means(self, scored: np.ndarray) -> np.ndarray:
        """Each query's null mean (NaN where not ``scored``)."""


@dataclass(frozen=True, eq=False)
class _EmpiricalReading(_NullReading):
    """The queries' values ``(num_queries, K)`` under ``K`` random keys."""

    values: np.ndarray

    def statistics(self, value: float, rows: np.ndarray) -> tuple[float, float, float | None]:
        key_means = self.values[rows].mean(axis=0)  # the rows' value under each null key
        return float(key_means.mean()), float(key_means.std()), null_p_value(value, key_means)

    def query_means(self, scored: np.ndarray) -> np.ndarray:
        return self.values.mean(axis=1)


@dataclass(frozen=True, eq=False)
class _AnalyticReading(_NullReading):
    """The exact null moments of the queries' pooled values (:mod:`~waterdrum_hf.analytic_null`):
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


def _sample_weights(counts: np.ndarray, queries: _Queries, pooling: Pooling) -> np.ndarray:
    """The weight of each sample's token sum in its query's value (linear, as :func:`_pool`
    computes it): ``1 / T_q`` (tokens) or ``1 / (S_q T_s)`` (mean); 0 for unscored samples."""
    index = queries.sample_query
    num_queries = len(queries.watermark_ids)
    scored = counts > 0
    if pooling == "tokens":
        per_query = np.bincount(index, weights=counts, minlength=num_queries)
        return np.where(scored, 1.0 / np.maximum(per_query[index], 1), 0.0)
    per_query = np.bincount(index, weights=scored, minlength=num_queries)
    return np.where(scored, 1.0 / (np.maximum(per_query[index], 1) * np.maximum(counts, 1)), 0.0)


def _set_value(values: np.ndarray, null: _NullReading | None, rows: np.ndarray) -> SetValue:
    """The mean value of the (scored) query ``rows`` and, with a null reading, its null
    mean/std, z-score and p-value."""
    value = float(values[rows].mean())
    if null is None:
        return SetValue(value)
    mean, std, p_value = null.statistics(value, rows)
    z = (value - mean) / std if std > 0 else None
    return SetValue(value, mean, std, z, p_value)


def _with_intervals(
    result: WaterDrumResult,
    values: np.ndarray,
    watermark_ids: np.ndarray,
    sets: dict[str, np.ndarray],
    names: dict[int, str],
    confidence: float,
    resamples: int,
    seed: int,
) -> WaterDrumResult:
    """``result`` with percentile intervals on its sets' values, the AUROC and the ``names``d
    owners' values, from one stratified bootstrap of the scored queries (strata: owners). A set
    or owner whose every owner has a single scored query has no spread to resample and gets
    no interval."""
    scored = ~np.isnan(values)
    strata = watermark_ids[scored]

    def varies(mask: np.ndarray) -> bool:
        return bool(mask.any()) and len(np.unique(strata[mask])) < mask.sum()

    masks = {("set", name): members[scored] for name, members in sets.items()}
    masks.update({("owner", name): strata == owner for owner, name in names.items()})
    masks = {key: mask for key, mask in masks.items() if varies(mask)}
    pair = None
    if result.separability_auroc is not None and varies(np.ones(len(strata), dtype=bool)):
        pair = (sets["retain"][scored], sets["forget"][scored])
    replicates, aurocs = bootstrap_replicates(
        values[scored], strata, masks, auroc=pair, resamples=resamples, seed=seed
    )
    intervals = {key: percentile_interval(r, confidence) for key, r in replicates.items()}

    def bounded(value: Any, key: tuple[str, str]) -> Any:
        interval = intervals.get(key)
        return (
            value
            if interval is None
            else replace(value, ci_low=interval.low, ci_high=interval.high)
        )

    changes: dict[str, Any] = {
        name: bounded(value, ("set", name)) for name, value in result.sets().items()
    }
    if result.per_owner is not None:
        changes["per_owner"] = {
            name: bounded(entry, ("owner", name)) for name, entry in result.per_owner.items()
        }
    if aurocs is not None:
        auroc = percentile_interval(aurocs, confidence)
        changes |= {
            "separability_auroc_ci_low": auroc.low,
            "separability_auroc_ci_high": auroc.high,
        }
    return replace(result, **changes, confidence=confidence)


def owner_display_names(
    watermark_ids: Sequence[int] | np.ndarray, owner_names: Mapping[int, str] | None
) -> dict[int, str]:
    """Display name of every owner present: its name in ``owner_names`` if given, else
    ``owner-<n>`` by first appearance (skipping any ``owner-<n>`` that ``owner_names`` uses).

    Raises (with counts, never ids) when ``owner_names`` is not a mapping of ids to non-empty
    strings or gives two owners the same name.
    """
    present = list(dict.fromkeys(np.asarray(watermark_ids).tolist()))
    if owner_names is None:
        owner_names = {}
    if not isinstance(owner_names, Mapping):
        raise TypeError("`owner_names` must map watermark ids to display names (a dict).")
    names = {check_watermark_id(k, "owner_names key"): v for k, v in owner_names.items()}
    if not all(isinstance(name, str) and name for name in names.values()):
        raise TypeError("`owner_names` values must be non-empty strings.")
    chosen = [names[owner] for owner in present if owner in names]
    if len(set(chosen)) != len(chosen):
        raise ValueError("`owner_names` gives two owners the same name.")
    defaults = (f"owner-{n}" for n in itertools.count(1) if f"owner-{n}" not in set(chosen))
    return {owner: names[owner] if owner in names else next(defaults) for owner in present}


def _per_owner(
    values: np.ndarray,
    watermark_ids: np.ndarray,
    names: dict[int, str],
    sets: dict[str, np.ndarray],
    null: _NullReading | None,
) -> dict[str, OwnerValue]:
    """Each owner's value (mean over its scored queries) and the standard deviation of its
    query values (with two or more), counts, set and verdict, by name."""
    details = {}
    for owner, name in names.items():
        mine = watermark_ids == owner
        scored = mine & ~np.isnan(values)
        counts = {"num_queries": int(mine.sum()), "num_scored_queries": int(scored.sum())}
        forget = bool(sets["forget"][mine][0]) if "forget" in sets else None
        if not scored.any():
            details[name] = OwnerValue(**counts, forget=forget)
            continue
        std = float(values[scored].std(ddof=1)) if scored.sum() > 1 else None
        verdict = _set_value(values, null, scored)
        details[name] = OwnerValue(**counts, forget=forget, std=std, **_present(verdict))
    return details
