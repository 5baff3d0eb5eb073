"""Test-wide settings: offline, caches in a temporary folder, small tokenizers built in code,
property tests derandomized.

The tiny model may be reused from ``$HF_HOME`` (``dev.sh`` sets ``./.hf_home``): building it
takes a minute. Everything else a test run writes (``datasets`` and ``evaluate`` caches,
dynamic modules, hypothesis's files) goes to a temporary folder removed at exit, so tests leave
nothing in the user's cache or the checkout.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (seeded by each test's name) and keep no
# example database, so a failure replays as it is and nothing is written to the checkout.
settings.register_profile("waterdrum", derandomize=True, database=None, print_blob=True)
settings.load_profile("waterdrum")

# Must happen before transformers / datasets / evaluate are imported anywhere.
SCRATCH = tempfile.mkdtemp(prefix="waterdrum-hf-tests-")
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)
os.environ.setdefault("HF_HOME", os.path.join(SCRATCH, "hf_home"))
for variable, folder in (
    ("HF_DATASETS_CACHE", "datasets"),
    ("HF_EVALUATE_CACHE", "evaluate"),
    ("HF_METRICS_CACHE", "metrics"),
    ("HF_MODULES_CACHE", "modules"),
    ("HYPOTHESIS_STORAGE_DIRECTORY", "hypothesis"),  # its cache of constants
):
    os.environ[variable] = os.path.join(SCRATCH, folder)
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread():
    """The tests' models are tiny: one thread is as fast, and many times faster on a busy
    machine (threads oversubscribed by other processes stall every small operation)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_model():
    """The built-in tiny ``(model, tokenizer)``, built once per session under HF_HOME; shared, so
    the session fails if a test changes its weights."""
    import torch

    from waterdrum_hf import tiny

    model, tokenizer = tiny.load(show_progress=False)
    before = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    yield model, tokenizer
    changed = [
        name for name, tensor in model.state_dict().items() if not torch.equal(tensor, before[name])
    ]
    assert not changed, (
        f"a test changed the shared tiny model in place ({changed[0]}, ...): deep-copy it before "
        "training, or the tests after it see another model"
    )


@pytest.fixture(scope="module")
def tiny_folder(tiny_model, tmp_path_factory):
    """The tiny model saved as a local model folder, as a user (or lm-eval's
    ``pretrained``) would pass it."""
    folder = tmp_path_factory.mktemp("tiny")
    model, tokenizer = tiny_model
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def run_two_processes():
    """Runs a script under ``torchrun --standalone`` on two CPU processes. The rendezvous port
    is a free one each time (a fixed port collides with other runs on a shared machine); a
    failure shows the script's own error output."""

    def run(script, *args, timeout: int = 600) -> None:
        command = [
            sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
            "2", str(script), *map(str, args),
        ]  # fmt: skip
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        for _ in range(2):  # once more only if another program took the port meanwhile
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
            if done.returncode == 0 or "address already in use" not in done.stderr.lower():
                break
        assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}"

    return run


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """The first six passages of the toy corpus (queries and generation tests)."""
    from waterdrum_hf.data import toy_corpus

    return toy_corpus()["text"][:6]
