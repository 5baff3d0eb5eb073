"""Loaders for the published WaterDrum benchmarks, with the watermark owner of every row.

The Hub datasets carry no owner column: ownership follows from each split's layout. The
loaders call the ordinary ``datasets.load_dataset(path, config, split=...)`` (so ``path`` may
be a Hub id or a local folder laid out like the Hub repository: a README whose ``configs:``
YAML names the parquet files) and add an int ``owner_id`` column holding the watermark id.
A split's rows are taken to be equal consecutive blocks, one per owner, as published.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from datasets import Dataset, load_dataset

_Rule = Callable[[int], list[int]]

WATERDRUM_AX = "Glow-AI/WaterDrum-Ax"
"""Hub id of the WaterDrum-Ax benchmark (arXiv abstracts, 20 owners)."""
WATERDRUM_TOFU = "Glow-AI/WaterDrum-TOFU"
"""Hub id of the WaterDrum-TOFU benchmark (TOFU question/answer pairs, 2 owners)."""

_AX_OWNERS = 20


def load_waterdrum_ax(
    config: str = "forget_01",
    split: str = "full",
    *,
    path: str = WATERDRUM_AX,
    **load_dataset_kwargs: Any,
) -> Dataset:
    """Load one split of WaterDrum-Ax (arXiv abstracts, 20 owners) with an ``owner_id`` column.

    Layout (c: confirmed by the dataset card or the paper; i: inferred from the authors'
    scripts). Owner i is arXiv category i (c), 400 abstracts each, in blocks of 400, so in
    ``full`` owner = row // 400 (c).

    - ``forget_01``/``forget_03``/``forget_05`` and their ``unwatermarked_`` twins (c), splits
      ``full`` (owners 0-19), ``retain`` (the first 20-n owners), ``forget`` (the last n
      owners) (c), ``exact_duplicate`` and ``semantic_duplicate``: copies / paraphrases of the
      forget owners' data, each block owned by the *next* owner (f + 1) mod 20 (c: paper,
      appendix on watermarking the datasets; block order i).
    - ``full``, splits ``watermarked``, ``unwatermarked``: owners 0-19;
      ``*_duplicate``, ``*_paraphrased``: block f owned by (f + 1) mod 20 (splits c, owners i).
    - ``test``, split ``full``: ~100 held-out abstracts per category (c); ``owner_id`` is the
      category (i), for membership-inference baselines: these rows were never trained on.
    - ``threat_model``, splits ``watermarked_intraclass``, ``unwatermarked_intraclass`` (400
      each): abstracts of the forget owner's category not in its data; owner 19 (i).
    - ``eval_knowmem`` (question, answer), any split: one QA pair per abstract in ``full``
      order, owners 0-19 (i).

    Args:
        config: dataset configuration (subset) name.
        split: split name, whole (slice after loading, e.g. with ``Dataset.select``).
        path: Hub id or local folder of the dataset repository.
        **load_dataset_kwargs: passed to ``datasets.load_dataset`` (``revision``,
            ``cache_dir``, ...).
    """
    return _load(path, config, split, _AX_RULES, _ax_columns, load_dataset_kwargs)


def load_waterdrum_tofu(
    config: str = "forget_10",
    split: str = "full",
    *,
    path: str = WATERDRUM_TOFU,
    **load_dataset_kwargs: Any,
) -> Dataset:
    """Load one split of WaterDrum-TOFU (question/answer pairs, 2 owners) with ``owner_id``.

    Layout (c: confirmed by the dataset card or the paper; i: inferred). Configs
    ``forget_01``/``forget_05``/``forget_10`` and ``unwatermarked_`` twins, splits ``full``,
    ``retain``, ``forget`` (c); ``forget_10`` and ``unwatermarked_forget_10`` also
    ``exact_duplicate`` and ``semantic_duplicate`` (c). The retain set is owner 0 and the
    forget set owner 1 (c); duplicates of the forget set are owned by 0 (c). ``full`` is the
    retain rows followed by the forget rows (c for ``forget_10``: 3600 + 400; i for the others:
    the last 1 % / 5 % of rows). Columns are ``question`` and ``answer`` (c); some third-party
    code reads ``answer_split``, kept when present.

    Args:
        config: dataset configuration (subset) name.
        split: split name, whole (slice after loading, e.g. with ``Dataset.select``).
        path: Hub id or local folder of the dataset repository.
        **load_dataset_kwargs: passed to ``datasets.load_dataset``.
    """
    return _load(path, config, split, _TOFU_RULES, _tofu_columns, load_dataset_kwargs)


def _blocks(owners: Sequence[int]) -> _Rule:
    """Rows in equal consecutive blocks, block b owned by ``owners[b]``."""

    def rule(num_rows: int) -> list[int]:
        if num_rows % len(owners):
            raise ValueError(
                f"expected {len(owners)} equal blocks of rows (one per owner), got {num_rows} "
                "rows; the split's layout differs from the published one"
            )
        size = num_rows // len(owners)
        return [owners[row // size] for row in range(num_rows)]

    return rule


def _constant(owner: int) -> _Rule:
    return lambda num_rows: [owner] * num_rows


def _retain_then_forget(percent: int) -> _Rule:
    """TOFU ``full``: owner 0's rows, then the last ``percent`` % of rows owned by 1."""

    def rule(num_rows: int) -> list[int]:
        forget = round(num_rows * percent / 100)
        return [0] * (num_rows - forget) + [1] * forget

    return rule


def _next_owner(owners: range) -> list[int]:
    return [(owner + 1) % _AX_OWNERS for owner in owners]


def _ax_rules() -> dict[str, dict[str | None, _Rule]]:
    everyone = range(_AX_OWNERS)
    rules: dict[str, dict[str | None, _Rule]] = {}
    for forgotten in (1, 3, 5):
        retain, forget = range(_AX_OWNERS - forgotten), range(_AX_OWNERS - forgotten, _AX_OWNERS)
        splits: dict[str | None, _Rule] = {
            "full": _blocks(everyone),
            "retain": _blocks(retain),
            "forget": _blocks(forget),
            "exact_duplicate": _blocks(_next_owner(forget)),
            "semantic_duplicate": _blocks(_next_owner(forget)),
        }
        rules[f"forget_{forgotten:02d}"] = splits
        rules[f"unwatermarked_forget_{forgotten:02d}"] = splits
    rules["full"] = {
        f"{kind}{suffix}": _blocks(_next_owner(everyone) if suffix else everyone)
        for kind in ("watermarked", "unwatermarked")
        for suffix in ("", "_duplicate", "_paraphrased")
    }
    rules["test"] = {"full": _blocks(everyone)}
    rules["threat_model"] = {
        "watermarked_intraclass": _constant(_AX_OWNERS - 1),
        "unwatermarked_intraclass": _constant(_AX_OWNERS - 1),
    }
    rules["eval_knowmem"] = {None: _blocks(everyone)}
    return rules


def _tofu_rules() -> dict[str, dict[str | None, _Rule]]:
    rules: dict[str, dict[str | None, _Rule]] = {}
    for percent in (1, 5, 10):
        splits: dict[str | None, _Rule] = {
            "full": _retain_then_forget(percent),
            "retain": _constant(0),
            "forget": _constant(1),
        }
        if percent == 10:
            splits |= {"exact_duplicate": _constant(0), "semantic_duplicate": _constant(0)}
        rules[f"forget_{percent:02d}"] = splits
        rules[f"unwatermarked_forget_{percent:02d}"] = splits
    return rules


def _ax_columns(config: str) -> list[tuple[str, ...]]:
    return [("question",), ("answer",)] if config == "eval_knowmem" else [("text",)]


def _tofu_columns(config: str) -> list[tuple[str, ...]]:
    return [("question",), ("answer", "answer_split")]


_AX_RULES = _ax_rules()
_TOFU_RULES = _tofu_rules()


def _load(
    path: str,
    config: str,
    split: str,
    rules: dict[str, dict[str | None, _Rule]],
    columns: Callable[[str], list[tuple[str, ...]]],
    load_dataset_kwargs: dict[str, Any],
) -> Dataset:
    if config not in rules:
        raise ValueError(f"unknown config {config!r}; valid configs: {sorted(rules)}")
    splits = rules[config]
    if not isinstance(split, str) or "[" in split:
        raise ValueError(
            f"split must be a whole split's name (owners follow row positions), got {split!r}; "
            "slice the returned dataset instead"
        )
    if split not in splits and None not in splits:
        raise ValueError(
            f"unknown split {split!r} for config {config!r}; valid splits: "
            f"{sorted(s for s in splits if s is not None)}"
        )
    dataset = load_dataset(path, config, split=split, **load_dataset_kwargs)
    for options in columns(config):
        _check_text_column(dataset, options, f"{config}/{split}")
    owners = (splits[split] if split in splits else splits[None])(len(dataset))
    return _with_owner_ids(dataset, owners, f"{config}/{split}")


def _check_text_column(dataset: Dataset, options: tuple[str, ...], name: str) -> None:
    """Require one of ``options`` as a string column (the first present one is checked)."""
    present = [column for column in options if column in dataset.column_names]
    if not present:
        raise ValueError(
            f"{name} has no {' or '.join(map(repr, options))} column (columns: "
            f"{dataset.column_names}); is this a WaterDrum dataset?"
        )
    dtype = getattr(dataset.features[present[0]], "dtype", None)
    if dtype not in ("string", "large_string"):
        raise TypeError(f"{name}: column {present[0]!r} must hold strings, has {dtype or 'nested'}")


def _with_owner_ids(dataset: Dataset, owners: list[int], name: str) -> Dataset:
    """Add ``owner_id``; an existing column is kept, with a warning if it disagrees."""
    if "owner_id" in dataset.column_names:
        theirs = list(dataset["owner_id"])
        if theirs != owners:
            differing = sum(a != b for a, b in zip(theirs, owners, strict=True))
            warnings.warn(
                f"{name} already has an owner_id column that differs from the published layout "
                f"in {differing} of {len(owners)} rows; keeping the existing column",
                stacklevel=4,
            )
        return dataset
    return dataset.add_column("owner_id", owners)
