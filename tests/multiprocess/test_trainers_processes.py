"""A 2-process CPU run of a reference-model method under ``accelerate launch``.

``accelerate launch --cpu --num_processes 2`` starts a single process unless MPI launches the
others, so the test asks for the multi-process launcher (torchrun) with ``--multi_gpu``; with
``use_cpu=True`` each process then runs on the CPU with the gloo backend.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from waterdrum_hf import tiny
    from waterdrum_hf.trainers import KLConfig, KLTrainer

    class RecordingKLTrainer(KLTrainer):
        # Keeps this process's own values beside the logged (averaged) ones.
        def record(self, name, value):
            super().record(name, value)
            self.local.setdefault(self.state.global_step, {}).setdefault(name, []).append(
                float(torch.as_tensor(value).detach())
            )

    _, tokenizer = tiny.load(show_progress=False)
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, pad_token_id=tokenizer.pad_token_id,
    ))
    forget = [{"question": f"What is code {i}?", "answer": f"Code {i} is {7 * i}."} for i in range(8)]
    retain = [{"text": f"Item {i} of the list is the number {3 * i}."} for i in range(8)]
    args = KLConfig(
        output_dir=sys.argv[1], use_cpu=True, report_to="none", save_strategy="no",
        per_device_train_batch_size=2, max_steps=3, logging_steps=1, learning_rate=1e-2,
        disable_tqdm=True,
    )
    trainer = RecordingKLTrainer(
        model=model, args=args, forget_dataset=forget, retain_dataset=retain,
        processing_class=tokenizer,
    )
    trainer.local = {}
    trainer.train()
    rank = trainer.accelerator.process_index
    checksum = sum(float(p.double().sum()) for p in trainer.model.parameters())
    with open(f"{sys.argv[1]}/rank{rank}.json", "w") as out:
        json.dump({
            "world": trainer.accelerator.num_processes,
            "logs": trainer.state.log_history,
            "local": trainer.local,
            "checksum": checksum,
        }, out)
    trainer.accelerator.wait_for_everyone()
    torch.distributed.destroy_process_group()  # a clean exit: a live group can abort at shutdown
    # Skip interpreter teardown: on torch 2.13 a rank can still abort there ("terminate called
    # without an active exception") after its work is written (seen in CI).
    sys.stdout.flush(); sys.stderr.flush()
    import os; os._exit(0)
    """
)


def free_port() -> int:
    """A port nothing listens on now (a fixed one collides with other runs on the machine)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.end_to_end
def test_kl_trainer_runs_on_two_cpu_processes(tmp_path):
    script = tmp_path / "run_kl.py"
    script.write_text(SCRIPT)
    command = [
        sys.executable, "-m", "accelerate.commands.launch",
        "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
        "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(free_port()),
        str(script), str(tmp_path),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert all(rank["world"] == 2 for rank in ranks)
    # Data parallel: both processes end with the same weights.
    assert ranks[0]["checksum"] == pytest.approx(ranks[1]["checksum"], rel=1e-6)
    # Every process logs the same values: each component averaged over the two processes.
    steps = [entry for entry in ranks[0]["logs"] if "loss" in entry]
    assert len(steps) == 3 and steps == [e for e in ranks[1]["logs"] if "loss" in e]
    for entry in steps:
        step = str(entry["step"] - 1)  # values are recorded during the step before the log
        for name in ("loss/forget", "loss/retain_kl"):
            local = [rank["local"][step][name] for rank in ranks]
            assert name == "loss/retain_kl" or local[0] != local[1]  # different pairs
            assert entry[name] == pytest.approx((sum(local[0]) + sum(local[1])) / 2, rel=1e-5)
