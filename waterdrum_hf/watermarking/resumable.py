"""``Dataset.map`` that survives being killed: contiguous shards, each cached on its own.

``Dataset.map`` in one process writes its cache file only when the whole map has finished, so a
watermarking run killed after hours keeps nothing. :func:`resumable_map` maps one contiguous
shard at a time; ``datasets`` caches each shard's result under a fingerprint of the dataset, the
shard's rows, the function and the map arguments, so a re-run loads the finished shards and
computes only the rest. A different function fingerprint (for :class:`WatermarkedDataset`:
another configuration, model, tokenizer, key or package version) computes everything anew.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datasets import Dataset, concatenate_datasets

from waterdrum_hf.utils.validation import check_positive_int

_REFUSED = {
    "cache_file_name": "each shard gets its own cache file next to the dataset's files",
    "keep_in_memory": "shards kept in memory are not cached, so nothing could resume",
    "num_proc": "shards run one after another; use Dataset.map(num_proc=...) for processes",
    "new_fingerprint": "each shard's fingerprint is derived from its rows and the function",
}


def resumable_map(
    dataset: Dataset,
    function: Callable[..., Any],
    *,
    shard_size: int = 256,
    desc: str = "Map",
    **map_kwargs: Any,
) -> Dataset:
    """``dataset.map(function, **map_kwargs)``, computed and cached ``shard_size`` rows at a time.

    Example (watermarking that resumes where a killed run stopped)::

        dataset = load_from_disk("corpus")   # backed by files, so results are cached
        wm = WatermarkedDataset(model, tokenizer, id_column="owner_id")
        watermarked = resumable_map(dataset, wm, shard_size=64, batched=True, batch_size=16)

    The result equals ``dataset.map(function, **map_kwargs)`` row for row (for a function that
    treats rows independently, as a batched map function must for ``num_proc`` too); the
    shards' cached tables are concatenated without copying. A killed run loses at most the
    shard in progress (``shard_size`` rows; keep it a multiple of ``batch_size``). Each shard
    shows ``datasets``' progress bar, labelled ``"{desc} (shard i/n)"``.

    Raises:
        TypeError: ``dataset`` is not a ``datasets.Dataset``.
        ValueError: the dataset is not backed by files (nothing could be cached), a bad
            ``shard_size``, or a map argument that would defeat the per-shard cache.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(
            f"`dataset` must be a datasets.Dataset, got {type(dataset).__name__} (an "
            "IterableDataset is mapped lazily and has no cache to resume from)."
        )
    if not dataset.cache_files:
        raise ValueError(
            "`dataset` lives in memory, so no shard result could be cached and resumed: save "
            "it with `dataset.save_to_disk(path)` and reload it with `load_from_disk(path)`."
        )
    check_positive_int(shard_size, "shard_size")
    for name, why in _REFUSED.items():
        if map_kwargs.get(name):
            raise ValueError(f"`{name}` is not supported by resumable_map: {why}.")
    starts = range(0, len(dataset), shard_size)
    shards = [
        dataset.select(range(start, min(start + shard_size, len(dataset)))).map(
            function, desc=f"{desc} (shard {i + 1}/{len(starts)})", **map_kwargs
        )
        for i, start in enumerate(starts)
    ]
    if not shards:  # no rows: map once, for the output columns
        return dataset.map(function, desc=desc, **map_kwargs)
    return concatenate_datasets(shards)
