"""The trainer registry and configs: every field documented and a command line, bad settings
named."""

from __future__ import annotations

import dataclasses

import pytest
from trainer_setup import (
    make_config,
)
from transformers import (
    HfArgumentParser,
    TrainingArguments,
)

from waterdrum_hf import trainers


def test_registry_finds_every_method_by_any_spelling():
    names = ["gradascent", "graddiff", "kl", "scrub", "npo", "simnpo", "idkdpo", "idknll"]
    assert trainers.available() == [*names, "taskvector"]
    assert trainers.get("grad_diff") == trainers.get("GradDiff") == trainers.get("grad-diff")
    assert trainers.get("IDK_DPO") == (trainers.IdkDPOTrainer, trainers.IdkDPOConfig)
    assert trainers.get("TaskVector") == (trainers.TaskVectorTrainer, trainers.TaskVectorConfig)
    for name in trainers.available():
        trainer_class, config_class = trainers.get(name)
        assert issubclass(trainer_class, trainers.UnlearningTrainer)
        assert issubclass(config_class, trainers.UnlearningConfig)
    with pytest.raises(ValueError, match="unknown unlearning method 'rmu'.*gradascent.*taskvector"):
        trainers.get("rmu")


@pytest.mark.parametrize("method", trainers.available())
def test_configs_document_every_field_and_parse_from_the_command_line(method, tmp_path):
    _, config_class = trainers.get(method)
    own = [
        f
        for f in dataclasses.fields(config_class)
        if f.name not in TrainingArguments.__dataclass_fields__
    ]
    assert own and all(f.metadata.get("help") for f in own)
    argv = [
        "--output_dir",
        str(tmp_path),
        "--remove_unused_columns",
        "true",
        "--forget_weight",
        "0.5",
    ]
    (config,) = HfArgumentParser(config_class).parse_args_into_dataclasses(argv)
    assert config.forget_weight == 0.5 and config.remove_unused_columns is False


@pytest.mark.parametrize(
    ("method", "overrides", "field"),
    [
        ("kl", {"retain_weight": -1.0}, "retain_weight"),
        ("graddiff", {"forget_weight": -0.1}, "forget_weight"),
        ("graddiff", {"retain_loss": "mse"}, "retain_loss"),
        ("npo", {"beta": 0.0}, "beta"),
        ("simnpo", {"gamma": -1.0}, "gamma"),
        ("idkdpo", {"beta": -0.1}, "beta"),
        ("scrub", {"retain_kl_weight": -0.001}, "retain_kl_weight"),
        ("scrub", {"max_phase_steps": 0}, "max_phase_steps"),
        ("taskvector", {"alpha": -5.0}, "alpha"),
        ("taskvector", {"retain_weight": 1.0}, "retain_weight"),
        ("idknll", {"refusal_answers": []}, "refusal_answers"),
        ("gradascent", {"forget_weight": 0.0}, "forget_weight and retain_weight"),
    ],
)
def test_bad_settings_raise_naming_the_field(method, overrides, field, tmp_path):
    with pytest.raises(ValueError, match=field):
        make_config(method, tmp_path, **overrides)


def test_pin_memory_is_off_without_an_accelerator(tmp_path):
    """Pinning without an accelerator only prints torch's warning at every data loader."""
    import torch

    on_cpu = make_config("kl", tmp_path)  # use_cpu=True
    assert on_cpu.dataloader_pin_memory is False
    default = make_config("kl", tmp_path, use_cpu=False)
    assert default.dataloader_pin_memory is torch.accelerator.is_available()


@pytest.mark.skipif(
    __import__("transformers.utils", fromlist=["x"]).is_torch_bf16_gpu_available(),
    reason="a GPU here runs bf16",
)
def test_bf16_is_turned_off_saying_so_where_no_device_runs_it(tmp_path):
    """A recipe's bf16 (meant for a GPU) does not stop the run on a machine without one;
    --use_cpu asks for bf16 autocast on the CPU and keeps it."""
    with pytest.warns(UserWarning, match=r"^bf16 and bf16_full_eval turned off: no GPU here"):
        config = make_config("npo", tmp_path, use_cpu=False, bf16=True, bf16_full_eval=True)
    assert (config.bf16, config.bf16_full_eval) == (False, False)
    assert make_config("npo", tmp_path, use_cpu=True, bf16=True).bf16 is True
    # Nothing asked, nothing said (the suite turns any warning into an error).
    assert make_config("npo", tmp_path, use_cpu=False).bf16 is False
