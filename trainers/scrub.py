"""SCRUB (Kurmanji et al. 2023): alternate max steps on the forget set and min steps on retain.

A max step maximises ``KL(p_ref || p)`` on the forget batch (the student moves away from its
frozen teacher); a min step minimises ``retain_nll_weight * NLL + retain_kl_weight * KL`` on the
retain batch (it stays close to the teacher elsewhere). The schedule runs inside one training
run: one optimizer, one learning-rate schedule, no restart between phases. Each optimizer step
belongs to one phase (every micro-batch of an accumulation step); the phase is logged as
``scrub/max_phase`` (1 in max steps, 0 in min steps, averaged over the logging window).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import torch

from waterdrum_hf.trainers import _papers
from waterdrum_hf.trainers.base import Batch, UnlearningTrainer
from waterdrum_hf.trainers.config import UnlearningConfig, check_fields
from waterdrum_hf.utils.fields import flag


@dataclass
class SCRUBConfig(UnlearningConfig):
    """SCRUB's schedule and min-step weights (the paper: 0.99 NLL + 0.001 KL, 5 rounds)."""

    max_phase_steps: int = flag(4, "Optimizer steps of each max phase (KL ascent on forget).")
    min_phase_steps: int = flag(4, "Optimizer steps of each min phase (retain NLL and KL).")
    num_max_phases: int = flag(
        5, "Max phases (each followed by a min phase); after them only min steps."
    )
    retain_nll_weight: float = flag(0.99, "gamma: weight of NLL(retain) in min steps.")
    retain_kl_weight: float = flag(0.001, "alpha: weight of KL(p_ref || p) on retain in min steps.")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_fields(self, positive=("max_phase_steps", "min_phase_steps"))
        check_fields(self, non_negative=("num_max_phases", "retain_nll_weight", "retain_kl_weight"))
        if self.forget_weight == 0 or self.retain_weight == 0:
            raise ValueError(
                "SCRUBConfig: forget_weight and retain_weight scale the max and min steps; both "
                "must be > 0 (set num_max_phases=0 for min steps only)"
            )


def scrub_phase(
    step: int, max_phase_steps: int, min_phase_steps: int, num_max_phases: int
) -> Literal["max", "min"]:
    """The phase of optimizer step ``step`` (from 0): cycles of max then min steps, then min."""
    cycle, offset = divmod(step, max_phase_steps + min_phase_steps)
    return "max" if cycle < num_max_phases and offset < max_phase_steps else "min"


class SCRUBTrainer(UnlearningTrainer):
    """Max steps: ``forget_weight * -KL(forget)``; min steps: ``retain_weight * (gamma NLL + alpha KL)``.

    Evaluation scores both terms.
    """

    method_name = "scrub"
    description = (
        "SCRUB: alternates steps that push the predictions on the forget set away "
        "from the original model's with steps that keep them close on the retain set."
    )
    paper = _papers.SCRUB
    config_class = SCRUBConfig
    args: SCRUBConfig
    needs_reference = True

    def phase(self) -> Literal["max", "min"]:
        """The phase of the current optimizer step."""
        args = self.args
        return scrub_phase(
            self.state.global_step, args.max_phase_steps, args.min_phase_steps, args.num_max_phases
        )

    def loss_weights(self) -> tuple[float, float]:
        forget_weight, retain_weight = super().loss_weights()
        if self._mode() != "train":
            return forget_weight, retain_weight
        is_max = self.phase() == "max"
        self.record("scrub/max_phase", float(is_max))
        return (forget_weight, 0.0) if is_max else (0.0, retain_weight)

    def forget_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        kl = self.kl_from_reference(model, inputs["forget"])
        self.record("loss/forget_kl", kl)
        return -kl

    def retain_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        logits = self.forward(model, inputs["retain"])
        nll = self.retain_nll(model, inputs, logits)
        kl = self.retain_kl(model, inputs, logits)
        return self.args.retain_nll_weight * nll + self.args.retain_kl_weight * kl
