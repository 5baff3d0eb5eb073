"""The relearning audit: a few fine-tuning steps on a small slice of the forget set.

Unlearning that only hides what a model knows comes back after brief fine-tuning on a little
of the forgotten data (relearning attacks: Hu et al., "Jogging the memory of unlearned LLMs
through targeted relearning attacks", ICLR 2025; Lynch et al., "Eight methods to evaluate
robust unlearning in LLMs", 2024). The fair yardstick is the retrained model put through the
same steps: it never saw the forget set, so whatever it picks up comes from the slice alone.
"""

from __future__ import annotations

import copy
import math
import shutil
import tempfile
from collections.abc import Sequence
from typing import Any

from waterdrum_hf.audits.config import AuditConfig
from waterdrum_hf.utils.progress import progress_enabled
from waterdrum_hf.utils.validation import check_string_list


def relearning_slice(forget_texts: Sequence[str], share: float) -> list[str]:
    """The first ``ceil(share * len(forget_texts))`` forget texts (at least one): what the
    relearning audit fine-tunes on. No forget text is a ``ValueError`` (nothing to relearn)."""
    texts = check_string_list(forget_texts, "forget_texts")
    if not texts:
        raise ValueError(
            "the relearning audit needs the forget set's texts (forget_texts is empty): pass the "
            "forget owners' training texts, or leave relearning out of `audits`"
        )
    if not 0 < share <= 1:
        raise ValueError(f"`share` must be in (0, 1], got {share}.")
    return texts[: max(1, math.ceil(share * len(texts)))]


def relearn(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    config: AuditConfig | None = None,
    *,
    show_progress: bool | None = None,
) -> Any:
    """A copy of ``model`` fine-tuned on ``texts`` for ``config.relearn_steps`` steps.

    The fine-tune is the library's own GD trainer: :class:`~waterdrum_hf.trainers.GradDiffTrainer`
    with ``forget_weight=0``, i.e. plain NLL on the slice (every token of each text trained on,
    padding never), constant learning rate, seeded. ``model`` itself is left untouched.
    """
    from datasets import Dataset

    from waterdrum_hf.trainers import GradDiffConfig, GradDiffTrainer
    from waterdrum_hf.utils.torch_plumbing import has_gpu, quiet_trainer_logs

    config = config or AuditConfig()
    texts = check_string_list(texts, "texts")
    if not texts:
        raise ValueError("relearning needs at least one text to fine-tune on (texts is empty)")
    output_dir = tempfile.mkdtemp(prefix="waterdrum-relearn-")
    try:
        args = GradDiffConfig(
            output_dir=output_dir,
            forget_weight=0.0,
            retain_weight=1.0,
            max_steps=config.relearn_steps,
            per_device_train_batch_size=config.relearn_batch_size,
            learning_rate=config.relearn_learning_rate,
            lr_scheduler_type="constant",
            logging_steps=max(1, config.relearn_steps // 2),
            save_strategy="no",
            report_to="none",
            seed=config.seed,
            use_cpu=not has_gpu(),
            disable_tqdm=not progress_enabled(show_progress),
        )
        slice_rows = Dataset.from_dict({"text": texts})
        trainer = GradDiffTrainer(
            model=copy.deepcopy(model).train(),
            args=args,
            processing_class=tokenizer,
            forget_dataset=slice_rows,  # unused (forget_weight=0), but pairing needs one
            retain_dataset=slice_rows,
        )
        quiet_trainer_logs(trainer)
        trainer.train()
        assert trainer.model is not None  # the model it was given, trained
        return trainer.model.eval()
    finally:
        shutil.rmtree(output_dir, ignore_errors=True)
