"""Unlearning unlearns: every method lowers the forget likelihood and keeps the retain set;
evaluation accepts pairs and plain batches."""

from __future__ import annotations

import copy

import pytest
import torch
from trainer_setup import (
    FORGET_QA,
    RETAIN_QA,
    RETAIN_TEXT,
    make_trainer,
    row_nll,
    small_model,
)

from waterdrum_hf import trainers
from waterdrum_hf.data import ForgetRetainCollator, ForgetRetainDataset


@pytest.fixture(scope="module")
def fitted(tiny_model, tmp_path_factory):
    """The tiny model fitted to the forget and retain QA sets (GD: GradDiff, forget_weight=0)."""
    model, tokenizer = tiny_model
    trainer = make_trainer(
        "graddiff",
        copy.deepcopy(model),
        tokenizer,
        tmp_path_factory.mktemp("fit"),
        retain=FORGET_QA + RETAIN_QA,
        forget_weight=0.0,
        per_device_train_batch_size=4,
        max_steps=20,
        learning_rate=6e-3,
        logging_steps=20,
    )
    trainer.train()
    return trainer.model.eval()


def qa_nll(model, tokenizer, rows, answer: str | None = None) -> float:
    """Mean answer NLL of QA rows (or of ``answer`` given to every question)."""
    pairs = [
        {"forget": row, "retain": row, **({"alternative": answer} if answer else {})}
        for row in rows
    ]
    batch = ForgetRetainCollator(tokenizer)(pairs)
    with torch.no_grad():
        return row_nll(model, batch["alternative" if answer else "forget"])[0].mean().item()


REFUSAL = "I don't know."


UNLEARNING_SETTINGS = {
    "scrub": {"max_phase_steps": 2, "min_phase_steps": 1, "num_max_phases": 3},
    "taskvector": {"alpha": 2.0},
    "idkdpo": {"refusal_answers": [REFUSAL]},
    "idknll": {"refusal_answers": [REFUSAL]},
}


@pytest.mark.kernels
@pytest.mark.parametrize("method", trainers.available())
def test_unlearning_lowers_the_forget_likelihood_and_keeps_retain(
    method, fitted, tokenizer, tmp_path
):
    before = {
        "forget": qa_nll(fitted, tokenizer, FORGET_QA),
        "retain": qa_nll(fitted, tokenizer, RETAIN_QA),
        "refusal": qa_nll(fitted, tokenizer, FORGET_QA, REFUSAL),
    }
    trainer = make_trainer(
        method,
        copy.deepcopy(fitted),
        tokenizer,
        tmp_path,
        retain=None if method in ("gradascent", "taskvector") else RETAIN_QA,
        per_device_train_batch_size=4,
        max_steps=6,
        **UNLEARNING_SETTINGS.get(method, {}),
    )
    trainer.train()
    after = {
        "forget": qa_nll(trainer.model, tokenizer, FORGET_QA),
        "retain": qa_nll(trainer.model, tokenizer, RETAIN_QA),
        "refusal": qa_nll(trainer.model, tokenizer, FORGET_QA, REFUSAL),
    }
    assert after["retain"] - before["retain"] < 0.5 * (after["forget"] - before["forget"])
    if method.startswith("idk"):
        # Trained towards "I don't know" on the forget questions: the refusal becomes likely
        # (by several nats) and the forget answers less likely, a side effect with no set size
        # (0.39 to 0.54-0.73 on the shipped model under every CPU kernel set).
        assert after["refusal"] < before["refusal"] - 1.0
        assert after["forget"] > before["forget"]
    else:  # pushed away from the forget answers themselves (ratios 2.0-5.4 measured)
        assert after["forget"] > 1.5 * before["forget"]


def test_evaluate_accepts_pairs_and_plain_causal_lm_batches(tokenizer, tmp_path):
    from datasets import Dataset

    model = small_model(tokenizer)
    trainer = make_trainer("kl", model, tokenizer, tmp_path)
    paired = trainer.evaluate(ForgetRetainDataset(FORGET_QA, RETAIN_TEXT))
    assert {"eval_loss", "eval_loss/forget", "eval_loss/retain_kl"} <= paired.keys()
    texts = [row["text"] for row in RETAIN_TEXT]
    tokenized = Dataset.from_dict(dict(tokenizer(texts))).map(
        lambda row: {"labels": row["input_ids"]}
    )
    plain = trainer.evaluate(tokenized, metric_key_prefix="heldout")
    assert torch.isfinite(torch.tensor(plain["heldout_loss"]))
    assert not any("/" in key for key in plain)
    unlabelled = trainer.evaluate(tokenized.remove_columns("labels"), metric_key_prefix="lm")
    assert unlabelled["lm_loss"] == pytest.approx(plain["heldout_loss"], rel=1e-4)
