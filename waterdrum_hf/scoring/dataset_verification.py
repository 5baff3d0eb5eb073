"""Watermark scores for a whole ``datasets`` dataset: a score column added by ``Dataset.map``.

:func:`verify_dataset` scores every row's text under the key in its id column, batch by batch,
so memory stays flat in the number of rows (the result is written to an Arrow cache file next
to the dataset's own files), a repeated call is served from that cache, ``num_proc`` spreads
contiguous shards over processes (each shard is cached on its own, so a killed run resumes from
the shards it finished), and an ``IterableDataset`` gets the column lazily, as it is iterated.

The cache fingerprint covers the watermarking tokenizer's content, the scheme and its settings
(``k_p``, ``n_gram``...), the column names and the package version, never a key: keys are only
read from the data.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow.compute as pc
from datasets import Dataset, DatasetDict, IterableDataset, IterableDatasetDict

from waterdrum_hf._version import library_version
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.keys import check_watermark_id
from waterdrum_hf.scoring.verification import SCORE_COLUMN, Verifier, scores_from_sums
from waterdrum_hf.utils.fingerprint import (
    json_digest,
    register_with_datasets_hasher,
    tokenizer_identity,
)
from waterdrum_hf.utils.validation import check_positive_int

logger = logging.getLogger(__name__)


class DatasetScorer:
    """The batched map function of :func:`verify_dataset`: scores a batch's texts under the keys
    in its id column. It holds no key; ``datasets`` hashes it by :attr:`fingerprint`.

    Counts what it scored in this process (``num_texts``, ``num_unscored``); with
    ``log_unscored`` it warns the first time a text has nothing to count, then logs running
    totals at DEBUG (what an ``IterableDataset``, with no end to report at, gets).
    """

    def __init__(
        self,
        verifier: Verifier,
        *,
        text_column: str,
        id_column: str,
        score_column: str,
        log_unscored: bool,
    ) -> None:
        self.verifier = verifier
        self.text_column = text_column
        self.id_column = id_column
        self.score_column = score_column
        self.log_unscored = log_unscored
        self.num_texts = 0
        self.num_unscored = 0
        self._fingerprint: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_with_datasets_hasher(cls)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.verifier!r}, text_column={self.text_column!r}, "
            f"id_column={self.id_column!r}, score_column={self.score_column!r})"
        )

    @property
    def fingerprint(self) -> str:
        """Digest of everything that decides the scores (and the version that computed them)."""
        if self._fingerprint is None:
            payload = {
                "class": type(self).__qualname__,
                "version": library_version(),
                "tokenizer": tokenizer_identity(self.verifier.tokenizer),
                **self.verifier.scheme.settings(),
                "vocab_size": self.verifier.vocab_size,
                "columns": [self.text_column, self.id_column, self.score_column],
            }
            self._fingerprint = json_digest(payload)
        return self._fingerprint

    def __call__(self, batch: dict[str, list[Any]], indices: Sequence[int]) -> dict[str, Any]:
        """Score one batch (``map(..., batched=True, with_indices=True)`` calls this)."""
        for column, argument in ((self.text_column, "text_column"), (self.id_column, "id_column")):
            if column not in batch:
                raise ValueError(
                    f"Column {column!r} not found; the dataset has {sorted(batch)}. Pass "
                    f"`{argument}=` naming the column."
                )
        texts = self._texts(batch[self.text_column], indices)
        keys = self._keys(batch[self.id_column], indices)
        token_ids = self.verifier.token_ids(texts) if texts else []
        sums, counts = self.verifier.token_sums(token_ids, keys[:, None])
        scores = scores_from_sums(sums, counts)[:, 0]
        unscored = int((counts == 0).sum())
        self.num_texts += len(texts)
        self.num_unscored += unscored
        if unscored and self.log_unscored:
            first = self.num_unscored == unscored
            (logger.warning if first else logger.debug)(
                "%d of %d texts in this batch have no countable token; their %s is NaN "
                "(%d of %d so far).",
                unscored,
                len(texts),
                self.score_column,
                self.num_unscored,
                self.num_texts,
            )
        return {self.score_column: scores}

    def _texts(self, texts: Sequence[Any], indices: Sequence[int]) -> list[str]:
        for text, row in zip(texts, indices, strict=True):
            if not isinstance(text, str):
                raise TypeError(
                    f"`{self.text_column}` of row {row} is a {type(text).__name__}, not a string: "
                    "fill or drop such rows first, e.g. "
                    f"`dataset.filter(lambda r: isinstance(r[{self.text_column!r}], str))`."
                )
        return list(texts)

    def _keys(self, ids: Sequence[Any], indices: Sequence[int]) -> np.ndarray:
        """The batch's ids as int64, each checked: the first bad id raises naming its row."""
        checked = [
            check_watermark_id(value, f"{self.id_column}[{row}]")
            for value, row in zip(ids, indices, strict=True)
        ]
        return np.array(checked, dtype=np.int64)


register_with_datasets_hasher(DatasetScorer)


def verify_dataset(
    dataset: Dataset | IterableDataset,
    *,
    text_column: str,
    id_column: str,
    watermark_tokenizer: Any,
    config: WaterDrumConfig | None = None,
    num_proc: int | None = None,
    batch_size: int = 1000,
    score_column: str = SCORE_COLUMN,
) -> Dataset | IterableDataset:
    """Add a column of Waterfall scores: each row's text verified under the key in its id column.

    Scores equal :func:`waterdrum_hf.verify_texts` row by row (NaN for a text with no countable
    token: such rows are counted and the count logged). Every other column passes through.

    Args:
        dataset: a ``Dataset`` (mapped now, cached next to its files, ``num_proc`` shards) or an
            ``IterableDataset`` (mapped lazily as it is iterated; ``num_proc`` must be None).
        text_column: the column of texts to verify (generated text, prompt removed).
        id_column: the column of watermark ids (0..2**32-1), one per row.
        watermark_tokenizer: tokenizer of the model that watermarked the data, or a name/path.
        config: the scoring configuration; its ``scheme`` (with ``k_p``, ``n_gram``...) decides
            the scores. Rows are not pooled and have no null: the pooling and the analytic null
            (the defaults) are not used, and an empirical null or an interval, work asked for
            that rows cannot use, is refused (they belong to :func:`waterdrum_hf.waterdrum_metrics`).
        num_proc: processes for ``Dataset.map`` (``None``: this process only).
        batch_size: rows per call of the scorer; larger batches share more permutations.
        score_column: name of the new column; it must not exist yet.

    Raises:
        TypeError: not a single ``Dataset``/``IterableDataset``; a text that is not a string
            or an id that is not an integer (the message names the row, never the id).
        ValueError: a missing column, an existing ``score_column``, an id outside
            0..2**32-1, bad ``batch_size``/``num_proc``, or a config with an empirical null or
            an interval.
    """
    config = config or WaterDrumConfig()
    if (config.null is not None and config.null.method == "empirical") or config.interval:
        raise ValueError(
            "verify_dataset scores rows one by one: an empirical null or an interval applies "
            "to a set's value (waterdrum_metrics). Pass a config without them, e.g. "
            "WaterDrumConfig(scheme=config.scheme)."
        )
    if isinstance(dataset, (DatasetDict, IterableDatasetDict)):
        raise TypeError(
            "`dataset` is a dict of splits: verify one split at a time, e.g. "
            "`verify_dataset(dataset['train'], ...)`."
        )
    if not isinstance(dataset, (Dataset, IterableDataset)):
        raise TypeError(
            f"`dataset` must be a datasets.Dataset or IterableDataset, got {type(dataset).__name__}"
            "; for a list of texts use `waterdrum_hf.verify_texts`."
        )
    check_positive_int(batch_size, "batch_size")
    iterable = isinstance(dataset, IterableDataset)
    if num_proc is not None:
        check_positive_int(num_proc, "num_proc")
        if iterable:
            raise ValueError(
                "`num_proc` applies to a Dataset; an IterableDataset is scored lazily by the "
                "process that iterates it. Pass num_proc=None."
            )
    _check_columns(dataset.column_names, text_column, id_column, score_column)
    scorer = DatasetScorer(
        Verifier(watermark_tokenizer, config.scheme, show_progress=False),
        text_column=text_column,
        id_column=id_column,
        score_column=score_column,
        log_unscored=iterable,
    )
    kwargs = {"batched": True, "batch_size": batch_size, "with_indices": True}
    if iterable:
        return dataset.map(scorer, **kwargs)
    scored = dataset.map(scorer, num_proc=num_proc, desc="Verifying watermarks", **kwargs)
    _report_unscored(scored, score_column)
    return scored


def _check_columns(
    columns: list[str] | None, text_column: str, id_column: str, score_column: str
) -> None:
    """Names must be strings; checked against ``columns`` when known (an IterableDataset may
    not know them before iterating; its batches are checked then)."""
    for name, value in (
        ("text_column", text_column),
        ("id_column", id_column),
        ("score_column", score_column),
    ):
        if not isinstance(value, str) or not value:
            raise TypeError(f"`{name}` must be a non-empty column name (a string).")
    if columns is None:
        return
    for name, value in (("text_column", text_column), ("id_column", id_column)):
        if value not in columns:
            raise ValueError(
                f"`{name}`={value!r} is not a column; the dataset has {columns}. Pass the name "
                f"of the column with the {'texts' if name == 'text_column' else 'watermark ids'}."
            )
    if score_column in columns:
        raise ValueError(
            f"The dataset already has a column {score_column!r} (verified before?): pass another "
            "`score_column=` or remove it first, so that nothing is overwritten."
        )


def _report_unscored(scored: Dataset, score_column: str) -> None:
    """Count the NaN scores of the whole result (cached or not) and log it once."""
    unscored = pc.sum(pc.is_nan(scored.with_format("arrow")[score_column])).as_py() or 0
    if unscored:
        logger.warning(
            "%d of %d texts have no countable token (fewer than n_gram tokens of the "
            "watermarking vocabulary); their %s is NaN.",
            unscored,
            len(scored),
            score_column,
        )
    else:
        logger.info("Scored %d texts; every one had tokens to count.", len(scored))
