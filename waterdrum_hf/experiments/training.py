"""Training runs of the experiments: fine-tuning a copy of a model on plain texts, and
unlearning with a registered trainer; both take their batch size, learning rate and seed as one
:class:`TrainingSettings`."""

from __future__ import annotations

import copy
import functools
import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.progress import progress_enabled
from waterdrum_hf.utils.validation import check_positive_int


@dataclass(frozen=True)
class TrainingSettings:
    """How a model trains, apart from how long: fine-tuning runs for ``epochs`` and unlearning
    for ``steps``, each given beside these. The learning rate is constant."""

    batch_size: int = flag(help="Examples per device and optimizer step.")
    learning_rate: float = flag(help="The constant learning rate.")
    seed: int = flag(help="Seed of the Trainer (shuffling, dropout).")

    def __post_init__(self) -> None:
        check_positive_int(self.batch_size, "batch_size")
        if not self.learning_rate > 0:
            raise ValueError(f"`learning_rate` must be > 0, got {self.learning_rate!r}.")

    def arguments(self, output_dir: str | Path, show_progress: bool | None) -> dict[str, Any]:
        """The ``TrainingArguments`` every run here shares: these settings, a constant learning
        rate, no checkpoints or reports, the GPU when there is one."""
        from waterdrum_hf.utils.torch_plumbing import has_gpu

        return {
            "output_dir": str(Path(output_dir) / "run"),
            "per_device_train_batch_size": self.batch_size,
            "learning_rate": self.learning_rate,
            "lr_scheduler_type": "constant",
            "save_strategy": "no",
            "report_to": "none",
            "seed": self.seed,
            "use_cpu": not has_gpu(),
            "disable_tqdm": not progress_enabled(show_progress),
        }


def finetune(
    model: Any,
    tokenizer: Any,
    texts: list[str],
    output_dir: str | Path,
    *,
    epochs: int,
    training: TrainingSettings,
    show_progress: bool | None = None,
) -> Any:
    """Fine-tune a copy of ``model`` on ``texts`` with a plain ``Trainer`` (on the GPU when there
    is one). Each text is cut to 255 tokens and ends in EOS, which is trained on; a text that
    already starts with BOS (a chat-templated QA pair) gets no second one; padding is never a
    label, so a tokenizer whose pad token is EOS (or that has none) is fine."""
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments

    from waterdrum_hf.generation.prompting import prompt_token_ids
    from waterdrum_hf.utils.torch_plumbing import (
        causal_lm_batch,
        has_gpu,
        pad_token_id,
        quiet_trainer_logs,
    )

    if tokenizer.eos_token_id is None:
        raise ValueError(
            "the tokenizer has no EOS token: set one, so that the model learns to stop"
        )
    model = copy.deepcopy(model).train()
    encoded = [prompt_token_ids(tokenizer, t)[:255] + [tokenizer.eos_token_id] for t in texts]
    args = TrainingArguments(
        **training.arguments(output_dir, show_progress),
        num_train_epochs=epochs,
        logging_steps=max(1, epochs * math.ceil(len(texts) / training.batch_size) // 5),
        dataloader_pin_memory=has_gpu(),  # pinning without a GPU only warns
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_dict({"input_ids": encoded}),
        data_collator=functools.partial(causal_lm_batch, pad_id=pad_token_id(tokenizer)),
    )
    quiet_trainer_logs(trainer)
    trainer.train()
    assert args.output_dir is not None  # set by TrainingSettings.arguments
    shutil.rmtree(args.output_dir, ignore_errors=True)
    return model.eval()


def unlearn(
    method: str,
    model: Any,
    tokenizer: Any,
    forget: Sequence[str],
    retain: Sequence[str],
    output_dir: str | Path,
    *,
    steps: int,
    training: TrainingSettings,
    callbacks: Sequence[Any] = (),
    show_progress: bool | None = None,
) -> Any:
    """Run the registered trainer ``method`` on plain-text forget/retain sets; returns the model."""
    from datasets import Dataset

    import waterdrum_hf.trainers as trainers
    from waterdrum_hf.utils.torch_plumbing import quiet_trainer_logs

    trainer_class, config_class = trainers.get(method)
    args = config_class(
        **training.arguments(output_dir, show_progress),
        max_steps=steps,
        logging_steps=max(1, steps // 4),
    )
    trainer = trainer_class(
        model=model.train(),
        args=args,
        processing_class=tokenizer,
        callbacks=list(callbacks),
        forget_dataset=Dataset.from_dict({"text": list(forget)}),
        retain_dataset=Dataset.from_dict({"text": list(retain)}),
    )
    quiet_trainer_logs(trainer)
    trainer.train()
    assert args.output_dir is not None  # set by TrainingSettings.arguments
    shutil.rmtree(args.output_dir, ignore_errors=True)
    assert trainer.model is not None  # the model it was given, trained
    return trainer.model.eval()
