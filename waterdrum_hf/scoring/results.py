"""The metric's results: typed inside, a flat dict of scalars at the edges.

:meth:`WaterDrumResult.to_dict` (what :func:`~waterdrum_hf.waterdrum_metrics` returns) is a dict
of scalars that ``Trainer.log``, ``evaluate.save`` and W&B take as it is, and
:meth:`WaterDrumResult.from_dict` reads one back. Per-owner and per-sample detail only on
request. Owners appear under display names, never under their watermark ids (secret keys).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any


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
        adjusted_p_value: ``p_value`` Holm-adjusted over the owner's family, the owners of its
            set (forget, retain, or all owners without ``forget_ids``) that have a p-value:
            "still detected" at ``adjusted_p_value <= alpha`` wrongly declares some owner of the
            family detected at most an ``alpha`` share of the time, whatever the dependence
            between owners (:func:`~waterdrum_hf.holm_adjusted`).
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
    adjusted_p_value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The entry of the flat result: the attributes that are not ``None``."""
        return present_fields(self)

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
    :func:`waterdrum_metrics`, ``evaluate``, ``Trainer.log`` and JSON take.

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
            flat.update(
                {f"{name}_{k}": v for k, v in present_fields(value).items() if k != "value"}
            )
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
                f"{unknown} are not keys of a WaterDrum result (see waterdrum_metrics)."
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


def present_fields(value: Any) -> dict[str, Any]:
    """A dataclass's attributes that are not ``None``, in field order."""
    return {
        f.name: getattr(value, f.name) for f in fields(value) if getattr(value, f.name) is not None
    }
