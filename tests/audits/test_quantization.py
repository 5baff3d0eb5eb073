"""The quantization audit quantizes for real (torchao, on the CPU) and refuses what it cannot do."""

from __future__ import annotations

import sys

import pytest
import torch

from waterdrum_hf.audits import AuditConfig, QuantizationCheck, check_backend, quantize

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
