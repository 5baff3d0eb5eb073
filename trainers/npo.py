"""NPO (Zhang et al. 2024): negative preference optimisation on the forget set.

``(2 / beta) * E[log(1 + (pi(y|x) / pi_ref(y|x)) ** beta)]`` over forget sequences, with
sequence log-probabilities summed over the labelled tokens; NLL on retain by default (NPO+RT,
set ``retain_weight=0`` for plain NPO).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from waterdrum_hf.trainers import _papers
from waterdrum_hf.trainers.base import Batch, UnlearningTrainer
from waterdrum_hf.trainers.config import UnlearningConfig, check_fields
from waterdrum_hf.trainers.losses import npo_loss
from waterdrum_hf.utils.fields import flag


@dataclass
class NPOConfig(UnlearningConfig):
    """NPO's inverse temperature; ``retain_weight`` weighs NLL(retain) (0: plain NPO)."""

    beta: float = flag(0.1, "beta > 0: inverse temperature of the NPO loss.")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_fields(self, positive=("beta",))


class NPOTrainer(UnlearningTrainer):
    """``forget_weight * NPO(forget) + retain_weight * NLL(retain)``."""

    method_name = "npo"
    description = (
        "Negative preference optimisation: a bounded gradient ascent that lowers the "
        "forget text's likelihood relative to the original model, plus training on the retain "
        "set."
    )
    paper = _papers.NPO
    config_class = NPOConfig
    args: NPOConfig
    needs_reference = True

    def forget_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        forget = inputs["forget"]
        log_prob = self.log_prob(model, forget)
        ref_log_prob = self.log_prob(model, forget, reference=True)
        return npo_loss(log_prob, ref_log_prob, self.args.beta).mean()
