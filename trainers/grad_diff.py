"""GradDiff: ``gamma * -NLL(forget) + alpha * NLL(retain)``, or a KL to the reference on retain."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import torch

from waterdrum_hf.trainers import _papers
from waterdrum_hf.trainers.base import Batch
from waterdrum_hf.trainers.config import UnlearningConfig
from waterdrum_hf.trainers.grad_ascent import GradAscentTrainer
from waterdrum_hf.utils.fields import flag


@dataclass
class GradDiffConfig(UnlearningConfig):
    """Gradient difference; ``forget_weight`` is gamma and ``retain_weight`` alpha."""

    retain_loss: Literal["nll", "kl"] = flag(
        "nll",
        "Retain term: 'nll' (NLL on retain) or 'kl' (token-level KL(p_ref || p) on "
        "retain, which needs the frozen reference).",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.retain_loss not in ("nll", "kl"):
            raise ValueError(f"retain_loss must be 'nll' or 'kl', got {self.retain_loss!r}")


class GradDiffTrainer(GradAscentTrainer):
    """``forget_weight * -NLL(forget) + retain_weight * (NLL or KL)(retain)``."""

    method_name = "graddiff"
    description = (
        "Gradient difference: gradient ascent on the forget set plus ordinary "
        "training on the retain set, to keep what should stay."
    )
    paper = _papers.GRAD_DIFF
    config_class = GradDiffConfig
    args: GradDiffConfig

    @property
    def needs_reference(self) -> bool:
        return self.args.retain_loss == "kl" and self.args.retain_weight > 0

    def retain_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        if self.args.retain_loss == "kl":
            return self.retain_kl(model, inputs)
        return self.retain_nll(model, inputs)
