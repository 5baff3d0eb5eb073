"""IdkNLL: NLL on refusals to the forget questions, plus retain NLL.

This is what the WaterDrum paper's code ran under the name "DPO" (its DPO branch was never
reached): supervised fine-tuning towards "I don't know"-style answers, with no preference term
and no reference model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from waterdrum_hf.trainers import _papers
from waterdrum_hf.trainers.base import Batch
from waterdrum_hf.trainers.idk import IdkConfig, IdkTrainer


@dataclass
class IdkNLLConfig(IdkConfig):
    """``retain_weight`` weighs NLL(retain)."""


class IdkNLLTrainer(IdkTrainer):
    """``forget_weight * NLL(refusal | forget question) + retain_weight * NLL(retain)``."""

    method_name = "idknll"
    description = (
        'Trains the model to answer forget questions with a refusal such as "I '
        "don't know\", plus training on the retain set."
    )
    paper = _papers.TOFU
    config_class = IdkNLLConfig

    def forget_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        return self.nll(model, self.refusal_batch(inputs))
