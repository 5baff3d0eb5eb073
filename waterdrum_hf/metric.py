"""WaterDrum values from generated text: the logic behind the `evaluate` module.

``metrics/waterdrum/waterdrum.py`` is a thin `evaluate` wrapper around :func:`compute_waterdrum`;
:func:`load_metric` loads that module by absolute path, which works offline and never resolves a
bare name against the current directory or the Hub.

Results are flat dicts of scalars (what ``Trainer.log``, ``evaluate.save`` and W&B take as they
are); per-owner and per-sample detail only with ``return_details=True``. Owners appear under
display names, never under their watermark ids, which are secret keys.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np

from waterdrum_hf._validation import check_positive_int, check_texts
from waterdrum_hf.keys import check_watermark_id, check_watermark_ids, random_keys
from waterdrum_hf.statistics import null_p_value, separability_auroc
from waterdrum_hf.verification import Verifier

logger = logging.getLogger(__name__)

Pooling = Literal["tokens", "mean"]


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


@dataclass(frozen=True, repr=False)  # no repr: `owners` holds the owners' keys
class _Queries:
    """Samples grouped into queries: the text of each sample, its query, each query's owner."""

    samples: list[str]
    sample_query: np.ndarray
    owners: np.ndarray


def compute_waterdrum(
    predictions: Sequence[str] | Sequence[Sequence[str]],
    references: Sequence[int],
    watermark_tokenizer: Any = None,
    *,
    forget_ids: Sequence[int] | None = None,
    owner_names: Mapping[int, str] | None = None,
    query_ids: Sequence[Hashable] | None = None,
    pooling: Pooling = "tokens",
    k_p: int = 1,
    n_gram: int = 2,
    vocab_size: int | None = None,
    null_keys: int = 0,
    null_seed: int = 0,
    return_details: bool = False,
    return_scores: bool = False,
) -> dict[str, Any]:
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
        k_p, n_gram: the watermark's parameters (paper: 1 and 2).
        vocab_size: the watermark's vocabulary size N, if known (128000 for the published
            datasets); a tokenizer with another ``vocab_size`` raises instead of scoring ~0.
        null_keys: if > 0, also score every query under that many random non-owner keys: the
            values "no watermark" reads at. Each set then gets its null mean and spread, ``z``
            and a one-sided empirical p-value of "no watermark" (``(1 + #{null >= value}) /
            (1 + null_keys)``; at least ``1 / (1 + null_keys)``).
        null_seed: seed of those random keys.
        return_details: add ``per_owner`` (by name), per-sample ``scores``, per-query
            ``query_values`` and ``query_owners`` (names) and, with ``null_keys``, each
            query's mean value under the null keys (``query_null_means``: subtract it for a
            null-corrected value).
        return_scores: add only the per-sample ``scores`` (NaN where nothing was counted).

    Returns:
        Flat scalars: ``forget``/``retain`` (or ``overall``), ``separability_auroc`` (retain
        positive) when both sets have scored queries, ``num_queries``, ``num_scored`` and
        ``num_skipped`` (samples with / without a countable token), ``num_missing_forget_ids``
        when some forget id owns no query; with ``null_keys``, for each set ``<set>_null_mean``,
        ``<set>_null_std``, ``<set>_z``, ``<set>_p_value``. A value that cannot be computed is
        left out, never ``None``.
    """
    if watermark_tokenizer is None:
        raise ValueError(
            "`watermark_tokenizer` is required: pass the tokenizer of the model that "
            "watermarked the data (the paraphraser's), or its name/path; for the published "
            "WaterDrum datasets that is meta-llama/Llama-3.1-8B-Instruct's."
        )
    if pooling not in ("tokens", "mean"):
        raise ValueError(f"`pooling` must be 'tokens' or 'mean', got {pooling!r}.")
    check_positive_int(null_keys, "null_keys", minimum=0)
    queries = _group(predictions, references, query_ids)
    names = owner_display_names(queries.owners, owner_names)
    verifier = Verifier(watermark_tokenizer, k_p=k_p, n_gram=n_gram, vocab_size=vocab_size)
    token_ids = verifier.token_ids(queries.samples) if queries.samples else []
    sample_keys = queries.owners[queries.sample_query]
    sums, counts = verifier.token_sums(token_ids, sample_keys[:, None])
    values = _pool(sums, counts, queries, pooling)[:, 0]
    scored = ~np.isnan(values)

    result: dict[str, Any] = {}
    sets = _sets(queries.owners, forget_ids, result)
    for name, members in sets.items():
        if (members & scored).any():
            result[name] = float(values[members & scored].mean())
    if "forget" in sets:
        forget, retain = values[sets["forget"] & scored], values[sets["retain"] & scored]
        if len(forget) and len(retain):
            result["separability_auroc"] = separability_auroc(retain, forget)
    result["num_queries"] = len(queries.owners)
    result["num_scored"] = int((counts > 0).sum())
    result["num_skipped"] = int((counts == 0).sum())
    if result["num_skipped"]:
        logger.warning(
            "%d of %d samples have no countable token (too short in the watermarking "
            "vocabulary); they are left out and counted in num_skipped.",
            result["num_skipped"],
            len(counts),
        )

    null_values = None
    if null_keys:
        keys = random_keys(null_keys, exclude=np.unique(queries.owners).tolist(), seed=null_seed)
        null_sums, _ = verifier.token_sums(token_ids, np.broadcast_to(keys, (len(token_ids), null_keys)))
        null_values = _pool(null_sums, counts, queries, pooling)
        for name, members in sets.items():
            if name in result:
                result.update(_verdict(name, result[name], null_values[members & scored]))

    if return_details:
        result["per_owner"] = _per_owner(values, queries.owners, names, sets, null_values)
        result["query_values"] = values.tolist()
        result["query_owners"] = [names[int(owner)] for owner in queries.owners]
        if null_values is not None:
            result["query_null_means"] = null_values.mean(axis=1).tolist()
    if return_details or return_scores:
        with np.errstate(invalid="ignore", divide="ignore"):
            result["scores"] = np.where(counts > 0, sums[:, 0] / counts, np.nan).tolist()
    return result


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
            raise ValueError("`query_ids` groups flat predictions; nested predictions are grouped already.")
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
        owners = check_watermark_ids(references, len(predictions), "references")
        return _Queries(samples, np.array(sample_query, dtype=np.int64), owners)

    samples = check_texts(predictions, "predictions")
    sample_owners = check_watermark_ids(references, len(samples), "references")
    if query_ids is None:
        return _Queries(samples, np.arange(len(samples)), sample_owners)
    query_ids = list(query_ids)
    if len(query_ids) != len(samples):
        raise ValueError(
            f"`query_ids` has {len(query_ids)} entries but there are {len(samples)} predictions."
        )
    index: dict[Hashable, int] = {}
    sample_query = np.array([index.setdefault(q, len(index)) for q in query_ids], dtype=np.int64)
    owners = np.full(len(index), -1, dtype=np.int64)
    owners[sample_query] = sample_owners
    if (owners[sample_query] != sample_owners).any():
        raise ValueError("`query_ids` puts samples of different owners into one query.")
    return _Queries(samples, sample_query, owners)


def _pool(sums: np.ndarray, counts: np.ndarray, queries: _Queries, pooling: Pooling) -> np.ndarray:
    """Per-query values ``(num_queries, K)`` from per-sample token sums ``(num_samples, K)``."""
    num_queries = len(queries.owners)
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
    owners: np.ndarray, forget_ids: Sequence[int] | None, result: dict[str, Any]
) -> dict[str, np.ndarray]:
    """Query masks of ``overall`` or ``forget``/``retain``; counts unknown forget ids."""
    if forget_ids is None:
        return {"overall": np.ones(len(owners), dtype=bool)}
    if isinstance(forget_ids, (str, bytes)) or not hasattr(forget_ids, "__len__"):
        raise TypeError("`forget_ids` must be a list of watermark ids.")
    forget = np.unique(check_watermark_ids(list(forget_ids), len(forget_ids), "forget_ids"))
    missing = int((~np.isin(forget, owners)).sum())
    if missing:
        # Ids are secret keys: say how many, never which.
        warnings.warn(
            f"{missing} of {len(forget)} forget_ids own no query in `references`; they "
            "contribute nothing (counted in `num_missing_forget_ids`).",
            stacklevel=3,
        )
        result["num_missing_forget_ids"] = missing
    in_forget = np.isin(owners, forget)
    return {"forget": in_forget, "retain": ~in_forget}


def _verdict(prefix: str, value: float, null: np.ndarray) -> dict[str, float]:
    """Null mean/std of a set's value under random keys, its z-score and p-value."""
    key_means = null.mean(axis=0)  # the set's value under each null key
    mean, std = float(key_means.mean()), float(key_means.std())
    verdict = {f"{prefix}_null_mean": mean, f"{prefix}_null_std": std}
    if std > 0:
        verdict[f"{prefix}_z"] = (value - mean) / std
    verdict[f"{prefix}_p_value"] = null_p_value(value, key_means)
    return verdict


def owner_display_names(
    owners: Sequence[int] | np.ndarray, owner_names: Mapping[int, str] | None
) -> dict[int, str]:
    """Display name of every owner present; default ``owner-<n>`` by first appearance.

    Raises (with counts, never ids) when ``owner_names`` misses an owner or repeats a name.
    """
    present = list(dict.fromkeys(np.asarray(owners).tolist()))
    if owner_names is None:
        return {owner: f"owner-{n}" for n, owner in enumerate(present, start=1)}
    if not isinstance(owner_names, Mapping):
        raise TypeError("`owner_names` must map each watermark id to a display name (a dict).")
    names = {check_watermark_id(k, "owner_names key"): v for k, v in owner_names.items()}
    unnamed = sum(owner not in names for owner in present)
    if unnamed:
        raise ValueError(f"`owner_names` has no name for {unnamed} of {len(present)} owners.")
    chosen = [names[owner] for owner in present]
    if not all(isinstance(name, str) and name for name in chosen):
        raise TypeError("`owner_names` values must be non-empty strings.")
    if len(set(chosen)) != len(chosen):
        raise ValueError("`owner_names` gives two owners the same name.")
    return {owner: names[owner] for owner in present}


def _per_owner(
    values: np.ndarray,
    owners: np.ndarray,
    names: dict[int, str],
    sets: dict[str, np.ndarray],
    null_values: np.ndarray | None,
) -> dict[str, dict[str, Any]]:
    """Each owner's value (mean over its scored queries) and the standard deviation of its
    query values (with two or more), counts, set and verdict, by name."""
    details = {}
    for owner, name in names.items():
        mine = owners == owner
        scored = mine & ~np.isnan(values)
        entry: dict[str, Any] = {"num_queries": int(mine.sum()), "num_scored_queries": int(scored.sum())}
        if "forget" in sets:
            entry["forget"] = bool(sets["forget"][mine][0])
        if scored.any():
            entry["value"] = float(values[scored].mean())
            if scored.sum() > 1:
                entry["std"] = float(values[scored].std(ddof=1))
            if null_values is not None:
                verdict = _verdict("owner", entry["value"], null_values[scored])
                entry.update({k.removeprefix("owner_"): v for k, v in verdict.items()})
        details[name] = entry
    return details
