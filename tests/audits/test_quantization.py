"""The quantization audit quantizes for real (torchao, on the CPU) and refuses what it cannot do."""

from __future__ import annotations

import copy
import dataclasses
import sys
from pathlib import Path

import pytest
import torch

from waterdrum_hf.audits import AuditConfig, QuantizationCheck, check_backend, quantize
from waterdrum_hf.audits.quantization import GROUP_SIZE, _checked

pytest.importorskip("torchao")


def logits(model, tokenizer, text="The for statement iterates over a sequence."):
    ids = tokenizer(text, return_tensors="pt").input_ids
    with torch.no_grad():
        return model(ids).logits


def test_8_and_4_bit_quantization_replace_the_linear_weights(tiny_model):
    model, tokenizer = tiny_model
    reference = logits(model, tokenizer)
    linear = sum(isinstance(m, torch.nn.Linear) for m in model.modules())
    errors = {}
    for bits in (8, 4):
        quantized, check = quantize(model, bits)
        assert isinstance(check, QuantizationCheck) and check.bits == bits
        # Every Linear but the output head holds torchao's integer weights, on 2**bits levels.
        assert check.linear_layers == linear
        assert check.quantized_layers == linear - 1
        kinds = {
            type(m.weight).__name__ for m in quantized.modules() if isinstance(m, torch.nn.Linear)
        }
        assert kinds - {"Parameter"}, kinds
        assert 2 ** (bits - 1) < check.levels <= 2**bits
        assert check.weight_bytes_after < check.weight_bytes_before
        errors[bits] = (logits(quantized, tokenizer) - reference).abs().max().item()
    # Rounding changes the outputs, 4-bit rounding more than 8-bit (int8: within 0.1 of float).
    assert 0 < errors[8] < 0.1 < errors[4]


def test_a_missing_backend_or_an_unknown_width_is_one_clear_line(monkeypatch):
    with pytest.raises(ValueError, match="not supported; choose from 8, 4"):
        check_backend(3)
    with pytest.raises(ValueError, match="quantization_bits` may hold 8 and 4"):
        AuditConfig(quantization_bits=(2,))
    monkeypatch.setitem(sys.modules, "torchao", None)  # as if not installed
    with pytest.raises(ImportError, match=r'pip install "waterdrum-hf\[quantization\]"') as error:
        check_backend(8)
    assert "\n" not in str(error.value)


def linear_shapes(model):
    """(out, in) of every Linear weight but the output head: what torchao quantizes."""
    head = model.get_output_embeddings()
    return [
        tuple(m.weight.shape)
        for m in model.modules()
        if isinstance(m, torch.nn.Linear) and m is not head
    ]


def test_the_stored_bytes_follow_each_scheme(tiny_model):
    """int8: one byte a weight and one scale per output channel; int4: one byte a value,
    a scale and an int8 zero point per group of 32 (GROUP_SIZE); before: the weights at the
    model's own width (2 bytes a weight in a bfloat16 copy)."""
    model, _ = tiny_model
    shapes = linear_shapes(model)
    assert all(fan_in % GROUP_SIZE == 0 for _, fan_in in shapes)
    _, int8 = quantize(model, 8)
    assert int8.weight_bytes_after == sum(o * i + o * 4 for o, i in shapes)
    quantized, int4 = quantize(model, 4)
    groups = sum(o * i // GROUP_SIZE for o, i in shapes)
    assert int4.weight_bytes_after == sum(o * i for o, i in shapes) + groups * (4 + 1)
    scales = [
        tuple(m.weight.scale.shape)
        for m in quantized.modules()
        if isinstance(m, torch.nn.Linear) and hasattr(m.weight, "scale")
    ]
    assert scales == [(o, i // GROUP_SIZE) for o, i in shapes]
    half = copy.deepcopy(model).to(torch.bfloat16)
    _, check = quantize(half, 8)
    assert check.weight_bytes_before == sum(o * i * 2 for o, i in shapes)
    assert check.to_dict() == dataclasses.asdict(check)
    assert list(check.to_dict()) == [
        "bits", "quantized_layers", "linear_layers", "levels", "weight_bytes_before",
        "weight_bytes_after",
    ]  # fmt: skip


def test_a_saved_folder_quantizes_as_the_model_does(tiny_model, tmp_path, monkeypatch):
    import tempfile

    model, _ = tiny_model
    model.save_pretrained(tmp_path / "model")
    _, from_folder = quantize(str(tmp_path / "model"), 8)
    # A model in memory is saved to a scratch folder of its own, removed afterwards.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "scratch"))
    (tmp_path / "scratch").mkdir()
    saved = []
    copied = copy.deepcopy(model)
    save = copied.save_pretrained
    copied.save_pretrained = lambda folder: saved.append(Path(folder)) or save(folder)
    _, in_memory = quantize(copied, 8)
    assert from_folder == in_memory
    (scratch,) = saved
    assert scratch.parent == tmp_path / "scratch" and scratch.name.startswith("waterdrum-quantize-")
    assert list((tmp_path / "scratch").iterdir()) == []


def test_stored_values_outside_the_width_are_refused(tiny_model):
    model, _ = tiny_model
    quantized, check = quantize(model, 4)
    weight = next(m.weight for m in quantized.modules() if isinstance(m, torch.nn.Linear))
    stored = weight.qdata
    # 4 bits: [-8, 7] holds every value stored, both ends included.
    assert (int(stored.min()), int(stored.max())) == (-8, 7)
    assert _checked(quantized, 4) == check
    kept = int(stored[0, 0])
    for value, shown in ((8, r"\[-8, 8\]"), (-9, r"\[-9, 7\]")):
        stored[0, 0] = value
        with pytest.raises(RuntimeError, match=rf"{shown}, outside 4 bits"):
            _checked(quantized, 4)
        stored[0, 0] = kept
    with pytest.raises(RuntimeError, match=r"\[-12[78], 127\], outside 4 bits"):
        _checked(quantize(model, 8)[0], 4)


def test_every_linear_layer_is_counted_and_one_quantized_is_enough(tiny_model):
    model, _ = tiny_model
    quantized, _ = quantize(model, 8)
    layer = next(m for m in quantized.modules() if isinstance(m, torch.nn.Linear))
    # An unquantized Linear before the quantized one: counted, and the one after still seen.
    mixed = torch.nn.Sequential(torch.nn.Linear(4, 4), layer)
    check = _checked(mixed, 8)
    assert (check.linear_layers, check.quantized_layers, check.levels) == (2, 1, 256)
    o, i = layer.weight.shape
    assert (check.weight_bytes_before, check.weight_bytes_after) == (o * i * 4, o * i + o * 4)
    with pytest.raises(RuntimeError, match="8-bit quantization changed no Linear layer"):
        _checked(torch.nn.Sequential(torch.nn.Linear(4, 4)), 8)
