"""IdkDPO: DPO that prefers a refusal to the forget set's original answer, plus retain NLL.

The chosen completion is a refusal ("I don't know."), the rejected one the original answer, both
after the same forget question; the loss is TRL's DPO sigmoid loss on sequence log-probabilities
summed over the answer tokens, against the frozen reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from waterdrum_hf.trainers import _papers
from waterdrum_hf.trainers.base import Batch
from waterdrum_hf.trainers.config import check_fields
from waterdrum_hf.trainers.idk import IdkConfig, IdkTrainer
from waterdrum_hf.trainers.losses import dpo_sigmoid_loss
from waterdrum_hf.utils.fields import flag


@dataclass
class IdkDPOConfig(IdkConfig):
    """DPO's inverse temperature; ``retain_weight`` weighs NLL(retain)."""

    beta: float = flag(0.1, "beta > 0: inverse temperature of DPO.")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_fields(self, positive=("beta",))


class IdkDPOTrainer(IdkTrainer):
    """``forget_weight * DPO(refusal > answer) + retain_weight * NLL(retain)``.

    Also logs ``rewards/margin``: ``beta`` times the refusal's log-ratio minus the answer's.
    """

    method_name = "idkdpo"
    description = (
        'Preference optimisation (DPO) of refusals such as "I don\'t know" over '
        "the forget answers, plus training on the retain set."
    )
    paper = _papers.DPO
    config_class = IdkDPOConfig
    args: IdkDPOConfig
    needs_reference = True

    def forget_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        pair = self.refusal_batch(inputs), inputs["forget"]  # (chosen, rejected)
        chosen, rejected = [self.log_prob(model, batch) for batch in pair]
        ref_chosen, ref_rejected = [self.log_prob(model, batch, reference=True) for batch in pair]
        margin = (chosen - ref_chosen) - (rejected - ref_rejected)
        self.record("rewards/margin", self.args.beta * margin.mean())
        return dpo_sigmoid_loss(chosen, rejected, ref_chosen, ref_rejected, self.args.beta).mean()
