"""The model arguments TRL's trainers take: an id/path or a model, model_init_kwargs,
trust_remote_code, processing_class by default, ref_model, peft_config, quantization_config."""

from __future__ import annotations

import pytest
import torch
from peft import LoraConfig, PeftModel, get_peft_model
from trainer_setup import FORGET_QA, RETAIN_TEXT, lora, make_config, small_model
from transformers import (
    AutoModelForCausalLM,
    HfArgumentParser,
    TorchAoConfig,
)

from waterdrum_hf import trainers
from waterdrum_hf.trainers import _model

DATA = {"forget_dataset": FORGET_QA, "retain_dataset": RETAIN_TEXT}


def build(method, model, tmp_path, **kwargs):
    config = {k: kwargs.pop(k) for k in list(kwargs) if k in ("model_init_kwargs",)}
    trainer_class, _ = trainers.get(method)
    return trainer_class(
        model=model, args=make_config(method, tmp_path, **config), **DATA, **kwargs
    )


def test_a_path_is_loaded_with_model_init_kwargs_and_its_tokenizer(tiny_folder, tmp_path):
    trainer = build(
        "npo",
        str(tiny_folder),
        tmp_path,
        model_init_kwargs={"dtype": "bfloat16", "attn_implementation": "eager"},
    )
    assert trainer.model.dtype == torch.bfloat16
    assert trainer.model.config._attn_implementation == "eager"
    assert trainer.processing_class.name_or_path == str(tiny_folder)
    assert trainer.base_model_name == str(tiny_folder)
    # The reference is a frozen copy of what was loaded.
    assert trainer.ref_model.dtype == torch.bfloat16
    assert not any(p.requires_grad for p in trainer.ref_model.parameters())


def test_loading_keywords_reach_from_pretrained(tiny_folder, tmp_path, monkeypatch):
    calls = []
    load = AutoModelForCausalLM.from_pretrained

    def recording(name, **kwargs):
        calls.append((name, kwargs))
        return load(name, dtype=kwargs["dtype"])

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", recording)
    config = make_config(
        "kl", tmp_path, model_init_kwargs='{"revision": "main"}', trust_remote_code=True
    )
    trainers.KLTrainer(model=tiny_folder, ref_model=str(tiny_folder), args=config, **DATA)
    assert [name for name, _ in calls] == [str(tiny_folder)] * 2  # model and ref_model
    for _, kwargs in calls:
        assert kwargs == {"revision": "main", "trust_remote_code": True, "dtype": torch.float32}


def test_model_init_kwargs_parse_from_the_command_line(tmp_path):
    argv = ["--output_dir", str(tmp_path), "--model_init_kwargs", '{"dtype": "bfloat16"}']
    (config,) = HfArgumentParser(trainers.NPOConfig).parse_args_into_dataclasses(argv)
    assert config.model_init_kwargs == {"dtype": "bfloat16"}
    assert _model.init_kwargs(config)["dtype"] is torch.bfloat16
    with pytest.raises(ValueError, match="model_init_kwargs must be a JSON object"):
        trainers.NPOConfig(output_dir=str(tmp_path), model_init_kwargs="{not json")
    config.model_init_kwargs = {"dtype": "float64x"}
    with pytest.raises(ValueError, match=r"model_init_kwargs\['dtype'\] must be"):
        _model.init_kwargs(config)


def test_ref_model_may_be_a_path(tiny_folder, tiny_model, tmp_path):
    model = small_model(tiny_model[1])
    trainer = build(
        "npo", model, tmp_path, ref_model=str(tiny_folder), processing_class=tiny_model[1]
    )
    reference = trainer.accelerator.unwrap_model(trainer.ref_model)
    original = tiny_model[0]
    assert all(torch.equal(p, original.get_parameter(n)) for n, p in reference.named_parameters())
    with pytest.raises(ValueError, match="ref_model is the trained model itself"):
        build("npo", model, tmp_path, ref_model=model, processing_class=tiny_model[1])


def test_peft_config_wraps_the_model_and_its_reference_is_the_adapter_off(tiny_folder, tmp_path):
    config = LoraConfig(r=4, target_modules=["q_proj", "v_proj"])
    trainer = build("kl", str(tiny_folder), tmp_path, peft_config=config)
    assert isinstance(trainer.model, PeftModel)
    assert trainer.ref_model is None and trainer._ref_adapter is None  # no second copy
    trainable = [n for n, p in trainer.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)


@pytest.mark.parametrize("reentrant", [True, False])
def test_lora_with_gradient_checkpointing_trains(reentrant, tiny_folder, tmp_path):
    trainer_class, _ = trainers.get("graddiff")
    args = make_config(
        "graddiff",
        tmp_path,
        max_steps=2,
        learning_rate=1e-2,
        gradient_checkpointing=True,
        gradient_checkpointing_kwargs={"use_reentrant": reentrant},
    )
    trainer = trainer_class(
        model=str(tiny_folder),
        args=args,
        peft_config=LoraConfig(r=4, target_modules=["q_proj", "v_proj"]),
        **DATA,
    )
    trainer.train()
    b_factors = [p for n, p in trainer.model.named_parameters() if "lora_B" in n]
    assert b_factors and all(p.abs().sum() > 0 for p in b_factors)


@pytest.mark.parametrize(
    ("model_kind", "kwargs", "error", "message"),
    [
        (
            "peft",
            {"peft_config": LoraConfig(r=4, target_modules=["q_proj"])},
            ValueError,
            r"^peft_config was given, but the model is already a PeftModel",
        ),
        ("plain", {"peft_config": {"r": 4}}, TypeError, r"^peft_config must be a peft.PeftConfig"),
        (
            "plain",
            {"quantization_config": "int8"},
            ValueError,
            r"^quantization_config applies when model is loaded here",
        ),
        (
            "id",
            {},
            ValueError,
            r"^model 'no-such-org/no-such-model' could not be loaded: .*"
            r"\(offline: HF_HUB_OFFLINE is set\); pass a local path or a loaded model$",
        ),
        ("missing-path", {}, ValueError, r"^model '.*/does-not-exist' could not be loaded"),
        ("number", {}, TypeError, r"^model must be a model id, a local path or a loaded model"),
    ],
)
def test_bad_model_arguments_raise_one_clear_line(
    model_kind, kwargs, error, message, tokenizer, tmp_path
):
    model = {
        "peft": lambda: lora(small_model(tokenizer)),
        "plain": lambda: small_model(tokenizer),
        "id": lambda: "no-such-org/no-such-model",
        "missing-path": lambda: str(tmp_path / "does-not-exist"),
        "number": lambda: 3,
    }[model_kind]()
    if kwargs.get("quantization_config") == "int8":
        kwargs = {"quantization_config": int8()}
    with pytest.raises(error, match=message) as raised:
        build("npo", model, tmp_path, processing_class=tokenizer, **kwargs)
    assert "\n" not in str(raised.value)


def int8() -> TorchAoConfig:
    """int8 weights (torchao), which load on a CPU."""
    from torchao.quantization import Int8WeightOnlyConfig

    return TorchAoConfig(Int8WeightOnlyConfig())


def test_a_quantized_model_must_train_an_adapter(tiny_folder, tmp_path):
    quantization = int8()
    with pytest.raises(ValueError, match=r"^the model is quantized.*pass peft_config="):
        build("gradascent", str(tiny_folder), tmp_path, quantization_config=quantization)


def test_a_model_built_in_memory_needs_a_processing_class(tokenizer, tmp_path):
    with pytest.raises(ValueError, match=r"^processing_class is needed"):
        build("npo", small_model(tokenizer), tmp_path)
    model = get_peft_model(small_model(tokenizer), LoraConfig(r=4, target_modules=["q_proj"]))
    trainer = build("npo", model, tmp_path, processing_class=tokenizer)  # today's form
    assert trainer.processing_class is tokenizer
