"""Training data of the unlearning trainers: forget/retain pairs and the collator they build."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from datasets import Dataset, IterableDataset
from transformers import PreTrainedTokenizerBase

from waterdrum_hf.data import IGNORE_INDEX, ForgetRetainCollator, ForgetRetainDataset
from waterdrum_hf.data.formats import example_format, has_prompt, unknown_format
from waterdrum_hf.utils.torch_plumbing import causal_lm_batch


def build_pairs(
    train_dataset: Any,
    forget_dataset: Any,
    retain_dataset: Any,
    *,
    seed: int,
    retain_needed: bool,
    alternative_answers: Sequence[str] | None = None,
    forget_column: str = "forget",
    **columns: str,
) -> Any:
    """The training dataset: forget/retain pairs as given, or paired here.

    ``train_dataset`` holds pairs, or rows of one dataset (any format of
    :mod:`waterdrum_hf.data.formats`) marked by the boolean ``forget_column``; else the two sets
    come as ``forget_dataset`` and ``retain_dataset``. Without a retain term
    (``retain_needed=False``) the retain set may be left out; the pairs then repeat the forget
    set on their (unused) retain side. With ``alternative_answers`` (refusals for the IDK
    methods) the forget rows need a prompt and every pair gets one. ``columns`` are the
    config's ``text_column``, ``question_column`` and ``answer_column``. Rows the collator could
    not read are refused here, not at the first batch.
    """
    if train_dataset is not None:
        if forget_dataset is not None or retain_dataset is not None:
            raise TypeError(
                "pass either train_dataset (forget/retain pairs, or rows with a boolean forget "
                "column) or forget_dataset and retain_dataset, not both"
            )
        if _holds_pairs(train_dataset):
            return _checked_pairs(train_dataset, alternative_answers, columns)
        forget_dataset, retain_dataset = split_on_forget_column(
            train_dataset, forget_column, retain_needed=retain_needed
        )
    if forget_dataset is None:
        raise ValueError(
            "no forget set: pass train_dataset= with a boolean 'forget' column, or "
            "forget_dataset= (and retain_dataset=), or train_dataset=ForgetRetainDataset(...)"
        )
    if retain_dataset is None:
        if retain_needed:
            raise ValueError(
                "retain_dataset is required: this method trains a retain term (set "
                "retain_weight=0 to train on the forget set only, where the method allows it)"
            )
        retain_dataset = forget_dataset
    check_rows(forget_dataset, "forget", qa_answers=alternative_answers, **columns)
    if retain_dataset is not forget_dataset:
        check_rows(retain_dataset, "retain", **columns)
    return ForgetRetainDataset(
        forget_dataset, retain_dataset, seed=seed, alternative_answers=alternative_answers
    )


def _checked_pairs(
    pairs: Any, alternative_answers: Sequence[str] | None, columns: Mapping[str, str]
) -> Any:
    """Pairs given as the training dataset, their rows checked; refusal answers where the
    method needs them."""
    if isinstance(pairs, ForgetRetainDataset):
        if alternative_answers is not None and pairs.alternative_answers is None:
            raise ValueError(
                "this method needs refusal answers in its pairs: build train_dataset with "
                "ForgetRetainDataset(forget, retain, alternative_answers=REFUSAL_ANSWERS), or pass "
                "the rows and let the trainer pair them"
            )
        check_rows(pairs.forget, "forget", qa_answers=alternative_answers, **columns)
        check_rows(pairs.retain, "retain", **columns)
    return pairs


def split_on_forget_column(
    dataset: Any, column: str, *, retain_needed: bool
) -> tuple[Any, Any | None]:
    """``(forget rows, retain rows)`` of one dataset marked by the boolean ``column``; the retain
    rows are ``None`` when there are none and ``retain_needed`` is false."""
    names = _row_columns(dataset)
    if not names or not isinstance(dataset, Sequence | Dataset):
        raise TypeError(
            f"train_dataset must be a datasets.Dataset or a list of rows (not streamed) to be "
            f"split on its {column!r} column, got {type(dataset).__name__}"
        )
    if column not in names[0]:
        raise ValueError(
            f"train_dataset has no {column!r} column (its columns: {sorted(names[0])}): mark each "
            f"row True (forget) or False (retain) in a boolean {column!r} column (or set "
            "forget_column=), or pass forget_dataset= and retain_dataset="
        )
    marks = _boolean_column(dataset, column)
    forget = [i for i, mark in enumerate(marks) if mark]
    retain = [i for i, mark in enumerate(marks) if not mark]
    if not forget:
        raise ValueError(
            f"train_dataset has no forget rows: its {column!r} column is False in all "
            f"{len(marks)} rows; mark the rows to unlearn True"
        )
    if not retain and retain_needed:
        raise ValueError(
            f"train_dataset has no retain rows ({column!r} is True in all {len(marks)} rows), but "
            "this method trains a retain term: add rows marked False (or set retain_weight=0, "
            "where the method allows it)"
        )
    return _select(dataset, forget), (_select(dataset, retain) if retain else None)


def config_pairs(
    rows: Any, forget: Any, retain: Any, args: Any, alternative_answers: Sequence[str] | None
) -> Any:
    """:func:`build_pairs` under an ``UnlearningConfig``: its data seed (``seed`` when unset),
    its columns, and a retain set needed only where it trains a retain term."""
    return build_pairs(
        rows,
        forget,
        retain,
        seed=args.seed if args.data_seed is None else args.data_seed,
        retain_needed=args.retain_weight > 0,
        alternative_answers=alternative_answers,
        forget_column=args.forget_column,
        **_columns(args),
    )


def default_collator(processing_class: Any, args: Any) -> UnlearningCollator:
    """The collator of a trainer given none: ``processing_class`` tokenizes with the config's
    columns and ``max_length``."""
    return UnlearningCollator(processing_class, max_length=args.max_length, **_columns(args))


def _columns(args: Any) -> dict[str, str]:
    """The config's ``text_column``, ``question_column`` and ``answer_column``."""
    return {
        name: getattr(args, name) for name in ("text_column", "question_column", "answer_column")
    }


def pair_eval_dataset(
    eval_dataset: Any, pair: Callable[[Any], Any], forget_column: str = "forget"
) -> Any:
    """``eval_dataset`` (or each dataset of a dict of them) with rows marked by
    ``forget_column`` turned into pairs by ``pair``; pairs and tokenized rows stay as they are."""
    if isinstance(eval_dataset, Mapping):
        return {name: pair_eval_dataset(d, pair, forget_column) for name, d in eval_dataset.items()}
    names = _row_columns(eval_dataset) if not _holds_pairs(eval_dataset) else []
    return pair(eval_dataset) if names and forget_column in names[0] else eval_dataset


def row_counts(pairs: Any) -> tuple[int | None, int | None]:
    """``(forget rows, retain rows)`` behind the pairs; ``None`` where the pairs do not say. A
    retain side that repeats the forget set (no retain term) counts 0 rows."""
    if not isinstance(pairs, ForgetRetainDataset):
        return None, None
    return len(pairs.forget), 0 if pairs.retain is pairs.forget else len(pairs.retain)


def _boolean_column(dataset: Any, column: str) -> list[bool]:
    if isinstance(dataset, Dataset):
        feature = dataset.features[column]
        if getattr(feature, "dtype", None) != "bool":
            raise ValueError(
                f"column {column!r} must be boolean (True: forget row, False: retain row), but "
                f"its type is {feature}; e.g. dataset.cast_column({column!r}, Value('bool'))"
            )
        return list(dataset[column])
    marks = [row.get(column) for row in dataset]
    for mark in marks:
        if not isinstance(mark, (bool, np.bool_)):
            raise ValueError(
                f"column {column!r} must be boolean (True: forget row, False: retain row), got "
                f"{mark!r} ({type(mark).__name__})"
            )
    return [bool(m) for m in marks]


def _select(dataset: Any, indices: list[int]) -> Any:
    if isinstance(dataset, Dataset):
        return dataset.select(indices)
    return [dataset[i] for i in indices]


class UnlearningCollator:
    """Collate forget/retain pairs with :class:`ForgetRetainCollator`, and tokenized rows plainly.

    Pairs become ``{"forget": batch, "retain": batch[, "alternative": batch]}``; a pair whose
    side has no labelled token left (its prompt fills ``max_length``) raises instead of adding a
    silent zero to the loss. Rows that are already tokenized (an ordinary causal-LM evaluation
    set with ``input_ids`` and optionally ``labels`` and ``attention_mask``) are right-padded
    the same way, every real token labelled unless the rows bring labels, so
    ``Trainer.evaluate`` works on them too.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, **collator_kwargs: Any) -> None:
        self.pairs = ForgetRetainCollator(tokenizer, **collator_kwargs)

    def __call__(self, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        first = items[0]
        if "forget" in first:
            batch = self.pairs(items)
            for side, tensors in batch.items():
                _check_labelled(side, tensors["labels"], self.pairs.max_length)
            return batch
        if "input_ids" in first:
            return causal_lm_batch(items, self.pairs.pad_id)
        raise TypeError(
            f"cannot collate rows with keys {sorted(first)}: training rows must be forget/retain "
            "pairs (ForgetRetainDataset) and evaluation rows pairs or tokenized (input_ids)"
        )


def _check_labelled(side: str, labels: torch.Tensor, max_length: int) -> None:
    empty = (~(labels[:, 1:] != IGNORE_INDEX).any(dim=1)).nonzero().flatten().tolist()
    if empty:
        raise ValueError(
            f"{len(empty)} {side} example(s) in this batch have no labelled token left after "
            f"cutting to max_length={max_length} (the prompt fills it); raise max_length or "
            "shorten those prompts"
        )


def check_rows(
    dataset: Any,
    side: str,
    *,
    text_column: str,
    question_column: str,
    answer_column: str,
    qa_answers: Sequence[str] | None = None,
) -> None:
    """Raise a ``ValueError`` naming ``side`` and the fix if a row of ``dataset`` is in no format
    the collator reads (:mod:`waterdrum_hf.data.formats`): QA rows need ``answer_column`` unless
    ``qa_answers`` supplies the answers, which also need a prompt to follow. A
    ``datasets.Dataset`` is checked by its columns, a list row by row, any other dataset by
    its first row."""
    columns: dict[str, Any] = {
        "text_column": text_column,
        "question_column": question_column,
        "answer_column": answer_column,
    }
    for row_columns in _row_columns(dataset):
        kind = example_format(row_columns, text_column=text_column, question_column=question_column)
        if qa_answers is not None and not has_prompt(row_columns, question_column=question_column):
            raise ValueError(f"{side} rows: {unknown_format(row_columns, refusal=True, **columns)}")
        if kind == "qa" and not (qa_answers or answer_column in row_columns):
            kind = None
        if kind is None:
            raise ValueError(f"{side} rows: {unknown_format(row_columns, **columns)}")


def _row_columns(dataset: Any) -> list[set[str]]:
    """The column names of every row, as far as they can be known without reading the data."""
    names = getattr(dataset, "column_names", None)
    if isinstance(names, list):
        return [set(names)]
    if isinstance(dataset, Sequence):
        return [set(row) if isinstance(row, Mapping) else set() for row in dataset]
    try:
        first = dataset[0] if len(dataset) else {}
    except (TypeError, NotImplementedError):  # iterable only: checked at the first batch
        return []
    return [set(first)] if isinstance(first, Mapping) else [set()]


def _holds_pairs(train_dataset: Any) -> bool:
    """Whether ``train_dataset``'s rows are forget/retain pairs (as ForgetRetainDataset yields);
    a dataset that can only be iterated is taken to hold them (checked at the first batch)
    unless it is a ``datasets.IterableDataset``, whose first row is looked at."""
    if isinstance(train_dataset, ForgetRetainDataset):
        return True
    try:
        if isinstance(train_dataset, IterableDataset):
            first: Any = next(iter(train_dataset), {})
        elif len(train_dataset) == 0:
            return True  # the Trainer says so
        else:
            first = train_dataset[0]
    except (TypeError, NotImplementedError, KeyError):
        return not isinstance(train_dataset, Dataset)
    return isinstance(first, Mapping) and "forget" in first and "retain" in first
