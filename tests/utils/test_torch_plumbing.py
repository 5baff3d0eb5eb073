"""The private torch plumbing: gradient checkpointing left as it was, the private hook it
reads, one-thread sections."""

from __future__ import annotations

import copy
import os
import warnings

import pytest
import torch

from waterdrum_hf import generate
from waterdrum_hf.utils.torch_plumbing import _checkpointing_kwargs, torch_threads


def test_generation_leaves_gradient_checkpointing_as_it_was(tiny_model):
    """Generation runs in eval mode, where checkpointing is idle: with an accelerator (not
    ZeRO-3) the model's checkpointing is not switched off and back on (which would lose
    per-layer settings)."""
    from accelerate import Accelerator

    model, tokenizer = tiny_model
    model = copy.deepcopy(model).train()
    with warnings.catch_warnings():  # deprecated alias in transformers 5; the only one in 4.x
        warnings.simplefilter("ignore", FutureWarning)
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    model.model.layers[1].gradient_checkpointing = False  # only some layers checkpointed
    generate(
        model,
        tokenizer,
        ["The"],
        num_samples=1,
        max_new_tokens=2,
        accelerator=Accelerator(cpu=True),
    )
    assert [layer.gradient_checkpointing for layer in model.model.layers] == [True, False]
    assert model.training


def test_checkpointing_kwargs_still_live_where_transformers_keeps_them(tiny_model):
    """The private hook behind ZeRO-3 generation: TRL re-enables checkpointing with what this
    reads. Fails loudly if transformers stops keeping the arguments there."""
    model = copy.deepcopy(tiny_model[0])
    assert _checkpointing_kwargs(model) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    assert _checkpointing_kwargs(model) == {"use_reentrant": True}


def test_torch_threads_restores_the_count_even_on_error():
    before = torch.get_num_threads()
    target = 2 if before == 1 else 1
    with torch_threads(target):
        assert torch.get_num_threads() == target
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError, match="boom"), torch_threads(target):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before


def test_loading_an_adapter_folder_warns_nothing(tiny_model, tmp_path):
    """peft reads transformers' deprecated `is_gradient_checkpointing`: not the user's doing."""
    from peft import LoraConfig, get_peft_model

    from waterdrum_hf.utils.torch_plumbing import load_causal_lm

    tiny_model[0].save_pretrained(tmp_path / "base")
    adapter = get_peft_model(
        load_causal_lm(tmp_path / "base"), LoraConfig(r=2, target_modules=["q_proj"])
    )
    adapter.save_pretrained(tmp_path / "adapter")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_causal_lm(tmp_path / "adapter")
    assert [str(w.message) for w in caught] == []
    assert type(loaded).__name__ == "PeftModelForCausalLM"


def test_cpu_kernels_names_the_capability_and_a_pinned_mkl_path():
    """In a child whose kernels are lowered (``ATEN_CPU_CAPABILITY`` is read at import) and
    whose MKL path is pinned; and as this process runs (no pin: the capability alone)."""
    import subprocess
    import sys

    from waterdrum_hf.utils.torch_plumbing import cpu_kernels

    code = "from waterdrum_hf.utils.torch_plumbing import cpu_kernels; print(cpu_kernels())"
    pins = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
    for extra, expected in (
        ({}, "default-mklcompatible"),
        ({"ONEDNN_MAX_CPU_ISA": "AVX2"}, "default-mklcompatible-onednnavx2"),
    ):
        env = {k: v for k, v in os.environ.items() if k != "ONEDNN_MAX_CPU_ISA"} | pins | extra
        child = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True
        )
        assert child.stdout.strip() == expected, child.stderr[-2000:]
    if not {"MKL_CBWR", "ONEDNN_MAX_CPU_ISA"} & os.environ.keys():
        assert cpu_kernels() == torch.backends.cpu.get_cpu_capability().lower()


@pytest.mark.parametrize(
    ("vendor", "pinned", "branch"),
    [
        ("GenuineIntel", "AVX2", "avx2"),
        ("GenuineIntel", "BRANCH=AVX512,STRICT", "avx512,strict"),
        ("AuthenticAMD", "AVX2", "auto"),
        ("AuthenticAMD", "avx2,strict", "auto,strict"),
        ("AuthenticAMD", "COMPATIBLE", "compatible"),
        (None, "AVX2", "auto"),
        ("AuthenticAMD", "AUTO", "auto"),
        ("GenuineIntel", None, None),
    ],
)
def test_mkl_takes_a_pinned_isa_branch_on_intel_processors_only(
    vendor, pinned, branch, monkeypatch
):
    from waterdrum_hf.utils import torch_plumbing

    monkeypatch.setattr(torch_plumbing, "cpu_vendor", lambda: vendor)
    assert torch_plumbing.mkl_branch(pinned) == branch


def test_a_pin_mkl_ignores_computes_what_its_auto_branch_does():
    """Where :func:`mkl_branch` says MKL_CBWR=AVX2 runs the AUTO branch (a processor not made
    by Intel), a matrix product and a weight gradient have AUTO's bits, and the kernels' name
    says ``mklauto``; COMPATIBLE (SSE2) has other bits on every processor."""
    import subprocess
    import sys

    from waterdrum_hf.utils.torch_plumbing import mkl_branch

    code = (
        "import hashlib, torch; from waterdrum_hf.utils.torch_plumbing import cpu_kernels\n"
        "torch.manual_seed(0); a, b = torch.randn(257, 129), torch.randn(129, 300)\n"
        "w = torch.randn(512, 129, requires_grad=True)\n"
        "torch.nn.functional.linear(a, w).square().sum().backward()\n"
        "bits = (a @ b).numpy().tobytes() + w.grad.numpy().tobytes()\n"
        "print(hashlib.sha256(bits).hexdigest(), cpu_kernels())"
    )

    def run(pin: str) -> tuple[str, str]:
        env = {**os.environ, "MKL_CBWR": pin, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        child = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True
        )
        assert child.returncode == 0, child.stderr[-2000:]
        bits, kernels = child.stdout.split()
        return bits, kernels

    (avx2, avx2_name), (auto, _), (compatible, _) = map(run, ("AVX2", "AUTO", "COMPATIBLE"))
    assert compatible not in (avx2, auto)
    if mkl_branch("AVX2") == "auto":
        assert avx2 == auto
        assert avx2_name.endswith("-mklauto")
    else:
        assert avx2_name.endswith("-mklavx2")
