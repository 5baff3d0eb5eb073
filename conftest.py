"""Settings for every test of the repository (``tests/``, and ``benchmarks/tests/`` for the
benchmarks' own code): offline, caches in a temporary folder, one torch thread, property tests
derandomized; and the fixtures both use (the built-in tiny model, the toy corpus's passages).

The tiny model may be reused from ``$HF_HOME`` (``dev.sh`` sets ``./.hf_home``): building it
takes a minute. Everything else a test run writes (``datasets`` and ``evaluate`` caches,
dynamic modules, hypothesis's files) goes to a temporary folder removed at exit, so tests leave
nothing in the user's cache or the checkout.
"""

from __future__ import annotations

import atexit
import os
import shutil
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
def texts() -> list[str]:
    """The first six passages of the toy corpus (queries and generation tests)."""
    from waterdrum_hf.data import toy_corpus

    return toy_corpus()["text"][:6]
