"""The metric's inputs: checked once, and laid out as samples, their queries and owners.

Predictions come as one string per query, a list of samples per query (what
:func:`waterdrum_hf.generate` returns), or flat samples grouped by ``query_ids``; references give
each query's owner (a watermark id). Which owners form the forget set, and the owners' display
names, are settled here too: ids are secret keys and never appear in a message or a result.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from waterdrum_hf.keys import check_watermark_id, check_watermark_ids
from waterdrum_hf.utils.user_warnings import warn_user
from waterdrum_hf.utils.validation import check_texts

logger = logging.getLogger(__name__)


@dataclass(frozen=True, repr=False)  # no repr: `watermark_ids` holds the owners' secret keys
class Queries:
    """Samples grouped into queries: the text of each sample, its query, each query's owner."""

    samples: list[str]
    sample_query: np.ndarray
    watermark_ids: np.ndarray

    @property
    def sample_ids(self) -> np.ndarray:
        """Each sample's owner."""
        owners: np.ndarray = self.watermark_ids[self.sample_query]
        return owners


def group_queries(
    predictions: Sequence[Any], references: Sequence[int], query_ids: Sequence[Hashable] | None
) -> Queries:
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
        samples: list[str] = []
        query_of_sample: list[int] = []
        for i, per_query in enumerate(predictions):
            if isinstance(per_query, str) or not isinstance(per_query, Sequence):
                raise TypeError(
                    f"`predictions[{i}]` is a {type(per_query).__name__}: pass either strings or "
                    "lists of strings, not a mix."
                )
            samples += check_texts(per_query, f"predictions[{i}]") if per_query else []
            query_of_sample += [i] * len(per_query)
        watermark_ids = check_watermark_ids(references, len(predictions), "references")
        return Queries(samples, np.array(query_of_sample, dtype=np.int64), watermark_ids)

    samples = check_texts(predictions, "predictions")
    sample_ids = check_watermark_ids(references, len(samples), "references")
    if query_ids is None:
        return Queries(samples, np.arange(len(samples)), sample_ids)
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
    return Queries(samples, sample_query, watermark_ids)


def warn_skipped(samples: Sequence[str], counts: np.ndarray, min_tokens: str) -> None:
    """Say how many samples could not be scored, why, and what to do about it (``min_tokens``:
    what a text needs, as the scheme's :meth:`~waterdrum_hf.WatermarkScheme.min_tokens` says)."""
    skipped = np.flatnonzero(counts == 0)
    empty = sum(not samples[i].strip() for i in skipped.tolist())
    causes = []
    if empty:
        causes.append(
            f"{empty} are empty: the model ended at once, or (with queries cut under "
            "max_fraction=None) the query was the whole text and left nothing to write"
        )
    if len(skipped) > empty:
        causes.append(
            f"{len(skipped) - empty} have fewer than {min_tokens} of the watermarking "
            "vocabulary (the model stopped almost at once, or wrote tokens outside that "
            "vocabulary)"
        )
    logger.warning(
        "%d of %d samples have no countable token and are left out (counted in num_skipped): %s.",
        len(skipped),
        len(counts),
        "; ".join(causes),
    )


def set_masks(
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
        warn_user(
            f"{missing} of {len(forget)} forget_ids own no query in `references`; they "
            "contribute nothing (counted in `num_missing_forget_ids`)."
        )
    in_forget = np.isin(watermark_ids, forget)
    return {"forget": in_forget, "retain": ~in_forget}, missing


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
