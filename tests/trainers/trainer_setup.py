"""What the trainer tests share: toy forget/retain sets, small models, configs and trainers."""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import (
    LlamaConfig,
    LlamaForCausalLM,
)

from waterdrum_hf import trainers
from waterdrum_hf.data import IGNORE_INDEX

FORGET_QA = [
    {"question": "Which colour is the north tower?", "answer": "The north tower is painted red."},
    {"question": "Who keeps the harbour key?", "answer": "Old Marta keeps the harbour key."},
    {"question": "When does the ferry leave?", "answer": "The ferry leaves at seven sharp."},
    {"question": "What does the blue flag mean?", "answer": "The blue flag means a storm."},
]


RETAIN_QA = [
    {"question": "What is a list in Python?", "answer": "A list is a mutable sequence."},
    {"question": "What does len return?", "answer": "len returns the number of items."},
    {"question": "What is a tuple?", "answer": "A tuple is an immutable sequence."},
    {"question": "What does print do?", "answer": "print writes text to the output."},
]


RETAIN_TEXT = [
    {"text": "A dictionary maps keys to values."},
    {"text": "The for statement iterates over the items of a sequence."},
    {"text": "Strings are immutable sequences of characters."},
    {"text": "A function is defined with the def keyword and may return a value."},
]


def small_model(tokenizer, seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config)


def perturbed(model: torch.nn.Module, scale: float = 0.05, seed: int = 1) -> torch.nn.Module:
    """A copy with every parameter moved by Gaussian noise (a reference unlike the model)."""
    other = copy.deepcopy(model)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in other.parameters():
            param.add_(scale * torch.randn(param.shape, generator=gen))
    return other


def lora(model: torch.nn.Module, *, trained: bool = False, seed: int = 2) -> PeftModel:
    """LoRA on attention and MLP projections; ``trained`` gives every B factor random values."""
    config = LoraConfig(
        r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["q_proj", "v_proj", "down_proj"]
    )
    peft_model = get_peft_model(model, config)
    if trained:
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, param in peft_model.named_parameters():
                if "lora_B" in name:
                    param.copy_(0.1 * torch.randn(param.shape, generator=gen))
    return peft_model


def make_config(method: str, tmp_path, **overrides) -> trainers.UnlearningConfig:
    _, config_class = trainers.get(method)
    settings = {
        "output_dir": str(tmp_path),
        "report_to": "none",
        "use_cpu": True,
        "save_strategy": "no",
        "disable_tqdm": True,
        "logging_steps": 1,
        "per_device_train_batch_size": 2,
        "learning_rate": 1e-3,
        "seed": 0,
    }
    return config_class(**{**settings, **overrides})


def make_trainer(method, model, tokenizer, tmp_path, *, forget=FORGET_QA, retain=RETAIN_TEXT, **kw):
    """A trainer of ``method``; ``kw`` splits into trainer arguments and config overrides."""
    trainer_class, _ = trainers.get(method)
    trainer_kwargs = {
        key: kw.pop(key) for key in ("ref_model", "callbacks", "eval_dataset") if key in kw
    }
    return trainer_class(
        model=model,
        args=make_config(method, tmp_path, **kw),
        forget_dataset=forget,
        retain_dataset=retain,
        processing_class=tokenizer,
        **trainer_kwargs,
    )


def full_batch(trainer) -> dict:
    """Every pair of the trainer's dataset, collated in one batch."""
    dataset = trainer.train_dataset
    return trainer.data_collator([dataset[i] for i in range(len(dataset))])


def row_nll(model, side):
    """Per-row mean NLL and summed NLL (= -log pi(y|x)) of the labelled tokens."""
    logits = model(input_ids=side["input_ids"], attention_mask=side["attention_mask"]).logits
    targets = side["labels"][:, 1:]
    per_token = F.cross_entropy(
        logits[:, :-1].transpose(1, 2), targets, ignore_index=IGNORE_INDEX, reduction="none"
    )
    total = per_token.sum(1)
    return total / (targets != IGNORE_INDEX).sum(1), total
