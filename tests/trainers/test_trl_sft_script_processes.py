"""TRL's real ``trl/scripts/sft.py``, imports patched to one method, on two CPU processes under
``accelerate launch`` (gloo): every loss term logged and a saved adapter that loads (as in
``test_trl_sft_script.py``, with an epoch of half the steps per process)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest
from trl_scripts import check_run, patched_sft_script, script_args

from waterdrum_hf import trainers


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# A method whose distributed path another's run already takes (a frozen reference: npo; a plain
# ascent: gradascent; refusal pairs: idkdpo) only repeats that run on two processes: `slow`.
REPEATS = {"kl": "npo", "graddiff": "npo", "simnpo": "gradascent", "idknll": "idkdpo"}


@pytest.mark.end_to_end
@pytest.mark.parametrize(
    "method",
    [pytest.param(m, marks=pytest.mark.slow if m in REPEATS else []) for m in trainers.available()],
)
def test_sft_script_runs_on_two_cpu_processes(method, tiny_folder, dataset_folder, tmp_path):
    script = patched_sft_script(method, tmp_path)
    output = tmp_path / "out"
    command = [
        sys.executable, "-m", "accelerate.commands.launch",
        "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
        "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(free_port()),
        str(script), *script_args(method, "lora", tiny_folder, dataset_folder, output),
        "--use_cpu", "true",
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    ) as launched:  # fmt: skip
        try:
            printed, _ = launched.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            os.killpg(launched.pid, signal.SIGKILL)  # the launcher and both ranks
            printed, _ = launched.communicate()
            pytest.fail(f"no exit after 240 s; its output:\n{printed[-4000:]}")
    assert launched.returncode == 0, printed[-4000:]
    check_run(method, "lora", output, tiny_folder, processes=2)
