"""Bad data and arguments to the unlearning trainers fail at once, naming what is wrong."""

from __future__ import annotations

import threading

import pytest
from datasets import Dataset
from trainer_setup import (
    FORGET_QA,
    RETAIN_QA,
    RETAIN_TEXT,
    full_batch,
    make_config,
    make_trainer,
    small_model,
)

from waterdrum_hf import trainers
from waterdrum_hf.data import ForgetRetainDataset


def test_a_batch_without_forget_and_retain_names_the_collator(tokenizer, tmp_path):
    trainer = make_trainer("gradascent", small_model(tokenizer), tokenizer, tmp_path)
    trainer.model.train()
    plain = dict(tokenizer(["a plain batch"], return_tensors="pt"))
    with pytest.raises(ValueError, match="ForgetRetainCollator"):
        trainer.compute_loss(trainer.model, plain)


def test_an_uncopyable_model_without_ref_model_raises(tokenizer, tmp_path):
    model = small_model(tokenizer)
    model.lock = threading.Lock()  # deepcopy cannot copy a lock
    with pytest.raises(ValueError, match="cannot copy the model.*ref_model"):
        make_trainer("npo", model, tokenizer, tmp_path)
    trainer = make_trainer("npo", model, tokenizer, tmp_path, ref_model=small_model(tokenizer))
    assert trainer.ref_model is not None


@pytest.mark.parametrize(
    ("method", "data", "error", "message"),
    [
        ("taskvector", {"retain_dataset": RETAIN_TEXT}, ValueError, "no forget set"),
        ("kl", {"forget_dataset": FORGET_QA}, ValueError, "retain_dataset is required"),
        (
            "idkdpo",
            {"forget_dataset": RETAIN_TEXT, "retain_dataset": RETAIN_QA},
            ValueError,
            r"forget rows: refusal answers follow a prompt, but the example has no 'question', "
            r"'prompt' or 'messages' column \(columns: \['text'\]\)",
        ),
        (
            "idknll",
            {"train_dataset": ForgetRetainDataset(FORGET_QA, RETAIN_QA)},
            ValueError,
            "alternative_answers",
        ),
        (
            "kl",
            {
                "train_dataset": ForgetRetainDataset(FORGET_QA, RETAIN_QA),
                "forget_dataset": FORGET_QA,
            },
            TypeError,
            "either",
        ),
        # Rows the collator cannot read are refused here, not at the first batch of train().
        (
            "kl",
            {"forget_dataset": [{"content": "no text column"}], "retain_dataset": RETAIN_TEXT},
            ValueError,
            r"forget rows: the example's format is not recognised: its columns are \['content'\]"
            r".*'prompt' and 'completion', 'messages'.*text_column=",
        ),
        (
            "graddiff",
            {"forget_dataset": FORGET_QA, "retain_dataset": [*RETAIN_TEXT, {"txt": "typo"}]},
            ValueError,
            r"retain rows: .*\['txt'\]",
        ),
        (
            "npo",
            {
                "forget_dataset": Dataset.from_dict({"question": ["Who?"]}),
                "retain_dataset": RETAIN_TEXT,
            },
            ValueError,
            r"forget rows: .*\['question'\].*'question' and 'answer' \(QA\)",
        ),
        (
            "kl",
            {"train_dataset": ForgetRetainDataset(FORGET_QA, [{"body": "x"}])},
            ValueError,
            r"retain rows: .*\['body'\]",
        ),
        (
            "taskvector",
            {"train_dataset": Dataset.from_dict({"text": ["a forget text"]})},
            ValueError,
            r"train_dataset has no 'forget' column \(its columns: \['text'\]\): mark each row "
            r"True \(forget\) or False \(retain\) in a boolean 'forget' column",
        ),
    ],
)
def test_bad_data_raises(method, data, error, message, tokenizer, tmp_path):
    trainer_class, _ = trainers.get(method)
    with pytest.raises(error, match=message):
        trainer_class(
            model=small_model(tokenizer),
            args=make_config(method, tmp_path),
            processing_class=tokenizer,
            **data,
        )


def test_rows_in_the_configured_columns_are_accepted(tokenizer, tmp_path):
    forget = Dataset.from_dict({"body": ["The north tower is red.", "Marta keeps the key."]})
    retain = [{"body": "A list is mutable."}, {"body": "len counts items."}]
    trainer = trainers.KLTrainer(
        model=small_model(tokenizer),
        args=make_config("kl", tmp_path, text_column="body"),
        processing_class=tokenizer,
        forget_dataset=forget,
        retain_dataset=retain,
    )
    batch = full_batch(trainer)
    assert batch["forget"]["input_ids"].shape[0] == 2


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"processing_class": None}, ValueError, "processing_class"),
        ({"args": "npo"}, TypeError, "KLConfig"),
        (
            {"model": "meta-llama/Llama-3.1-8B"},
            ValueError,
            r"^model 'meta-llama/Llama-3.1-8B' could not be loaded: it is not a local folder",
        ),
    ],
)
def test_bad_trainer_arguments_raise(changes, error, message, tokenizer, tmp_path):
    # The parametrised dict is shared by every run of this test: read it, never change it.
    kwargs = {
        "model": small_model(tokenizer),
        "forget_dataset": FORGET_QA,
        "retain_dataset": RETAIN_QA,
        "processing_class": tokenizer,
        **{key: value for key, value in changes.items() if key != "args"},
        "args": make_config(changes.get("args", "kl"), tmp_path),
    }
    with pytest.raises(error, match=message):
        trainers.KLTrainer(**kwargs)


def test_a_prompt_that_fills_max_length_raises(tokenizer, tmp_path):
    model = small_model(tokenizer)
    long_question = [{"question": "why " * 80, "answer": "no"}]
    trainer = make_trainer(
        "gradascent", model, tokenizer, tmp_path, forget=long_question, max_length=32
    )
    with pytest.raises(ValueError, match="max_length=32"):
        full_batch(trainer)
