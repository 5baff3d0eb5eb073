"""IdkDPOTrainer's loss equals TRL's DPOTrainer loss on the same pairs."""

from __future__ import annotations

import copy
import math

import torch
from trainer_setup import make_trainer, perturbed, small_model

from waterdrum_hf.data import IGNORE_INDEX


def test_idkdpo_trainer_loss_equals_trl_dpo_trainer_loss(tokenizer, tmp_path):
    """TRL 1.16 has no standalone DPO loss function: its sigmoid loss lives inside
    ``DPOTrainer._compute_loss``. So a real ``DPOTrainer`` (small model, explicit reference)
    computes its loss on one of its own batches, and an ``IdkDPOTrainer`` built on copies of
    the same two models computes its forget term on the same sequences: the chosen half of
    TRL's batch as the refusals, the rejected half as the forget answers (labels = completion
    tokens)."""
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
    idk = make_trainer(
        "idkdpo", ours, tokenizer, tmp_path, ref_model=ours_ref, beta=beta, retain_weight=0.0,
        disable_dropout=True,
    )  # fmt: skip
    labels = batch["input_ids"].masked_fill(batch["completion_mask"] == 0, IGNORE_INDEX)
    chosen, rejected = (
        {"input_ids": ids, "attention_mask": mask, "labels": label}
        for ids, mask, label in zip(
            batch["input_ids"].chunk(2), batch["attention_mask"].chunk(2), labels.chunk(2),
            strict=True,
        )  # the batch is [chosen, rejected]
    )  # fmt: skip
    with torch.no_grad():
        trl_loss = trainer.compute_loss(trainer.model, batch)
        loss = idk.compute_loss(
            idk.model, {"forget": rejected, "alternative": chosen, "retain": {}}
        )
    assert abs(loss.item() - math.log(2)) > 1e-3  # the two models differ: not the trivial value
    torch.testing.assert_close(loss, trl_loss, rtol=1e-5, atol=1e-6)
