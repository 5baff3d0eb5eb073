"""QLoRA: a trainer loads its model 4-bit with bitsandbytes and trains a LoRA adapter on it.

bitsandbytes quantizes on a CPU too (its CPU backend), so the training test runs wherever the
``qlora`` extra is installed (``pip install -e ".[dev,qlora]"``) and skips elsewhere; the
missing-package error is tested everywhere.
"""

from __future__ import annotations

import importlib.util

import pytest
import torch
from peft import LoraConfig, PeftModel
from trainer_setup import FORGET_QA, RETAIN_TEXT, make_config
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

from waterdrum_hf import trainers
from waterdrum_hf.trainers import _model

DATA = {"forget_dataset": FORGET_QA, "retain_dataset": RETAIN_TEXT}


def nf4() -> BitsAndBytesConfig:
    return BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.float32
    )


def test_bitsandbytes_without_its_package_says_so(tiny_folder, tmp_path, monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        _model.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "bitsandbytes" else find_spec(name, *a),
    )
    with pytest.raises(ValueError, match=r"^quantization_config is a bitsandbytes config \(QLoRA"
                       r"\), which needs the bitsandbytes package, not found here") as raised:  # fmt: skip
        trainers.NPOTrainer(
            model=str(tiny_folder),
            args=make_config("npo", tmp_path),
            quantization_config=nf4(),
            peft_config=LoraConfig(r=4, target_modules=["q_proj"]),
            **DATA,
        )
    assert "\n" not in str(raised.value)


def test_qlora_trains_the_adapter_of_a_4bit_model_under_gradient_checkpointing(
    tiny_folder, tmp_path
):
    bnb = pytest.importorskip("bitsandbytes")
    checkpointing = {"gradient_checkpointing_kwargs": {"use_reentrant": True}}
    args = make_config(
        "npo",
        tmp_path,
        max_steps=3,
        learning_rate=1e-2,
        gradient_checkpointing=True,
        **checkpointing,
    )
    trainer = trainers.NPOTrainer(
        model=str(tiny_folder),
        args=args,
        quantization_config=nf4(),
        peft_config=LoraConfig(r=4, target_modules=["q_proj", "v_proj"]),
        **DATA,
    )
    model = trainer.model
    assert isinstance(model, PeftModel) and model.is_loaded_in_4bit
    base = model.get_base_model().model.layers[0].self_attn.q_proj.base_layer
    assert isinstance(base, bnb.nn.Linear4bit)
    packed = base.weight.detach().clone()
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    trainer.train()
    # The adapter learned; the 4-bit weights did not move; both loss terms were logged.
    b_factors = [p for n, p in model.named_parameters() if "lora_B" in n]
    assert b_factors and all(p.abs().sum() > 0 for p in b_factors)
    assert torch.equal(base.weight, packed)
    logged = trainer.state.log_history[0]
    assert {"loss/forget", "loss/retain", "loss/retain_nll"} <= set(logged)
    # The saved adapter loads onto a fresh 4-bit base and gives the trained model's logits.
    trainer.save_model()
    ids = torch.tensor([[1, 5, 9, 13, 17]])
    model.eval()
    with torch.no_grad():
        expected = model(input_ids=ids).logits
        fresh = AutoModelForCausalLM.from_pretrained(str(tiny_folder), quantization_config=nf4())
        loaded = PeftModel.from_pretrained(fresh, str(tmp_path)).eval()
        torch.testing.assert_close(loaded(input_ids=ids).logits, expected)
