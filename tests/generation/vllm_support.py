"""What the tests that run vLLM (``bash dev.sh vllm``) share: their marks (the ``vllm`` marker
and the warnings of vLLM's environment that are not ours to fix) and how they start
``vllm serve`` on the built-in model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

VLLM_MARKS = [
    pytest.mark.vllm,
    # vLLM's imports: torch's inductor imports torch.utils.mkldnn (script_method). The
    # report's plots: matplotlib's cbook takes math.isfinite of arrays, which the numpy vLLM
    # pins (2.3) warns about (2.4 raises, and matplotlib catches that).
    pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Conversion of an array with ndim > 0:DeprecationWarning"),
    # vLLM's engine client leaves its zmq contexts to the garbage collector, even after
    # VLLMEngine.close() has shut the engine down.
    pytest.mark.filterwarnings("ignore:Unclosed context:ResourceWarning"),
]

VLLM_SERVE_CPU = ("--dtype", "float32", "--enforce-eager", "--max-model-len", "1024")
"""``vllm serve`` options for vLLM's CPU build on the built-in model: float32 as transformers
runs it, no graph capture."""


def serve_tiny(folder: Path, log: Path, **settings):
    """``vllm serve folder`` as ``tiny`` from vLLM's environment (``WATERDRUM_VLLM_PYTHON``;
    skipped without it), with 1 GiB of KV cache instead of the default 4."""
    from waterdrum_hf.generation.vllm_process import vllm_server

    python = os.environ.get("WATERDRUM_VLLM_PYTHON")
    if not python:
        pytest.skip("WATERDRUM_VLLM_PYTHON is not set (bash dev.sh vllm sets it)")
    return vllm_server(
        python, folder, served_name="tiny", options=VLLM_SERVE_CPU, log=log,
        environment={"VLLM_CPU_KVCACHE_SPACE": "1"}, **settings,
    )  # fmt: skip
