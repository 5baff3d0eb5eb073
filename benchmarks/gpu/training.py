"""Step ``training``: step time and peak GPU memory of LoRA unlearning at the Llama-2-7B shape.

For ``KLTrainer`` and ``NPOTrainer`` (LoRA r 8, alpha 32, dropout 0.05, all linear layers but
lm_head: the paper's adapter), with the reference as the same model with its adapter disabled
or as a frozen copy of the base model, and with gradient checkpointing off and on. Each setting
builds its model afresh and frees it after; the peak counts from before the model is built.
Each setting also records the dtypes of the loss, its terms and the log-probabilities, and
where the reference model lives (what breaks on a GPU if it is wrong).
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Mapping
from typing import Any

import torch
from transformers import TrainerCallback
from transformers.trainer_callback import PrinterCallback

from benchmarks.gpu.common import (
    Budget,
    Setup,
    allocated_gib,
    build_model,
    is_oom,
    median,
    peak_gib,
    release,
    reset_peak,
    synchronize,
    word_texts,
    word_tokenizer,
)

METHODS = ("kl", "npo")
REFERENCES = ("adapter_disabled", "frozen_copy")
CHECKPOINTING = (False, True)


class StepTimer(TrainerCallback):
    """Wall time of every optimizer step, the device's queue drained at both ends."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.seconds: list[float] = []
        self._start = 0.0

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        import time

        synchronize(self.device)
        self._start = time.perf_counter()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        import time

        synchronize(self.device)
        self.seconds.append(time.perf_counter() - self._start)


def lora_model(base: Any) -> Any:
    """The paper's LoRA adapter on ``base`` (which peft changes in place)."""
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(
        r=8, lora_alpha=32, lora_dropout=0.05, target_modules="all-linear", task_type="CAUSAL_LM"
    )
    return get_peft_model(base, lora)


def unlearning_trainer(
    setup: Setup,
    method: str,
    model: Any,
    *,
    steps: int,
    output_dir: str,
    ref_model: Any = None,
    checkpointing: bool = False,
    callbacks: list[Any] | None = None,
    **config: Any,
) -> Any:
    """A method's trainer on word data, one epoch of ``steps`` forget/retain batches."""
    from datasets import Dataset

    import waterdrum_hf.trainers as trainers

    sizes = setup.sizes
    trainer_class, config_class = trainers.get(method)
    rows = sizes.batch_size * steps
    texts = word_texts(setup.shape.vocab_size, 2 * rows, sizes.seq_len, seed=1)
    args = config_class(
        output_dir=output_dir,
        per_device_train_batch_size=sizes.batch_size,
        max_steps=steps,
        max_length=sizes.seq_len,
        learning_rate=1e-4,
        bf16=True,
        use_cpu=not setup.cuda,
        gradient_checkpointing=checkpointing,
        gradient_checkpointing_kwargs={"use_reentrant": False} if checkpointing else None,
        logging_steps=steps,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
        **config,
    )
    trainer = trainer_class(
        model=model,
        args=args,
        ref_model=ref_model,
        forget_dataset=Dataset.from_dict({"text": texts[:rows]}),
        retain_dataset=Dataset.from_dict({"text": texts[rows:]}),
        processing_class=word_tokenizer(setup.shape.vocab_size),
        callbacks=callbacks,
    )
    trainer.remove_callback(PrinterCallback)  # the results hold what matters; keep logs short
    return trainer


def to_device(batch: Mapping[str, Any], device: torch.device) -> dict[str, Any]:
    """A (nested) batch of tensors moved to ``device``."""
    return {
        key: to_device(value, device)
        if isinstance(value, Mapping)
        else value.to(device)
        if isinstance(value, torch.Tensor)
        else value
        for key, value in batch.items()
    }


def dtype_checks(trainer: Any) -> dict[str, Any]:
    """Dtypes of the loss, its terms, the logits and the (reference) log-probabilities on one
    batch, and the devices of the policy and reference models: the losses must be float32 (the
    logits are upcast before any softmax), the reference on the policy's device."""
    model = trainer.model
    batch = to_device(next(iter(trainer.get_train_dataloader())), trainer.args.device)
    forget = batch["forget"]
    with torch.no_grad(), trainer.compute_loss_context_manager():
        loss, terms = trainer.compute_loss(model, batch, return_outputs=True)
        logits = trainer.forward(model, forget)
        log_prob = trainer.log_prob(model, forget)
        ref_log_prob = trainer.log_prob(model, forget, reference=True)
    reference = trainer.ref_model if trainer.ref_model is not None else model
    return {
        "loss_dtype": str(loss.dtype),
        "term_dtypes": sorted({str(value.dtype) for value in terms.values()}),
        "logits_dtype": str(logits.dtype),
        "log_prob_dtype": str(log_prob.dtype),
        "ref_log_prob_dtype": str(ref_log_prob.dtype),
        "policy_device": str(next(model.parameters()).device),
        "reference_device": str(next(reference.parameters()).device),
        "reference_is_copy": trainer.ref_model is not None,
        "loss_finite": bool(torch.isfinite(loss).item()),
    }


def train_once(setup: Setup, method: str, reference: str, checkpointing: bool) -> dict[str, Any]:
    """One setting: build, probe dtypes and devices, train, measure; the model freed after."""
    sizes = setup.sizes
    steps = sizes.warmup_steps + sizes.timed_steps
    reset_peak(setup.device)
    base = build_model(setup)
    ref_model = None
    if reference == "frozen_copy":  # what a trainer without adapter toggling keeps
        ref_model = copy.deepcopy(base).requires_grad_(False).eval()
    model = lora_model(base)
    weights = allocated_gib(setup.device)
    timer = StepTimer(setup.device)
    with tempfile.TemporaryDirectory() as output_dir:
        trainer = unlearning_trainer(
            setup,
            method,
            model,
            steps=steps,
            output_dir=output_dir,
            ref_model=ref_model,
            checkpointing=checkpointing,
            callbacks=[timer],
        )
        checks = dtype_checks(trainer)
        trainer.train()
    step_seconds = median(timer.seconds[sizes.warmup_steps :])
    tokens = 2 * sizes.batch_size * sizes.seq_len  # a forget and a retain batch per step
    row = {
        "method": method,
        "reference": reference,
        "checkpointing": checkpointing,
        "batch": f"{sizes.batch_size} x {sizes.seq_len}",
        "step_s": step_seconds,
        "tokens_per_s": tokens / step_seconds,
        "weights_gib": weights,
        "peak_gib": peak_gib(setup.device),
        "timed_steps": len(timer.seconds) - sizes.warmup_steps,
        **checks,
    }
    del trainer, model, base, ref_model, timer
    release(setup.device)
    return row


def run(setup: Setup, budget: Budget) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for method in METHODS:
        for reference in REFERENCES:
            for checkpointing in CHECKPOINTING:
                setting = {"method": method, "reference": reference, "checkpointing": checkpointing}
                if budget.expired:
                    rows.append({**setting, "skipped": "time budget"})
                    continue
                try:
                    rows.append(train_once(setup, method, reference, checkpointing))
                except Exception as error:
                    if not is_oom(error):
                        raise
                    release(setup.device)
                    rows.append({**setting, "skipped": "out of memory"})
    return {
        "rows": rows,
        "notes": [
            f"LoRA r 8 on random {setup.shape.name} weights in {setup.dtype}; step time is the "
            f"median of {setup.sizes.timed_steps} steps after {setup.sizes.warmup_steps} warm-up; "
            "peak: torch.cuda.max_memory_allocated from before the model is built"
        ],
    }
