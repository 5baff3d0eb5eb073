"""The model and tokenizer a trainer starts from, as TRL's trainers take them.

``model`` (and ``ref_model``) is a loaded model or a model id / local path, loaded with the
config's ``model_init_kwargs`` (``dtype``, ``attn_implementation``, ``revision``, ...) and
``trust_remote_code``; ``quantization_config`` applies to a model loaded here. ``peft_config``
wraps the model; a PEFT model trained with gradient checkpointing gets input gradients (without
them no gradient reaches a frozen base's adapters through reentrant checkpointing). The
tokenizer defaults to the one saved with the model.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from typing import Any

import torch
from huggingface_hub.errors import HFValidationError
from peft import PeftConfig, PeftModel, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from waterdrum_hf.utils.torch_plumbing import peft_reading_deprecated_flags

logger = logging.getLogger(__name__)

_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


def init_kwargs(args: Any) -> dict[str, Any]:
    """``from_pretrained`` keywords from ``args.model_init_kwargs`` and ``trust_remote_code``;
    ``dtype`` as TRL reads it (``"auto"``, ``"bfloat16"``, ``"float16"``, ``"float32"`` or a
    ``torch.dtype``; ``float32`` when not given)."""
    kwargs = dict(args.model_init_kwargs or {})
    kwargs.setdefault("trust_remote_code", args.trust_remote_code)
    dtype = kwargs.get("dtype", "float32")
    if isinstance(dtype, str) and dtype in _DTYPES:
        kwargs["dtype"] = _DTYPES[dtype]
    elif not (dtype is None or dtype == "auto" or isinstance(dtype, torch.dtype)):
        raise ValueError(
            f"model_init_kwargs['dtype'] must be 'auto', 'bfloat16', 'float16', 'float32' or a "
            f"torch.dtype, got {dtype!r}"
        )
    return kwargs


def load_model(
    model: Any, args: Any, quantization_config: Any = None, *, argument: str = "model"
) -> torch.nn.Module:
    """``model`` as given when loaded already, else loaded from its id or path."""
    if isinstance(model, torch.nn.Module):
        if args.model_init_kwargs:
            logger.warning("model_init_kwargs is not used: %s is a loaded model", argument)
        if quantization_config is not None:
            raise ValueError(
                f"quantization_config applies when {argument} is loaded here from an id or path, "
                f"but {argument} is a loaded model: pass its id or path, or load it quantized"
            )
        return model
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(
            f"{argument} must be a model id, a local path or a loaded model (torch.nn.Module), "
            f"got {type(model).__name__}"
        )
    kwargs = init_kwargs(args)
    if quantization_config is not None:
        if "quantization_config" in kwargs:
            raise ValueError(
                "quantization_config is given both to the trainer and in "
                "args.model_init_kwargs; give it in one place"
            )
        check_quantization(quantization_config)
        kwargs["quantization_config"] = quantization_config
    try:
        return AutoModelForCausalLM.from_pretrained(str(model), **kwargs)
    except (OSError, HFValidationError):
        raise ValueError(_not_found(argument, model)) from None


def load_tokenizer(model: torch.nn.Module, name: str | None, args: Any) -> Any:
    """The tokenizer saved with the model (its id or path ``name``, else the model's config)."""
    name = name or getattr(model.config, "_name_or_path", "") or None
    if name is None:
        raise ValueError(
            "processing_class is needed: the model was not loaded from an id or path, so its "
            "tokenizer cannot be found; pass processing_class= (its tokenizer)"
        )
    revision = (args.model_init_kwargs or {}).get("revision")
    try:
        return AutoTokenizer.from_pretrained(
            name, revision=revision, trust_remote_code=args.trust_remote_code
        )
    except (OSError, ValueError):
        raise ValueError(
            f"no tokenizer could be loaded from {name!r}; pass processing_class= (the model's "
            "tokenizer)"
        ) from None


def prepare_model(model: torch.nn.Module, peft_config: Any, args: Any) -> torch.nn.Module:
    """``model`` wrapped by ``peft_config`` if given; input gradients on for PEFT models trained
    with gradient checkpointing; a quantized model must train through an adapter."""
    if peft_config is not None:
        if not isinstance(peft_config, PeftConfig):
            raise TypeError(
                "peft_config must be a peft.PeftConfig (e.g. peft.LoraConfig), got "
                f"{type(peft_config).__name__}"
            )
        if isinstance(model, PeftModel):
            raise ValueError(
                "peft_config was given, but the model is already a PeftModel: leave peft_config "
                "out to train its adapter, or pass the base model (merge_and_unload())"
            )
        with peft_reading_deprecated_flags():
            model = get_peft_model(model, peft_config)
    if is_quantized(model) and not isinstance(model, PeftModel):
        raise ValueError(
            "the model is quantized, and quantized weights cannot be trained: pass "
            "peft_config= (e.g. peft.LoraConfig) to train an adapter on it (QLoRA)"
        )
    if isinstance(model, PeftModel) and args.gradient_checkpointing:
        model.enable_input_require_grads()
    return model


def is_quantized(model: torch.nn.Module) -> bool:
    """Whether transformers loaded ``model`` quantized (any quantization method)."""
    return bool(
        getattr(model, "hf_quantizer", None) is not None
        or getattr(model, "is_loaded_in_4bit", False)
        or getattr(model, "is_loaded_in_8bit", False)
    )


def check_quantization(quantization_config: Any) -> None:
    """bitsandbytes (QLoRA) needs its package: say so in one line, before transformers fails
    deeper down. (bitsandbytes quantizes on a CUDA GPU or, since its CPU backend, on a CPU:
    tested with 0.50.2.)"""
    method = getattr(quantization_config, "quant_method", None)
    if getattr(method, "value", method) != "bitsandbytes":
        return
    if importlib.util.find_spec("bitsandbytes") is None:
        raise ValueError(
            "quantization_config is a bitsandbytes config (QLoRA), which needs the bitsandbytes "
            'package, not found here: pip install "waterdrum-hf[qlora]", or leave '
            "quantization_config out to train unquantized"
        )


def model_name(model: torch.nn.Module) -> str:
    """The id or path the model was loaded from (``""`` for a model built in memory)."""
    return str(getattr(getattr(model, "config", None), "_name_or_path", "") or "")


def _not_found(argument: str, model: Any) -> str:
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    where = " (offline: HF_HUB_OFFLINE is set)" if offline else ""
    return (
        f"{argument} {str(model)!r} could not be loaded: it is not a local folder with a model, "
        f"nor a model in the Hugging Face cache{where}; pass a local path or a loaded model"
    )
