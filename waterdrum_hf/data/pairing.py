"""Forget/retain pairs for unlearning trainers, and the collator that turns them into tensors.

Every unlearning step needs one forget batch and one retain batch. :class:`ForgetRetainDataset`
walks the *anchor* set once per epoch and gives each of its examples a partner from the other
set; :class:`ForgetRetainCollator` tokenises both sides so that only trained tokens carry
labels: prompts (QA questions) and padding are :data:`IGNORE_INDEX` (``-100``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import torch
from datasets import Dataset
from transformers import PreTrainedTokenizerBase

from waterdrum_hf.data.formats import ExampleEncoder
from waterdrum_hf.utils.torch_plumbing import IGNORE_INDEX, causal_lm_batch, pad_token_id  # noqa: F401


class ForgetRetainDataset(torch.utils.data.Dataset[dict[str, Any]]):
    """Pairs ``{"forget": example, "retain": example}`` (plus ``"alternative"``, see below).

    One epoch walks the anchor set in order; each anchor example gets a partner from the other
    set, drawn without replacement (cycling when the other set is smaller) from a permutation
    seeded by ``seed`` and the epoch (``set_epoch``, which accelerate's data loaders call
    through ``transformers.Trainer``).

    Args:
        forget: the forget set (rows are dicts, e.g. ``{"text": ...}`` or question/answer).
        retain: the retain set.
        anchor: ``"forget"`` (the paper's choice: one epoch = ``len(forget)`` pairs) or
            ``"retain"``.
        seed: seeds the partner draw.
        alternative_answers: optional pool of answers for forget questions (e.g. "I don't
            know" variants) for DPO-style methods; each pair gets one, drawn with the same seed,
            under ``"alternative"``.
    """

    def __init__(
        self,
        forget: Dataset | Sequence[Mapping[str, Any]],
        retain: Dataset | Sequence[Mapping[str, Any]],
        *,
        anchor: Literal["forget", "retain"] = "forget",
        seed: int = 0,
        alternative_answers: Sequence[str] | None = None,
    ) -> None:
        if anchor not in ("forget", "retain"):
            raise ValueError(f"anchor must be 'forget' or 'retain', got {anchor!r}")
        for name, value in (("forget", forget), ("retain", retain)):
            if len(value) == 0:
                raise ValueError(
                    f"{name} is empty; pairing needs at least one example on each side"
                )
        if alternative_answers is not None:
            if isinstance(alternative_answers, str) or not all(
                isinstance(a, str) for a in alternative_answers
            ):
                raise TypeError("alternative_answers must be a list of strings")
            if not alternative_answers:
                raise ValueError("alternative_answers is empty; pass None to leave it out")
        self.forget = forget
        self.retain = retain
        self.anchor = anchor
        self.seed = seed
        self.alternative_answers = alternative_answers
        self.set_epoch(0)

    def set_epoch(self, epoch: int) -> None:
        """Draw this epoch's partners (and alternative answers)."""
        rng = np.random.default_rng([self.seed, epoch])
        anchor, other = (
            (self.forget, self.retain) if self.anchor == "forget" else (self.retain, self.forget)
        )
        rounds = -(-len(anchor) // len(other))
        self._partners = np.concatenate([rng.permutation(len(other)) for _ in range(rounds)])
        if self.alternative_answers is not None:
            self._alternatives = rng.integers(len(self.alternative_answers), size=len(anchor))

    def __len__(self) -> int:
        return len(self.forget if self.anchor == "forget" else self.retain)

    def __getitem__(self, index: int) -> dict[str, Any]:
        partner = int(self._partners[index])
        if self.anchor == "forget":
            item = {"forget": self.forget[index], "retain": self.retain[partner]}
        else:
            item = {"forget": self.forget[partner], "retain": self.retain[index]}
        if self.alternative_answers is not None:
            item["alternative"] = self.alternative_answers[int(self._alternatives[index])]
        return item


class ForgetRetainCollator:
    """Tokenise and right-pad each side of :class:`ForgetRetainDataset` items.

    Returns ``{"forget": batch, "retain": batch}`` (and ``"alternative"`` when the items have
    it), each batch holding ``input_ids``, ``attention_mask`` and ``labels``. Examples may be in
    any of TRL's standard formats or QA-style (:mod:`waterdrum_hf.data.formats`): an example
    with a ``question_column`` goes through :func:`waterdrum_hf.qa_queries` (the chat template,
    or ``Question: ... Answer:``); ``prompt``/``completion`` and ``messages`` examples are
    joined, or rendered with the chat template; a ``text_column`` is trained whole. Only the
    completion (answer) tokens are labelled, never a prompt or a leading BOS. The alternative
    side pairs the forget prompt with the alternative answer. Sequences are cut on the right at
    ``max_length``.

    With ``transformers.Trainer`` set ``remove_unused_columns=False``: the nested batches are
    not model arguments.
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        *,
        text_column: str = "text",
        question_column: str = "question",
        answer_column: str = "answer",
        max_length: int = 512,
    ) -> None:
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2:
            raise ValueError(f"max_length must be an int >= 2, got {max_length!r}")
        self.tokenizer = tokenizer
        self.encoder = ExampleEncoder(
            tokenizer,
            text_column=text_column,
            question_column=question_column,
            answer_column=answer_column,
        )
        self.max_length = max_length
        self.pad_id = pad_token_id(tokenizer)

    def __call__(self, items: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, torch.Tensor]]:
        batch = {
            side: self._pad([self._encode(item[side]) for item in items])
            for side in ("forget", "retain")
        }
        if "alternative" in items[0]:
            batch["alternative"] = self._pad(
                [self._encode(item["forget"], answer=item["alternative"]) for item in items]
            )
        return batch

    def _encode(
        self, example: Mapping[str, Any], answer: str | None = None
    ) -> tuple[list[int], list[int]]:
        """Token ids and labels of one example, cut to ``max_length``."""
        ids, labels = self.encoder(example, answer)
        return ids[: self.max_length], labels[: self.max_length]

    def _pad(self, encoded: list[tuple[list[int], list[int]]]) -> dict[str, torch.Tensor]:
        rows = [{"input_ids": ids, "labels": labels} for ids, labels in encoded]
        return causal_lm_batch(rows, self.pad_id)
