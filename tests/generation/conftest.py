"""The vLLM tests' shared weights and server, made once a session (each vLLM start costs 30 to
60 s on two cores): the built-in model's folder as it ships (its ``generation_config.json``
with the repetition penalty of 1.3 included), two LoRA adapters of it, and one ``vllm serve``
of the three. Requested only by the tests marked ``vllm``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.generation.vllm_support import serve_tiny


@pytest.fixture(scope="session")
def vllm_weights(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """The built-in model's folder and two LoRA adapters of it, ``a`` and ``b`` (seeds 0, 1)."""
    import torch
    from peft import LoraConfig, get_peft_model

    from waterdrum_hf import tiny

    root = tmp_path_factory.mktemp("vllm")
    folder = root / "tiny"
    shutil.copytree(tiny.pretrained_location(tiny.NAME, "model"), folder)
    adapters = {}
    for seed, name in enumerate(["a", "b"]):
        model, _ = tiny.load()
        torch.manual_seed(seed)
        config = LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
        get_peft_model(model, config).save_pretrained(root / name)
        adapters[name] = root / name
    return folder, adapters


@pytest.fixture(scope="session")
def vllm_served(vllm_weights, tmp_path_factory) -> tuple[str, Path, dict[str, Path]]:
    """One ``vllm serve`` of the built-in model (``tiny``) and both adapters (``a``, ``b``):
    its URL, the model folder and the adapters."""
    folder, adapters = vllm_weights
    log = tmp_path_factory.mktemp("server") / "server.log"
    with serve_tiny(folder, log, lora_modules=adapters, max_lora_rank=8) as url:
        yield url, folder, adapters
