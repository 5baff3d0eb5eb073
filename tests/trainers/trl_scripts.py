"""TRL's own ``trl/scripts/sft.py``, from the installed trl, with one method put in by its imports.

Nothing of TRL's code is kept here: the script is read from the installed package at test time,
the two ``from trl import`` lines that bring ``SFTTrainer`` and ``SFTConfig`` are changed to take
a method's trainer and config under those names, and the result is written to a temporary
folder and run as it is (``python sft_<method>.py ...``, or under ``accelerate launch``).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import torch
from datasets import Dataset
from peft import PeftModel
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM

from waterdrum_hf import trainers

SWAPPED = {"SFTTrainer": "Trainer", "SFTConfig": "Config"}
TRL_IMPORT = re.compile(r"^(?P<indent>[ \t]*)from trl import (?P<names>.+)$", re.MULTILINE)

FORGET = [
    ("Which colour is the north tower?", " The north tower is painted red."),
    ("Who keeps the harbour key?", " Old Marta keeps the harbour key."),
    ("When does the ferry leave?", " The ferry leaves at seven sharp."),
    ("What does the blue flag mean?", " The blue flag means a storm."),
]
RETAIN = [
    ("What is a list in Python?", " A list is a mutable sequence."),
    ("What does len return?", " len returns the number of items."),
    ("What is a tuple?", " A tuple is an immutable sequence."),
    ("What does print do?", " print writes text to the output."),
]

EXPECTED_TERMS = {
    "gradascent": {"loss/forget"},
    "graddiff": {"loss/forget", "loss/retain", "loss/retain_nll"},
    "kl": {"loss/forget", "loss/retain", "loss/retain_kl"},
    "scrub": {
        "loss/forget",
        "loss/forget_kl",
        "loss/retain",
        "loss/retain_nll",
        "loss/retain_kl",
        "scrub/max_phase",
    },
    "npo": {"loss/forget", "loss/retain", "loss/retain_nll"},
    "simnpo": {"loss/forget", "loss/retain", "loss/retain_nll"},
    "idkdpo": {"loss/forget", "loss/retain", "loss/retain_nll", "rewards/margin"},
    "idknll": {"loss/forget", "loss/retain", "loss/retain_nll"},
    "taskvector": {"loss/forget"},
}
"""The loss terms each method logs (SCRUB with one max and one min step)."""

METHOD_FLAGS = {"scrub": ["--max_phase_steps", "1", "--min_phase_steps", "1"]}

MODES = {
    "full": [],
    "lora": ["--use_peft", "--lora_r", "8", "--lora_target_modules", "q_proj", "v_proj"],
    "lora_checkpointing": [
        "--use_peft", "--lora_r", "8", "--lora_target_modules", "q_proj", "v_proj",
        "--gradient_checkpointing", "--gradient_checkpointing_kwargs", '{"use_reentrant": true}',
    ],
    "qlora": [
        "--load_in_4bit", "--use_peft", "--lora_r", "8", "--lora_target_modules", "q_proj", "v_proj",
    ],
}  # fmt: skip
"""Reentrant checkpointing passes no gradient to a frozen base's adapters unless the trainer
turns input gradients on: the mode where other unlearning trainers stop learning. QLoRA (4-bit
with bitsandbytes, which runs on a CPU too) is run for one method only: its loading is shared."""


def installed_sft_script() -> Path:
    """The installed ``trl/scripts/sft.py``."""
    return Path(importlib.util.find_spec("trl.scripts.sft").origin)


def patched_sft_script(method: str, folder: Path) -> Path:
    """TRL's ``sft.py`` with ``SFTTrainer``/``SFTConfig`` imported from waterdrum_hf.trainers as
    ``method``'s trainer and config; written to ``folder/sft_<method>.py``."""
    trainer_class, config_class = trainers.get(method)
    names = {"SFTTrainer": trainer_class.__name__, "SFTConfig": config_class.__name__}
    source = installed_sft_script().read_text()
    changed = 0

    def swap(match: re.Match) -> str:
        nonlocal changed
        imported = [name.strip() for name in match["names"].split(",")]
        ours = [name for name in imported if name in names]
        if not ours:
            return match[0]
        changed += 1
        kept = ", ".join(name for name in imported if name not in names)
        indent = match["indent"]
        ours_line = ", ".join(f"{names[name]} as {name}" for name in ours)
        return (
            f"{indent}from trl import {kept}\n{indent}from waterdrum_hf.trainers import {ours_line}"
        )

    patched = TRL_IMPORT.sub(swap, source)
    assert changed == 2, f"expected two `from trl import` lines naming SFT*, changed {changed}"
    path = folder / f"sft_{method}.py"
    path.write_text(patched)
    return path


def write_dataset(folder: Path) -> Path:
    """A local dataset folder with ``train.parquet``: prompt, completion, forget."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [(q, a, True) for q, a in FORGET] + [(q, a, False) for q, a in RETAIN]
    Dataset.from_dict(
        {
            "prompt": [f"Question: {q}\nAnswer:" for q, _, _ in rows],
            "completion": [a for _, a, _ in rows],
            "forget": [f for _, _, f in rows],
        }
    ).to_parquet(folder / "train.parquet")
    return folder


def script_args(method: str, mode: str, model: Path, data: Path, output: Path) -> list[str]:
    """The command-line flags of one run: 2 steps, checkpoint and logs at step 2, on the CPU."""
    return [
        "--model_name_or_path", str(model),
        "--dataset_name", str(data),
        "--output_dir", str(output),
        "--max_steps", "2",
        "--per_device_train_batch_size", "2",
        "--learning_rate", "1e-2",
        "--logging_steps", "1",
        "--save_strategy", "steps",
        "--save_steps", "2",
        "--use_cpu",
        "--report_to", "none",
        "--disable_tqdm", "true",
        "--seed", "0",
        *METHOD_FLAGS.get(method, []),
        *MODES[mode],
    ]  # fmt: skip


def logged(output: Path) -> list[dict]:
    """The run's ``log_history``, from its step-2 checkpoint."""
    state = output / "checkpoint-2" / "trainer_state.json"
    return json.loads(state.read_text())["log_history"]


def check_run(method: str, mode: str, output: Path, base: Path, processes: int = 1) -> None:
    """Every loss term logged at both steps; the saved model loads and was trained. Four
    forget rows, two pairs per process and step: one epoch takes ``2 / processes`` steps."""
    steps = [entry for entry in logged(output) if "loss" in entry]
    assert [entry["step"] for entry in steps] == [1, 2]
    assert steps[-1]["epoch"] == pytest.approx(processes)
    terms = EXPECTED_TERMS[method]
    logged_terms = set().union(*steps) & {k for k in set().union(*steps) if "/" in k}
    assert logged_terms == terms, f"{method}: logged {sorted(logged_terms)}"
    assert all(torch.isfinite(torch.tensor(entry["loss"])) for entry in steps)
    card = (output / "README.md").read_text()
    assert "unlearning" in card and type_name(method) in card
    original = AutoModelForCausalLM.from_pretrained(base)
    if mode != "full" and method != "taskvector":  # an adapter (TaskVector merges its own)
        adapter = load_file(output / "adapter_model.safetensors")
        b_factors = [v for k, v in adapter.items() if "lora_B" in k]
        assert b_factors and all(v.abs().sum() > 0 for v in b_factors)  # it learned
        model = PeftModel.from_pretrained(original, output)
        assert model(torch.tensor([[1, 2, 3]])).logits.isfinite().all()
        return
    model = AutoModelForCausalLM.from_pretrained(output)
    changed = [
        name
        for name, param in model.named_parameters()
        if not torch.equal(param, original.get_parameter(name))
    ]
    assert changed


def type_name(method: str) -> str:
    return trainers.get(method)[0].__name__
