"""IdkDPO's loss equals TRL's DPOTrainer loss on the same pairs."""

from __future__ import annotations

import copy
import math

import torch
from trainer_setup import (
    perturbed,
    small_model,
)

from waterdrum_hf import trainers
from waterdrum_hf.data import IGNORE_INDEX


def test_idkdpo_loss_equals_trl_dpo_trainer_loss(tokenizer, tmp_path):
    """TRL 1.16 has no standalone DPO loss function: its sigmoid loss lives inside
    ``DPOTrainer._compute_loss``. So a real ``DPOTrainer`` (small model, explicit reference)
    computes its loss on one of its own batches, and :func:`dpo_sigmoid_loss` is applied to the
    log-probabilities of the same sequences (labels = completion tokens) from copies of the same
    two models."""
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    reference = small_model(tokenizer)
    policy = perturbed(reference)
    ours, ours_ref = copy.deepcopy(policy), copy.deepcopy(reference)
    data = Dataset.from_dict(
        {
            "prompt": ["What is x?", "Where is the key kept?", "Who wrote it?"],
            "chosen": [" I don't know.", " I'm not sure.", " I have no idea."],
            "rejected": [" x is a list of numbers.", " Under the mat.", " Ada wrote it in 1843."],
        }
    )
    beta = 0.1
    args = DPOConfig(
        output_dir=str(tmp_path),
        beta=beta,
        per_device_train_batch_size=3,
        report_to="none",
        use_cpu=True,
        bf16=False,  # TRL's configs default to bf16, which autocasts the prepared reference
        disable_dropout=True,
    )
    trainer = DPOTrainer(
        model=policy, ref_model=reference, args=args, train_dataset=data, processing_class=tokenizer
    )
    assert trainer.loss_types == ["sigmoid"]
    batch = trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    with torch.no_grad():
        trl_loss = trainer.compute_loss(trainer.model, batch)
        labels = batch["input_ids"].masked_fill(batch["completion_mask"] == 0, IGNORE_INDEX)

        def log_probs(model):
            logits = model(
                input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
            ).logits
            return trainers.losses.sequence_log_prob(logits, labels).chunk(
                2
            )  # the batch is [chosen, rejected]

        (chosen, rejected), (ref_chosen, ref_rejected) = log_probs(ours), log_probs(ours_ref)
    loss = trainers.losses.dpo_sigmoid_loss(chosen, rejected, ref_chosen, ref_rejected, beta).mean()
    assert abs(loss.item() - math.log(2)) > 1e-3  # the two models differ: not the trivial value
    torch.testing.assert_close(loss, trl_loss, rtol=1e-5, atol=1e-6)
