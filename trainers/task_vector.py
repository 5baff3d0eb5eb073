"""TaskVector (Ilharco et al. 2023): fine-tune a copy on the forget set, then negate the change.

``theta = theta_orig - alpha * (theta_ft - theta_orig)`` on the *effective* weights. For a PEFT
(LoRA) model those are the merged weights, so the negated quantity is the whole weight change
``scaling * B @ A`` (minus the one the adapter started with), never the factors ``A`` and ``B``
one by one (negating both leaves their product unchanged). The result is a plain model with
the change merged in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from peft import PeftModel

from waterdrum_hf.trainers import _papers
from waterdrum_hf.trainers._reference import copy_model
from waterdrum_hf.trainers.base import Batch, UnlearningTrainer
from waterdrum_hf.trainers.config import UnlearningConfig, check_fields
from waterdrum_hf.utils.fields import flag


@dataclass
class TaskVectorConfig(UnlearningConfig):
    """The scale of the negated task vector; training settings fine-tune on the forget set."""

    alpha: float = flag(
        5.0,
        "alpha >= 0 in theta_orig - alpha * (theta_ft - theta_orig); the paper's code used 5.",
    )
    retain_weight: float = flag(0.0, "Must be 0: the task vector is learnt on the forget set.")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_fields(self, non_negative=("alpha",))
        if self.retain_weight != 0:
            raise ValueError(
                "TaskVectorConfig.retain_weight must be 0: the task vector is fine-tuned on the "
                "forget set only"
            )


class TaskVectorTrainer(UnlearningTrainer):
    """Fine-tunes a copy of ``model`` with ``NLL(forget)``; after ``train()``, ``self.model`` is
    the unlearned model and ``self.original_model`` the untouched original."""

    method_name = "taskvector"
    description = (
        "Task vector: fine-tunes a copy further on the forget set, then subtracts "
        "that change from the original model's weights."
    )
    paper = _papers.TASK_ARITHMETIC
    config_class = TaskVectorConfig
    args: TaskVectorConfig

    def trained_model(self, model: torch.nn.Module) -> torch.nn.Module:
        """A copy of ``model`` (fine-tuned); ``model`` itself stays as ``original_model``."""
        self.original_model = model
        return copy_model(model, "fine-tuning on the forget set")

    def forget_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        return self.nll(model, inputs["forget"])

    def train(self, *args: Any, **kwargs: Any) -> Any:
        """Fine-tune on the forget set, then replace ``self.model`` by the unlearned model."""
        output = super().train(*args, **kwargs)
        finetuned = self.accelerator.unwrap_model(self.model)
        self.model = self.model_wrapped = apply_task_vector(
            self.original_model, finetuned, self.args.alpha
        )
        return output


def apply_task_vector(
    original: torch.nn.Module, finetuned: torch.nn.Module, alpha: float = 5.0
) -> torch.nn.Module:
    """Return ``theta_orig - alpha * (theta_ft - theta_orig)`` as a new model, on ``finetuned``'s
    device; the inputs are left untouched.

    Either model may be a ``peft.PeftModel`` (compared through its merged weights); the result is
    then a plain model. Both must have the same parameter names and shapes once merged.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha >= 0:
        raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
    result = _merged_copy(original)
    tuned_model = _merged_copy(finetuned) if isinstance(finetuned, PeftModel) else finetuned
    tuned = dict(tuned_model.named_parameters())
    params = dict(result.named_parameters())
    if params.keys() != tuned.keys() or any(p.shape != tuned[n].shape for n, p in params.items()):
        raise ValueError(
            "original and finetuned differ in their parameters (names or shapes); pass the model "
            "that was fine-tuned and the one it started from"
        )
    device = next(iter(tuned.values())).device
    with torch.no_grad():
        for name, param in params.items():
            change = tuned[name].to(param.device, torch.float32) - param.float()
            param.copy_(param.float() - alpha * change)
    return result.to(device)


def _merged_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` with any PEFT adapter merged into the weights."""
    copied = copy_model(model, "the task vector")
    return copied.merge_and_unload() if isinstance(copied, PeftModel) else copied
