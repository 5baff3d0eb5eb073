"""The quantization audit: the model's linear weights stored in 8 or 4 bits, then scored again.

Zhang et al. ("Catastrophic failure of LLM unlearning via quantization", ICLR 2025) found
that unlearned models kept 21 % of the forget set's knowledge at full precision and 83 % after
4-bit quantization: unlearning that moves the weights by less than a quantization step is
undone by rounding. The weights are quantized by torchao through transformers'
``TorchAoConfig`` (``pip install "waterdrum-hf[quantization]"``): 8 bits as int8 weights with
one scale per output channel (``Int8WeightOnlyConfig``), 4 bits as int4 values with one scale
per group of 32 weights (``IntxWeightOnlyConfig``, which runs on a CPU; it keeps each 4-bit
value in a byte, so the model does not shrink below int8's size). Every Linear layer but the
output head is quantized, and :func:`quantize` checks that this happened.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from waterdrum_hf.audits.config import QUANTIZATION_BITS
from waterdrum_hf.utils.backend_logs import quiet_backend_logs

GROUP_SIZE = 32
"""Weights sharing one scale in 4-bit quantization."""


@dataclass(frozen=True)
class QuantizationCheck:
    """What :func:`quantize` verified on the quantized model.

    Attributes:
        bits: the asked width.
        quantized_layers, linear_layers: Linear layers whose weight torchao replaced, of all.
        levels: the most distinct stored integer values in any quantized weight (at most
            ``2 ** bits``).
        weight_bytes_before, weight_bytes_after: bytes of those layers' weights before and
            after (scales included).
    """

    bits: int
    quantized_layers: int
    linear_layers: int
    levels: int
    weight_bytes_before: int
    weight_bytes_after: int

    def to_dict(self) -> dict[str, int]:
        """Flat, for results files."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def check_backend(bits: int) -> None:
    """Raise one clear line (``ImportError``/``ValueError``) unless ``bits`` can be quantized
    here: torchao installed, a width it supports. Called before any audit starts."""
    if bits not in QUANTIZATION_BITS:
        raise ValueError(
            f"quantization to {bits} bits is not supported; choose from "
            f"{', '.join(map(str, QUANTIZATION_BITS))}"
        )
    try:
        with quiet_backend_logs():
            import torchao  # noqa: F401
        from transformers import TorchAoConfig  # noqa: F401
    except ImportError:
        raise ImportError(
            "the quantization audit needs torchao, which is not installed: "
            'pip install "waterdrum-hf[quantization]" (or leave quantization out of `audits`)'
        ) from None


def quantize(
    model: Any, bits: int, *, show_progress: bool | None = None
) -> tuple[Any, QuantizationCheck]:
    """A copy of ``model`` (a loaded causal LM or its saved folder) with its Linear weights
    quantized to ``bits`` bits, and the check that they were (``RuntimeError`` if no layer
    was, or a stored value falls outside ``bits`` bits). The model is loaded through
    ``from_pretrained(..., quantization_config=TorchAoConfig(...))``; one in memory is saved
    to a temporary folder first. ``show_progress``: the loading bar (``None``: on a
    terminal)."""
    import torch
    from transformers import AutoModelForCausalLM, TorchAoConfig

    from waterdrum_hf.utils.progress import library_progress

    check_backend(bits)
    with (
        tempfile.TemporaryDirectory(prefix="waterdrum-quantize-") as scratch,
        library_progress(show_progress),
    ):
        if isinstance(model, (str, Path)):
            folder = Path(model)
        else:
            folder = Path(scratch)
            model.save_pretrained(folder)
        quantized = AutoModelForCausalLM.from_pretrained(
            folder,
            quantization_config=TorchAoConfig(quant_type=_torchao_config(bits)),
            device_map="cuda" if torch.cuda.is_available() else "cpu",
        )
    return quantized.eval(), _checked(quantized, bits)


def _torchao_config(bits: int) -> Any:
    import torch
    from torchao.quantization import Int8WeightOnlyConfig, IntxWeightOnlyConfig
    from torchao.quantization.granularity import PerGroup

    if bits == 8:
        return Int8WeightOnlyConfig()
    # torch.int4 exists at run time; torch's type information (_C/__init__.pyi) omits it.
    int4 = torch.int4  # type: ignore[attr-defined]
    return IntxWeightOnlyConfig(weight_dtype=int4, granularity=PerGroup(GROUP_SIZE))


def _checked(quantized: Any, bits: int) -> QuantizationCheck:
    """What was quantized, verified: some Linear weights replaced by torchao tensors whose
    stored integers fit in ``bits`` bits."""
    import torch
    from torchao.utils import TorchAOBaseTensor

    linear = quantized_layers = levels = bytes_before = bytes_after = 0
    for name, module in quantized.named_modules():
        if not isinstance(module, torch.nn.Linear):
            continue
        linear += 1
        weight = module.weight
        if not isinstance(weight, TorchAOBaseTensor):
            continue
        quantized_layers += 1
        stored = weight.qdata
        low, high = int(stored.min()), int(stored.max())
        if low < -(2 ** (bits - 1)) or high >= 2 ** (bits - 1):
            raise RuntimeError(
                f"{name}: quantized weights hold values in [{low}, {high}], outside {bits} bits"
            )
        levels = max(levels, int(stored.unique().numel()))
        bytes_before += weight.numel() * torch.empty((), dtype=weight.dtype).element_size()
        bytes_after += sum(
            getattr(weight, part).numel() * getattr(weight, part).element_size()
            for part in weight.tensor_data_names
        )
    if quantized_layers == 0:
        raise RuntimeError(
            f"{bits}-bit quantization changed no Linear layer of the model: refusing to score "
            "an unquantized model as a quantized one"
        )
    return QuantizationCheck(bits, quantized_layers, linear, levels, bytes_before, bytes_after)
