"""What the IDK methods share: refusal answers paired with the forget questions.

Each forget pair gets a refusal drawn from ``refusal_answers`` under ``"alternative"``
(:class:`waterdrum_hf.data.ForgetRetainDataset`); the collator turns it into the forget
question followed by that refusal, with only the refusal labelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from waterdrum_hf.trainers.base import Batch, UnlearningTrainer
from waterdrum_hf.trainers.config import UnlearningConfig
from waterdrum_hf.utils.fields import flag

REFUSAL_ANSWERS: tuple[str, ...] = (
    "I don't know.",
    "I'm not sure.",
    "I have no idea.",
    "I can't answer that.",
    "I don't have that information.",
    "That is something I don't know.",
    "I'm afraid I can't help with that.",
    "I have no information about that.",
    "Sorry, I don't know the answer.",
    "I cannot say.",
)
"""The default refusals: short "I don't know"-style answers."""


@dataclass
class IdkConfig(UnlearningConfig):
    """Settings shared by the IDK methods."""

    refusal_answers: list[str] = flag(
        help="Refusals paired with forget questions, one drawn per pair.",
        factory=lambda: list(REFUSAL_ANSWERS),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.refusal_answers, str) or not all(
            isinstance(answer, str) and answer.strip() for answer in self.refusal_answers
        ):
            raise ValueError("refusal_answers must be a list of non-empty strings")
        if not self.refusal_answers:
            raise ValueError("refusal_answers is empty; give at least one refusal")


class IdkTrainer(UnlearningTrainer):
    """Pairs forget questions with refusals; the methods define what to do with them."""

    config_class = IdkConfig
    args: IdkConfig

    def alternative_answers(self, args: UnlearningConfig) -> list[str]:
        return list(cast(IdkConfig, args).refusal_answers)  # args is a config_class

    def refusal_batch(self, inputs: Mapping[str, Batch]) -> Batch:
        """The forget questions with refusals as answers."""
        if "alternative" not in inputs:
            raise ValueError(
                f"{type(self).__name__} needs refusal answers in its batches (key "
                "'alternative'); pair the sets with ForgetRetainDataset(..., "
                "alternative_answers=REFUSAL_ANSWERS), or pass forget_dataset= and retain_dataset="
            )
        return inputs["alternative"]
