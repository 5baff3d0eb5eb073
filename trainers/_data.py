"""Training data of the unlearning trainers: forget/retain pairs and the collator they build."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

from waterdrum_hf._torch_plumbing import causal_lm_batch
from waterdrum_hf.data import IGNORE_INDEX, ForgetRetainCollator, ForgetRetainDataset


def build_pairs(
    train_dataset: Any,
    forget_dataset: Any,
    retain_dataset: Any,
    *,
    seed: int,
    retain_needed: bool,
    alternative_answers: Sequence[str] | None = None,
    text_column: str = "text",
    question_column: str = "question",
    answer_column: str = "answer",
) -> Any:
    """The training dataset: ``train_dataset`` as given, or the forget/retain sets paired.

    Without a retain term (``retain_needed=False``) the retain set may be left out; the pairs then
    repeat the forget set on their (unused) retain side. With ``alternative_answers`` (refusals
    for the IDK methods) the forget set must be QA-style and every pair gets one. Rows the
    collator could not read (no text, no question and answer; a train_dataset that is not pairs)
    are refused here, not at the first batch.
    """
    columns = {
        "text_column": text_column,
        "question_column": question_column,
        "answer_column": answer_column,
    }
    if train_dataset is not None:
        if forget_dataset is not None or retain_dataset is not None:
            raise TypeError(
                "pass either train_dataset (forget/retain pairs) or forget_dataset and "
                "retain_dataset, not both"
            )
        if (
            alternative_answers is not None
            and isinstance(train_dataset, ForgetRetainDataset)
            and train_dataset.alternative_answers is None
        ):
            raise ValueError(
                "this method needs refusal answers in its pairs: build train_dataset with "
                "ForgetRetainDataset(forget, retain, alternative_answers=REFUSAL_ANSWERS), or pass "
                "forget_dataset= and retain_dataset= and let the trainer pair them"
            )
        _check_pairs(train_dataset)
        if isinstance(train_dataset, ForgetRetainDataset):
            check_rows(train_dataset.forget, "forget", qa_answers=alternative_answers, **columns)
            check_rows(train_dataset.retain, "retain", **columns)
        return train_dataset
    if forget_dataset is None:
        raise ValueError(
            "no forget set: pass forget_dataset= (and retain_dataset=), or "
            "train_dataset=ForgetRetainDataset(forget, retain)"
        )
    if retain_dataset is None:
        if retain_needed:
            raise ValueError(
                "retain_dataset is required: this method trains a retain term (set "
                "retain_weight=0 to train on the forget set only, where the method allows it)"
            )
        retain_dataset = forget_dataset
    if alternative_answers is not None and question_column not in _first_row(forget_dataset):
        raise ValueError(
            f"refusal answers pair with forget questions, but the forget set has no "
            f"{question_column!r} column (columns: {sorted(_first_row(forget_dataset))}); give "
            "QA-style forget data (question and answer columns) or set question_column"
        )
    check_rows(forget_dataset, "forget", qa_answers=alternative_answers, **columns)
    if retain_dataset is not forget_dataset:
        check_rows(retain_dataset, "retain", **columns)
    return ForgetRetainDataset(
        forget_dataset, retain_dataset, seed=seed, alternative_answers=alternative_answers
    )


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
    """Raise a ``ValueError`` naming ``side`` and the fix if a row of ``dataset`` holds neither
    ``text_column`` nor ``question_column`` and ``answer_column`` (the answer may come from
    ``qa_answers``). A ``datasets.Dataset`` is checked by its columns, a list row by row, any
    other dataset by its first row."""
    for row_columns in _row_columns(dataset):
        if text_column in row_columns or (
            question_column in row_columns and (qa_answers or answer_column in row_columns)
        ):
            continue
        raise ValueError(
            f"{side}_dataset: a row has neither a {text_column!r} column (plain text) nor "
            f"{question_column!r} and {answer_column!r} columns (QA); its columns are "
            f"{sorted(row_columns)}. Rename the columns, or set text_column= (or "
            "question_column= and answer_column=) in the config"
        )


def _row_columns(dataset: Any) -> list[set[str]]:
    """The column names of every row, as far as they can be known without reading the data."""
    names = getattr(dataset, "column_names", None)
    if isinstance(names, list):
        return [set(names)]
    if isinstance(dataset, Sequence):
        return [set(row) if isinstance(row, Mapping) else set() for row in dataset]
    try:
        first = _first_row(dataset)
    except (TypeError, NotImplementedError):  # iterable only: checked at the first batch
        return []
    return [set(first)] if isinstance(first, Mapping) else [set()]


def _check_pairs(train_dataset: Any) -> None:
    """``train_dataset``'s rows must be forget/retain pairs (as ForgetRetainDataset yields)."""
    try:
        if len(train_dataset) == 0:
            return  # the Trainer says so
        first = train_dataset[0]
    except (TypeError, NotImplementedError):  # iterable only: checked at the first batch
        return
    if not (isinstance(first, Mapping) and "forget" in first and "retain" in first):
        keys = sorted(first) if isinstance(first, Mapping) else type(first).__name__
        raise ValueError(
            f"train_dataset must hold forget/retain pairs, but its rows are {keys}: pass "
            "forget_dataset= (and retain_dataset=) and let the trainer pair them, or "
            "train_dataset=ForgetRetainDataset(forget, retain)"
        )


def _first_row(dataset: Any) -> Mapping[str, Any]:
    return dataset[0] if len(dataset) else {}
