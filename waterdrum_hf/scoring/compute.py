"""WaterDrum values of generated texts, each verified with its owner's key: the logic behind
the ``evaluate`` module (``metrics/waterdrum/waterdrum.py``, a thin wrapper around
:func:`waterdrum_metrics`)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.scoring.inputs import (
    Queries,
    group_queries,
    owner_display_names,
    set_masks,
    warn_skipped,
)
from waterdrum_hf.scoring.intervals import with_intervals
from waterdrum_hf.scoring.nulls import NullReading, read_null
from waterdrum_hf.scoring.pooling import pool_queries
from waterdrum_hf.scoring.results import OwnerValue, SetValue, WaterDrumResult, present_fields
from waterdrum_hf.scoring.verification import Verifier, scores_from_sums
from waterdrum_hf.statistics import holm_adjusted, separability_auroc


def waterdrum_metrics(
    predictions: Sequence[str] | Sequence[Sequence[str]],
    references: Sequence[int],
    watermark_tokenizer: Any = None,
    **options: Any,
) -> dict[str, Any]:
    """WaterDrum values of generated texts as a flat dict of scalars, the metrics that
    ``trainer.log``, ``evaluate.save`` and W&B take as they are (what the `evaluate` module
    returns): :func:`waterdrum_result` ``.to_dict()``; ``options`` are its keyword arguments (``config``,
    ``forget_ids``, ``owner_names``, ``query_ids``, ``return_details``, ``return_scores``).

    Returns:
        Flat scalars: ``forget``/``retain`` (or ``overall``), ``separability_auroc`` (retain
        positive) when both sets have scored queries, ``num_queries``, ``num_scored`` and
        ``num_skipped`` (samples with / without a countable token), ``num_missing_forget_ids``
        when some forget id owns no query; with a null (``config.null``), for each set
        ``<set>_null_mean``, ``<set>_null_std``, ``<set>_z``, ``<set>_p_value``; with an
        interval (``config.interval``), ``<set>_ci_low``/``<set>_ci_high``,
        ``separability_auroc_ci_low``/``_ci_high`` and ``confidence``. A value that cannot be
        computed is left out, never ``None``. With ``return_details``: ``per_owner`` (by name;
        with a null, each owner's ``p_value`` and its ``adjusted_p_value``, Holm over the owners
        of its set), ``query_values``, ``query_owners``, ``query_null_means`` (with a null) and
        ``scores``; with ``return_scores``: ``scores``.
    """
    return waterdrum_result(predictions, references, watermark_tokenizer, **options).to_dict()


def waterdrum_result(
    predictions: Sequence[str] | Sequence[Sequence[str]],
    references: Sequence[int],
    watermark_tokenizer: Any = None,
    *,
    config: WaterDrumConfig | None = None,
    forget_ids: Sequence[int] | None = None,
    owner_names: Mapping[int, str] | None = None,
    query_ids: Sequence[Hashable] | None = None,
    return_details: bool = False,
    return_scores: bool = False,
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
        config: how values are read (:class:`~waterdrum_hf.WaterDrumConfig`; its defaults:
            Waterfall with ``k_p=1``, ``n_gram=2``, token pooling, the analytic null, no interval). Its
            ``null`` gives each set's (and, in the details, each owner's) null mean and spread,
            ``z`` and one-sided p-value: empirical (random non-owner keys, pooled like the
            owners' scores; p is ``(1 + #{null >= value}) / (1 + keys)``, each key costs about
            one scoring pass) or analytic (the exact null mean and spread from the pair counts,
            :mod:`waterdrum_hf.scoring.analytic_null`; p from the normal approximation; a few percent
            of the scoring). Its ``interval`` adds a confidence interval to each set's value,
            the AUROC and (with ``return_details``) each owner's value: a percentile bootstrap
            over queries, resampled with replacement within each owner so that every owner
            keeps its number of queries (:mod:`waterdrum_hf.bootstrap` says why); owners with a
            single scored query add no spread, and a set or owner where none has two gets no
            interval.
        return_details: add ``per_owner`` (by name; with a null, each owner's p-value also
            Holm-adjusted over the owners of its set, ``adjusted_p_value``: read owners one by
            one with it, and some owner of the set reads detected by chance at most alpha of the
            time; unadjusted, one owner in 20 does at alpha = 0.05), per-sample ``scores``,
            per-query ``query_values`` and ``query_owners`` (names) and, with a null, each
            query's mean value under keys that own nothing (``query_null_means``: subtract it
            for a null-corrected value).
        return_scores: add only the per-sample ``scores`` (NaN where nothing was counted).

    Owners appear under display names, never under their watermark ids (secret keys).
    """
    if watermark_tokenizer is None:
        raise ValueError(
            "`watermark_tokenizer` is required: pass the tokenizer of the model that "
            "watermarked the data (the paraphraser's), or its name/path; for the published "
            "WaterDrum datasets that is meta-llama/Llama-3.1-8B-Instruct's."
        )
    config = _checked_config(config)
    queries = group_queries(predictions, references, query_ids)
    names = owner_display_names(queries.watermark_ids, owner_names)
    verifier = Verifier(watermark_tokenizer, config.scheme)
    if config.null is not None and config.null.method == "analytic":
        verifier.scheme.null_moments(verifier.vocab_size)  # refused here, not after scoring
    token_ids = verifier.token_ids(queries.samples) if queries.samples else []
    sums, counts = verifier.token_sums(token_ids, queries.sample_ids[:, None])
    evidence = None
    if config.null is not None:
        owners = np.unique(queries.watermark_ids).tolist()
        evidence = verifier.null_evidence(config.null, token_ids, exclude_ids=owners)
    values = pool_queries(sums, counts, queries, config.pooling)[:, 0]
    null = None
    if evidence is not None:
        null = read_null(evidence, counts, queries, config.pooling)
    sets, missing = set_masks(queries.watermark_ids, forget_ids)
    num_skipped = int((counts == 0).sum())
    if num_skipped:
        warn_skipped(queries.samples, counts, verifier.scheme.min_tokens())
    details: dict[str, Any] = {}
    if return_details:
        details = _details(values, queries, names, sets, null)
    if return_details or return_scores:
        details["scores"] = tuple(scores_from_sums(sums, counts)[:, 0].tolist())
    set_values = _set_values(values, sets, null)
    result = WaterDrumResult(
        forget=set_values.get("forget"),
        retain=set_values.get("retain"),
        overall=set_values.get("overall"),
        separability_auroc=_auroc(values, sets),
        num_queries=len(queries.watermark_ids),
        num_scored=int((counts > 0).sum()),
        num_skipped=num_skipped,
        num_missing_forget_ids=missing,
        **details,
    )
    if config.interval is None:
        return result
    owners = names if return_details else {}
    return with_intervals(result, values, queries.watermark_ids, sets, owners, config.interval)


def _checked_config(config: WaterDrumConfig | None) -> WaterDrumConfig:
    if config is None:
        return WaterDrumConfig()
    if not isinstance(config, WaterDrumConfig):
        raise TypeError(
            f"`config` must be a WaterDrumConfig, got {type(config).__name__} (build one with "
            "WaterDrumConfig(...) or WaterDrumConfig.from_keywords(dict(...)))."
        )
    return config


def _set_values(
    values: np.ndarray, sets: dict[str, np.ndarray], null: NullReading | None
) -> dict[str, SetValue]:
    """Each set with a scored query: its value and, with a null, its verdict."""
    scored = ~np.isnan(values)
    return {
        name: _set_value(values, null, members & scored)
        for name, members in sets.items()
        if (members & scored).any()
    }


def _auroc(values: np.ndarray, sets: dict[str, np.ndarray]) -> float | None:
    """Separability AUROC of the query values, retain positive (when both sets are scored)."""
    scored = ~np.isnan(values)
    if "forget" not in sets or not (sets["forget"] & scored).any():
        return None
    if not (sets["retain"] & scored).any():
        return None
    return separability_auroc(values[sets["retain"] & scored], values[sets["forget"] & scored])


def _details(
    values: np.ndarray,
    queries: Queries,
    names: dict[int, str],
    sets: dict[str, np.ndarray],
    null: NullReading | None,
) -> dict[str, Any]:
    """``per_owner``, ``query_values``, ``query_owners`` and, with a null, ``query_null_means``."""
    details: dict[str, Any] = {
        "per_owner": _per_owner(values, queries.watermark_ids, names, sets, null),
        "query_values": tuple(values.tolist()),
        "query_owners": tuple(names[int(owner)] for owner in queries.watermark_ids),
    }
    if null is not None:
        details["query_null_means"] = tuple(null.query_means(~np.isnan(values)).tolist())
    return details


def _set_value(values: np.ndarray, null: NullReading | None, rows: np.ndarray) -> SetValue:
    """The mean value of the (scored) query ``rows`` and, with a null reading, its null
    mean/std, z-score and p-value."""
    value = float(values[rows].mean())
    if null is None:
        return SetValue(value)
    mean, std, p_value = null.statistics(value, rows)
    z = (value - mean) / std if std > 0 else None
    return SetValue(value, mean, std, z, p_value)


def _per_owner(
    values: np.ndarray,
    watermark_ids: np.ndarray,
    names: dict[int, str],
    sets: dict[str, np.ndarray],
    null: NullReading | None,
) -> dict[str, OwnerValue]:
    """Each owner's value (mean over its scored queries) and the standard deviation of its
    query values (with two or more), counts, set and verdict (with the p-value Holm-adjusted
    over its set's owners), by name."""
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
        details[name] = OwnerValue(**counts, forget=forget, std=std, **present_fields(verdict))
    return _holm_within_sets(details)


def _holm_within_sets(owners: dict[str, OwnerValue]) -> dict[str, OwnerValue]:
    """The owners with ``adjusted_p_value``: Holm over the owners of each set (forget, retain,
    or all owners without ``forget_ids``), so that reading every owner of a set at once wrongly
    calls some owner's watermark detected at most alpha of the time. Holm, not
    Benjamini-Hochberg: owners act on their own verdict, and the owners' p-values depend on each
    other (one model, one set of null keys), which Holm allows and BH does not."""
    adjusted = dict(owners)
    for family in {owner.forget for owner in owners.values()}:
        names = [name for name, owner in owners.items() if owner.forget == family]
        p_values = holm_adjusted([owners[name].p_value for name in names]).tolist()
        for i, name in enumerate(names):
            if not math.isnan(p_values[i]):  # an owner without a p-value is not in the family
                adjusted[name] = replace(owners[name], adjusted_p_value=p_values[i])
    return adjusted
