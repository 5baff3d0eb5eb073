"""GradAscent: raise the forget set's NLL, ``loss = -NLL(forget)``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import torch

from waterdrum_hf.trainers import _papers
from waterdrum_hf.trainers.base import Batch, UnlearningTrainer
from waterdrum_hf.trainers.config import UnlearningConfig
from waterdrum_hf.utils.fields import flag


@dataclass
class GradAscentConfig(UnlearningConfig):
    """Gradient ascent on the forget set; ``retain_weight > 0`` adds ``NLL(retain)`` (GradDiff)."""

    retain_weight: float = flag(
        0.0, "Weight of NLL(retain); 0 (the default) is pure gradient ascent."
    )


class GradAscentTrainer(UnlearningTrainer):
    """``forget_weight * -NLL(forget)`` (plus ``retain_weight * NLL(retain)`` if asked)."""

    method_name = "gradascent"
    description = (
        "Gradient ascent: raises the loss on the forget set, pushing the model away from that text."
    )
    paper = _papers.GRAD_ASCENT
    config_class: ClassVar[type[UnlearningConfig]] = GradAscentConfig

    def forget_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        return -self.nll(model, inputs["forget"])
