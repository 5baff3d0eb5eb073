"""Step ``fsdp`` (only when named): a LoRA KL run with ``WaterDrumCallback`` under accelerate's
FSDP2, one process on the one GPU.

A single process still takes FSDP's sharded-model path: the model's parameters are DTensors
and the callback generates through them (where evaluation during training breaks in other
unlearning libraries). The run is started with ``accelerate launch --use_fsdp --fsdp_version
2`` in a child process (FSDP needs a process group), which writes its row as JSON. On a CPU,
accelerate prepares no FSDP (a plain model): the smoke run shows only that the worker runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.gpu.common import Budget, Setup


def launch_command(setup: Setup, result: Path) -> list[str]:
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "1",
        "--num_machines", "1", "--mixed_precision", "bf16", "--dynamo_backend", "no",
    ]  # fmt: skip
    if setup.cuda:
        command += [
            "--use_fsdp", "--fsdp_version", "2", "--fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP",
            "--fsdp_transformer_layer_cls_to_wrap", "LlamaDecoderLayer",
            "--fsdp_reshard_after_forward", "true", "--fsdp_state_dict_type", "FULL_STATE_DICT",
        ]  # fmt: skip
    else:
        command += ["--cpu"]
    command += ["-m", "benchmarks.gpu.fsdp", "--result", str(result)]
    return command + (["--smoke"] if setup.smoke else [])


def run(setup: Setup, budget: Budget) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        result = Path(folder) / "row.json"
        done = subprocess.run(
            launch_command(setup, result),
            capture_output=True,
            text=True,
            timeout=budget.seconds,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        if done.returncode != 0 or not result.is_file():
            raise RuntimeError(
                f"the FSDP worker failed ({done.returncode}):\n{done.stderr[-3000:]}"
            )
        row = json.loads(result.read_text())
    return {
        "rows": [row],
        "notes": [
            "KL, LoRA r 8, one process under accelerate launch --use_fsdp --fsdp_version 2; "
            "the callback evaluates at step 0, every eval_steps and at the end"
        ],
    }


def worker(smoke: bool, result: Path) -> None:
    """Inside ``accelerate launch``: train with the callback, write the row."""
    from benchmarks.gpu.callback import callback_for
    from benchmarks.gpu.common import build_model, peak_gib, reset_peak
    from benchmarks.gpu.training import lora_model, unlearning_trainer

    setup = Setup.create(smoke)
    reset_peak(setup.device)
    callback = callback_for(setup, min(setup.sizes.queries_per_owner))
    with tempfile.TemporaryDirectory() as output_dir:
        trainer = unlearning_trainer(
            setup,
            "kl",
            lora_model(build_model(setup)),
            steps=setup.sizes.callback_steps,
            output_dir=output_dir,
            callbacks=[callback],
        )
        runtime = float(trainer.train().metrics["train_runtime"])
        state = trainer.accelerator.state
        parameter = next(trainer.model_wrapped.parameters())
        row = {
            "distributed_type": str(state.distributed_type),
            "fsdp_version": getattr(getattr(state, "fsdp_plugin", None), "fsdp_version", None),
            "parameter_type": type(parameter).__name__,
            "train_runtime_s": runtime,
            "evaluations": len(callback.history),
            "callback_s": sum(entry["seconds"] for entry in callback.history),
            "forget": callback.history[-1].get("forget"),
            "retain": callback.history[-1].get("retain"),
            "peak_gib": peak_gib(setup.device),
        }
        trainer.end()
    if trainer.accelerator.is_main_process:
        result.write_text(json.dumps(row))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--smoke", action="store_true")
    arguments = parser.parse_args()
    worker(arguments.smoke, arguments.result)
