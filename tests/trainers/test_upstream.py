"""The trainers rely on no private upstream name outside one fenced, version-checked module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from trainer_setup import lora, small_model

from waterdrum_hf.trainers import _upstream

TRAINERS = Path(_upstream.__file__).parent


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_only_the_fence_imports_trl():
    importers = {
        path.name
        for path in TRAINERS.glob("*.py")
        if any(name == "trl" or name.startswith("trl.") for name in imported_modules(path))
    }
    assert importers == {"_upstream.py"}


@pytest.mark.parametrize("kind", ["deepspeed", "fsdp"])
def test_the_fence_gives_trls_preparers_in_the_tested_range(kind):
    from trl.models import utils

    assert _upstream.reference_preparer(kind) is getattr(utils, f"prepare_{kind}")
    assert _upstream.reference_preparer(kind, "0.29.0") is getattr(utils, f"prepare_{kind}")


@pytest.mark.parametrize("installed", ["0.28.1", "2.0.0", None])
def test_the_fence_refuses_other_trl_versions_in_one_line(installed, monkeypatch):
    monkeypatch.setattr(_upstream, "installed_version", lambda package: installed)
    with pytest.raises(RuntimeError, match=r"^a frozen reference model under fsdp is wrapped with "
                       r"trl.models.utils.prepare_fsdp, tested with trl<2,>=0.29 only") as raised:  # fmt: skip
        _upstream.reference_preparer("fsdp")
    assert "\n" not in str(raised.value) and str(installed or "no trl") in str(raised.value)


def test_active_adapter_switches_and_restores(tokenizer):
    model = lora(small_model(tokenizer), trained=True)
    inputs = torch.tensor([[1, 2, 3, 4]])
    model.eval()
    with_adapter = model(inputs).logits
    with model.disable_adapter():
        base = model(inputs).logits
    with _upstream.active_adapter(model, None):
        assert torch.equal(model(inputs).logits, base)
    model.add_adapter("other", model.peft_config["default"])
    with _upstream.active_adapter(model, "other"):
        assert model.active_adapter == "other"
        assert torch.equal(model(inputs).logits, base)  # a fresh adapter: B = 0
    assert model.active_adapter == "default"
    assert torch.equal(model(inputs).logits, with_adapter)
