"""examples/unlearn.py saves the model it scored: loading the saved folder gives the printed
WaterDrum (with --lora too, whose adapter was trained on the fitted model, not the one on disk)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

from waterdrum_hf import trainers

SCRIPT = Path(__file__).parents[2] / "examples" / "unlearn.py"


def load_script(monkeypatch):
    """The script as a module (registered while the test runs: its dataclasses need it)."""
    spec = importlib.util.spec_from_file_location("unlearn_example", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.end_to_end
def test_lora_run_saves_the_merged_model_it_scored(tiny_model, tmp_path, monkeypatch):
    example = load_script(monkeypatch)
    script = example.ScriptArguments(
        lora=True,
        owners=2,
        passages_per_owner=2,
        fit_epochs=10,
        num_samples=2,
        max_new_tokens=24,
    )
    _, config_class = trainers.get("kl")
    config = config_class(
        **{
            **example.EXAMPLE_DEFAULTS,
            "output_dir": str(tmp_path / "unlearned"),
            "use_cpu": True,
            "disable_tqdm": True,
            "num_train_epochs": 2,
            "learning_rate": 5e-3,
        }
    )
    outcome = example.run(script, config)
    saved = Path(config.output_dir)
    assert not (saved / "adapter_config.json").exists()  # a whole model, the adapter merged
    model = AutoModelForCausalLM.from_pretrained(saved)
    tokenizer = AutoTokenizer.from_pretrained(saved)
    again = example.read_waterdrum(
        model, tokenizer, outcome["forget"], outcome["retain"], script, config.seed
    )
    for key in ("forget", "retain"):
        assert again[key] == pytest.approx(outcome["after"][key], abs=1e-6)
    # The unlearning moved the model: the saved one is not the original either.
    assert again["forget"] != pytest.approx(outcome["before"]["forget"], abs=1e-6)
