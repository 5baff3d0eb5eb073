"""The config every unlearning method shares: ``TrainingArguments`` plus the forget and retain
weights, the data columns and TRL's model-loading settings, with the field checks the methods'
configs reuse."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import torch
from transformers import TrainingArguments

from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.user_warnings import warn_user


@dataclass
class UnlearningConfig(TrainingArguments):
    """``TrainingArguments`` plus the settings every unlearning method shares.

    ``remove_unused_columns`` is always ``False``: the forget/retain pairs are not model inputs.
    """

    forget_weight: float = flag(
        1.0, "Weight of the forget term (gamma in GradDiff); 0 skips the term."
    )
    retain_weight: float = flag(
        1.0, "Weight of the retain term (alpha in GradDiff and KL); 0 skips the term."
    )
    max_length: int = flag(
        512, "Tokens per example at most (prompt included); longer ones are cut."
    )
    text_column: str = flag("text", "Column of plain-text examples (trained whole).")
    question_column: str = flag("question", "Column of QA questions (prompt, never trained on).")
    answer_column: str = flag("answer", "Column of QA answers (the trained tokens).")
    forget_column: str = flag(
        "forget",
        "Boolean column of a single train_dataset: True marks a forget row, False a retain row.",
    )
    disable_dropout: bool = flag(False, "Set every dropout probability of the trained model to 0.")
    model_init_kwargs: dict[str, Any] | str | None = flag(
        None,
        "Keyword arguments of AutoModelForCausalLM.from_pretrained, used when the "
        "trainer's model (or ref_model) is an id or path: dtype ('auto', 'bfloat16', "
        "'float16', 'float32'; float32 when not set), attn_implementation, revision (also "
        "of the tokenizer), ... (a JSON string on the command line).",
    )
    trust_remote_code: bool = flag(
        False, "Allow a model or tokenizer loaded from an id or path to run its own code."
    )

    def __post_init__(self) -> None:
        self.remove_unused_columns = False
        if isinstance(self.model_init_kwargs, str):
            self.model_init_kwargs = _json_object(self.model_init_kwargs, "model_init_kwargs")
        self._bf16_where_supported()
        super().__post_init__()  # type: ignore[no-untyped-call]  # unannotated in transformers
        if self.dataloader_pin_memory and (self.use_cpu or not torch.accelerator.is_available()):
            self.dataloader_pin_memory = False  # pinning without an accelerator only warns
        check_fields(self, non_negative=("forget_weight", "retain_weight"))
        if self.forget_weight == 0 and self.retain_weight == 0:
            raise ValueError(
                f"{type(self).__name__}: forget_weight and retain_weight are both 0, so nothing "
                "would be trained; make at least one of them positive"
            )

    def _bf16_where_supported(self) -> None:
        """``bf16`` (a recipe's setting for the GPU it is meant for) is turned off, saying so,
        where no device here runs it and the CPU was not asked for: transformers would refuse
        the whole run ("Your setup doesn't support bf16/gpu")."""
        from transformers.utils.import_utils import (
            is_torch_bf16_gpu_available,
            is_torch_xla_available,
        )

        asked = [name for name in ("bf16", "bf16_full_eval") if getattr(self, name)]
        if not asked or self.use_cpu or is_torch_bf16_gpu_available() or is_torch_xla_available():
            return
        for name in asked:
            setattr(self, name, False)
        warn_user(
            f"{' and '.join(asked)} turned off: no GPU here runs bf16, so training keeps the "
            "model's own dtype (pass --use_cpu true to train with bf16 autocast on the CPU)"
        )


def check_fields(
    config: Any, *, positive: Iterable[str] = (), non_negative: Iterable[str] = ()
) -> None:
    """Raise a ``ValueError`` naming the first field that is not > 0 (or >= 0) as required."""
    positive = tuple(positive)
    for name in (*positive, *non_negative):
        value = getattr(config, name)
        strict = name in positive
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (value > 0 if strict else value >= 0)
        ):
            bound = "> 0" if strict else ">= 0"
            raise ValueError(f"{type(config).__name__}.{name} must be {bound}, got {value!r}")


def _json_object(text: str, name: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise ValueError(
            f'{name} must be a JSON object such as \'{{"dtype": "bfloat16"}}\', got {text!r}'
        )
    return value
