"""SimNPO (Fan et al. 2024): NPO without a reference model, normalised by answer length.

``-(2 / beta) * logsigmoid(-(beta / |y|) * log pi(y|x) - gamma)`` over forget sequences, where
``|y|`` counts the labelled tokens; NLL on retain by default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from waterdrum_hf.trainers import _papers
from waterdrum_hf.trainers.base import Batch, UnlearningTrainer
from waterdrum_hf.trainers.config import UnlearningConfig, check_fields
from waterdrum_hf.trainers.losses import sequence_nll, simnpo_loss
from waterdrum_hf.utils.fields import flag


@dataclass
class SimNPOConfig(UnlearningConfig):
    """SimNPO's inverse temperature and reward margin; ``retain_weight`` weighs NLL(retain)."""

    beta: float = flag(2.5, "beta > 0: inverse temperature of the SimNPO loss.")
    gamma: float = flag(0.0, "gamma >= 0: reward margin of the SimNPO loss.")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_fields(self, positive=("beta",), non_negative=("gamma",))


class SimNPOTrainer(UnlearningTrainer):
    """``forget_weight * SimNPO(forget) + retain_weight * NLL(retain)``; no reference model."""

    method_name = "simnpo"
    description = (
        "SimNPO: NPO without the original model as reference (length-normalised "
        "likelihood and a margin), plus training on the retain set."
    )
    paper = _papers.SIMNPO
    config_class = SimNPOConfig
    args: SimNPOConfig

    def forget_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        forget = inputs["forget"]
        mean_log_prob = -sequence_nll(self.forward(model, forget), forget["labels"])
        return simnpo_loss(mean_log_prob, self.args.beta, self.args.gamma).mean()
