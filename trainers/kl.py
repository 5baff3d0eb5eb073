"""KL: ``-NLL(forget) + alpha * KL(p_ref || p)`` on retain, token level over the vocabulary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from waterdrum_hf.trainers import _papers
from waterdrum_hf.trainers.base import Batch
from waterdrum_hf.trainers.config import UnlearningConfig
from waterdrum_hf.trainers.grad_ascent import GradAscentTrainer
from waterdrum_hf.utils.fields import flag


@dataclass
class KLConfig(UnlearningConfig):
    """KL minimisation; ``retain_weight`` is alpha, the weight of the retain KL."""

    retain_weight: float = flag(1.0, "alpha: weight of KL(p_ref || p) on the retain batch.")


class KLTrainer(GradAscentTrainer):
    """``forget_weight * -NLL(forget) + retain_weight * KL(p_ref || p)(retain)``."""

    method_name = "kl"
    description = (
        "Gradient ascent on the forget set while keeping the predictions on the retain "
        "set close (KL divergence) to the original model's."
    )
    paper = _papers.TOFU
    config_class = KLConfig
    args: KLConfig

    @property
    def needs_reference(self) -> bool:
        return self.args.retain_weight > 0

    def retain_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        return self.retain_kl(model, inputs)
