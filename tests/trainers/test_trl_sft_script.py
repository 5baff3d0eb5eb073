"""TRL's real ``trl/scripts/sft.py`` runs every method with only its imports changed.

The installed script is patched at test time (``trl_scripts.patched_sft_script``) and run as it
is, with a local model folder, a local dataset folder holding ``train.parquet`` (prompt,
completion, forget) and TRL's own flags: fully, with LoRA (``--use_peft``), with LoRA and
reentrant gradient checkpointing (and on two CPU processes: ``test_trl_sft_script_processes.py``). Each run
must log every loss term of its method and save a model (or adapter) that loads and differs from
the one it started from.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from trl_scripts import (
    MODES,
    check_run,
    installed_sft_script,
    logged,
    patched_sft_script,
    script_args,
)

from waterdrum_hf import trainers
from waterdrum_hf.trainers import _model
from waterdrum_hf.trainers import base as trainer_base


def run_in_process(script: Path, argv: list[str], monkeypatch) -> None:
    """``python script argv...``, in this process (the script's ``__main__`` block runs)."""
    monkeypatch.setattr(sys, "argv", [str(script), *argv])
    runpy.run_path(str(script), run_name="__main__")


def test_the_patch_changes_only_the_two_imports(tmp_path):
    original = installed_sft_script().read_text().splitlines()
    patched = patched_sft_script("kl", tmp_path).read_text().splitlines()
    removed = [line.strip() for line in original if line not in patched]
    added = [line.strip() for line in patched if line not in original]
    assert len(removed) == 2 and all(line.startswith("from trl import") for line in removed)
    assert added == [
        "from trl import get_dataset, get_peft_config, get_quantization_config",
        "from waterdrum_hf.trainers import KLTrainer as SFTTrainer",
        "from trl import DatasetMixtureConfig, ModelConfig, ScriptArguments, TrlParser",
        "from waterdrum_hf.trainers import KLConfig as SFTConfig",
    ]


def readme_patch_commands() -> str:
    """The trainers guide's commands that write ``sft_npo.py`` (its "In your TRL script"
    section)."""
    readme = (Path(__file__).parents[2] / "docs" / "guides" / "trainers.md").read_text()
    section = readme.split("## In your TRL script", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return block.split("\npython ", 1)[0]


def test_the_readmes_patch_command_writes_the_same_script(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    subprocess.run(["bash", "-c", readme_patch_commands()], cwd=tmp_path, env=env, check=True)
    by_readme = (tmp_path / "sft_npo.py").read_text().splitlines()
    ours = patched_sft_script("npo", tmp_path).read_text().splitlines()
    assert sorted(by_readme) == sorted(ours)  # the same lines (the README's in another order)
    compile("\n".join(by_readme), "sft_npo.py", "exec")


def test_sft_script_runs_npo(tiny_folder, dataset_folder, tmp_path, monkeypatch):
    script = patched_sft_script("npo", tmp_path)
    output = tmp_path / "out"
    run_in_process(
        script, script_args("npo", "full", tiny_folder, dataset_folder, output), monkeypatch
    )
    check_run("npo", "full", output, tiny_folder)
    first = next(entry for entry in logged(output) if "loss" in entry)
    # At step 1 the model is its reference: NPO's term is (2 / beta) log 2 (beta 0.1).
    assert first["loss/forget"] == pytest.approx(20 * torch.log(torch.tensor(2.0)).item(), 1e-4)


def test_sft_script_runs_npo_with_qlora(tiny_folder, dataset_folder, tmp_path, monkeypatch):
    pytest.importorskip("bitsandbytes")
    quantized = []
    prepare = trainer_base.prepare_model

    def recording(model, *args):
        quantized.append(_model.is_quantized(model))
        return prepare(model, *args)

    monkeypatch.setattr(trainer_base, "prepare_model", recording)
    script = patched_sft_script("npo", tmp_path)
    output = tmp_path / "out"
    run_in_process(
        script, script_args("npo", "qlora", tiny_folder, dataset_folder, output), monkeypatch
    )
    assert quantized == [True]  # the script's --load_in_4bit reached the trainer
    check_run("npo", "qlora", output, tiny_folder)


@pytest.mark.end_to_end
@pytest.mark.parametrize("mode", [mode for mode in MODES if mode != "qlora"])
@pytest.mark.parametrize("method", trainers.available())
def test_sft_script_runs_every_method(
    method, mode, tiny_folder, dataset_folder, tmp_path, monkeypatch
):
    script = patched_sft_script(method, tmp_path)
    output = tmp_path / "out"
    run_in_process(
        script, script_args(method, mode, tiny_folder, dataset_folder, output), monkeypatch
    )
    check_run(method, mode, output, tiny_folder)
