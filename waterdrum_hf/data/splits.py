"""Forget/retain views of a dataset with an owner column, and the paper's calibration sets.

:func:`partition_by_owner` is the one forget/retain rule (for datasets, lists and query sets
alike); :func:`first_rows_per_owner` the one way to take a small sample of every owner.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable
from typing import TypeVar

from datasets import Dataset, concatenate_datasets

from waterdrum_hf.utils.validation import check_positive_int

T = TypeVar("T")


def partition_by_owner(
    items: Iterable[T], owners: Iterable[Hashable], forget_owners: Collection[Hashable]
) -> tuple[list[T], list[T]]:
    """Return ``(forget, retain)``: the items whose owner is in ``forget_owners``, and all the
    others; ``owners`` holds each item's owner, and both sides keep the items' order."""
    forget: list[T] = []
    retain: list[T] = []
    for item, owner in zip(items, owners, strict=True):
        (forget if owner in forget_owners else retain).append(item)
    return forget, retain


def first_rows_per_owner(
    dataset: Dataset, max_rows: int | None, *, id_column: str = "owner_id"
) -> Dataset:
    """The first ``max_rows`` rows of each owner, in the dataset's order (``None``: all rows)."""
    if max_rows is None:
        return dataset
    check_positive_int(max_rows, "max_rows")
    seen: dict[Hashable, int] = {}
    kept = []
    for row, owner in enumerate(dataset[id_column]):
        seen[owner] = seen.get(owner, 0) + 1
        if seen[owner] <= max_rows:
            kept.append(row)
    return dataset.select(kept)


def split_by_owner(
    dataset: Dataset, forget_ids: int | Iterable[int], *, id_column: str = "owner_id"
) -> tuple[Dataset, Dataset]:
    """Return ``(forget, retain)``: the rows owned by ``forget_ids`` and all the others.

    Row order is kept on both sides. Every forget id must own at least one row, so a typo
    cannot silently give an empty forget set.
    """
    owners, ids = _owners_and_forget_ids(dataset, forget_ids, id_column)
    forget_rows, retain_rows = partition_by_owner(range(len(owners)), owners, ids)
    return dataset.select(forget_rows), dataset.select(retain_rows)


def mark_forget(
    dataset: Dataset,
    forget_ids: int | Iterable[int],
    *,
    id_column: str = "owner_id",
    forget_column: str = "forget",
) -> Dataset:
    """``dataset`` with a boolean ``forget_column``: True on the rows ``forget_ids`` own.

    The one-dataset form the unlearning trainers and ``waterdrum unlearn`` take (TRL-style:
    one ``train_dataset``); the same checks as :func:`split_by_owner`.
    """
    owners, ids = _owners_and_forget_ids(dataset, forget_ids, id_column)
    if forget_column in dataset.column_names:
        raise ValueError(f"the dataset already has a {forget_column!r} column")
    return dataset.add_column(forget_column, [owner in ids for owner in owners])


def _owners_and_forget_ids(
    dataset: Dataset, forget_ids: int | Iterable[int], id_column: str
) -> tuple[list[Hashable], set[int]]:
    """Each row's owner (its ``id_column``), and the forget ids as a set, each owning a row
    (errors never show an id)."""
    if id_column not in dataset.column_names:
        raise ValueError(
            f"id_column {id_column!r} is not a column of the dataset (columns: "
            f"{dataset.column_names}); add one, e.g. with waterdrum_hf.data.load_waterdrum_ax"
        )
    owners = list(dataset[id_column])
    ids = [forget_ids] if isinstance(forget_ids, int) else list(forget_ids)
    if not ids or any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
        kinds = ", ".join(sorted({type(i).__name__ for i in ids})) or "nothing"
        raise TypeError(  # types only: the ids are secret keys
            f"forget_ids must be an int or a non-empty list of ints, got a "
            f"{type(forget_ids).__name__} holding {kinds}"
        )
    missing = sorted(set(ids) - set(owners))
    if missing:
        # Ids are watermark keys (secrets): say how many, never which.
        raise ValueError(
            f"{len(missing)} of {len(set(ids))} forget_ids own no row of the dataset "
            f"({len(set(owners))} owners present); check the ids and `id_column`."
        )
    return owners, set(ids)


def calibration_train_set(forget: Dataset, retain: Dataset, fraction: float) -> Dataset:
    """Return the retain set followed by the first ``fraction`` of the forget set.

    The paper's calibration (desideratum D2) retrains on these sets for fractions 0, 0.1, ...,
    1 and expects the forget set's WaterDrum value to grow in proportion. The forget set's
    first ``round(fraction * len(forget))`` rows are taken, so the exact share used is that
    count divided by ``len(forget)``.
    """
    if (
        isinstance(fraction, bool)
        or not isinstance(fraction, (int, float))
        or not 0 <= fraction <= 1
    ):
        raise ValueError(f"fraction must be a number in [0, 1], got {fraction!r}")
    if forget.features != retain.features:
        raise ValueError(
            f"forget and retain must have the same features, got {forget.features} and "
            f"{retain.features}"
        )
    kept = round(fraction * len(forget))
    return concatenate_datasets([retain, forget.select(range(kept))])
