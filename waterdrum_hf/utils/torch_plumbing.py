"""Private torch plumbing that generation, watermarking, trainers and experiments all share.

Padding (left or right), the pad-id fallback and the right-padded causal-LM training batch
(``IGNORE_INDEX`` on every untrained label), loading a causal LM onto the right device, the
model's device and its free memory, eval/no-grad with the caller's modes restored, seeding
without touching the global RNG (and rewinding it), out-of-memory errors, torch's thread count
for a block, and unwrapping a distributed model for generation: each is defined here once, and
nothing else in the package pads, seeds, loads or unwraps on its own. Not public API (``IGNORE_INDEX`` is public through ``waterdrum_hf.data``).
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeAlias

import torch
from transformers import PreTrainedTokenizerBase

GenerativeModel: TypeAlias = Any
"""A causal LM to call and ``generate`` with: a transformers model, a ``peft.PeftModel``
wrapping one, or either unwrapped from a distributed wrapper. ``Any`` to a type checker:
transformers types ``generate`` on ``GenerationMixin`` alone, and ``PeftModel`` forwards it
at run time."""

IGNORE_INDEX = -100
"""Label of a token that is not trained (prompt, padding): what ``torch``'s cross-entropy and
``transformers``' causal-LM losses skip."""


@contextmanager
def seeded(seed: int | None, device: torch.device) -> Iterator[None]:
    """With a seed: fork torch's RNG (CPU and the model's GPU), seed it, restore it after."""
    if seed is None:
        yield
        return
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


def rng_state(device: torch.device) -> tuple[torch.Tensor, torch.Tensor | None]:
    """torch's RNG state on the CPU and on ``device``'s GPU, for :func:`set_rng_state`."""
    cuda = torch.cuda.get_rng_state(device) if device.type == "cuda" else None
    return torch.get_rng_state(), cuda


def set_rng_state(state: tuple[torch.Tensor, torch.Tensor | None], device: torch.device) -> None:
    """Rewind torch's RNG to a :func:`rng_state` (e.g. to retry work that failed halfway)."""
    cpu, cuda = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state(cuda, device)


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is a device (or CPU allocator) running out of memory: what a smaller
    batch can fix (accelerate's own test, plus torch's ``OutOfMemoryError`` class)."""
    from accelerate.utils.memory import should_reduce_batch_size

    return isinstance(error, torch.OutOfMemoryError) or (
        isinstance(error, Exception) and should_reduce_batch_size(error)
    )


def free_memory(device: torch.device) -> int | None:
    """Bytes that new tensors on ``device`` can still take: a CUDA GPU's free memory plus what
    torch's allocator holds unused; the CPU's available RAM. ``None`` for other devices."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    if device.type == "cpu":
        import psutil

        return int(psutil.virtual_memory().available)
    return None


def release_cached_memory() -> None:
    """Give the blocks torch's allocator caches back to the device (after an out-of-memory)."""
    from accelerate.utils.memory import clear_device_cache

    clear_device_cache(garbage_collection=True)


@contextmanager
def inference_mode(model: torch.nn.Module) -> Iterator[None]:
    """Eval mode (no dropout) and no autograd; the caller's train and grad modes come back."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


@contextmanager
def unwrapped_for_generation(model: Any, accelerator: Any | None) -> Iterator[Any]:
    """The model to call ``generate`` on: unwrapped from DDP/FSDP/DeepSpeed.

    Generation runs in eval mode, where transformers skips gradient checkpointing, so the model
    is unwrapped as it is and its checkpointing settings are left alone. Only a DeepSpeed
    ZeRO-3 model goes through TRL's ``unwrap_model_for_generation`` (which gathers its
    parameters on every process, and pauses checkpointing meanwhile).
    """
    if accelerator is None:
        from accelerate.utils import extract_model_from_parallel

        unwrapped = extract_model_from_parallel(model)
        if unwrapped is not model and _is_zero3(model):
            raise ValueError(
                "A DeepSpeed ZeRO-3 model generates only with its parameters gathered on every "
                "process: pass accelerator= (e.g. trainer.accelerator)."
            )
        yield unwrapped
        return
    if not _is_zero3(model, accelerator):
        yield accelerator.unwrap_model(model)
        return
    from trl.models.utils import unwrap_model_for_generation

    kwargs: dict[str, Any] = {}
    if "gradient_checkpointing_kwargs" in inspect.signature(unwrap_model_for_generation).parameters:
        kwargs["gradient_checkpointing_kwargs"] = _checkpointing_kwargs(
            accelerator.unwrap_model(model)
        )
    with unwrap_model_for_generation(model, accelerator, **kwargs) as unwrapped:
        yield unwrapped


def _is_zero3(model: Any, accelerator: Any | None = None) -> bool:
    """Whether ``model`` is a DeepSpeed engine partitioning its parameters (ZeRO stage 3), or
    ``accelerator`` runs DeepSpeed ZeRO-3 (the model may have been unwrapped already)."""
    stage = getattr(model, "zero_optimization_stage", None)
    if callable(stage) and stage() == 3:
        return True
    plugin = getattr(getattr(accelerator, "state", None), "deepspeed_plugin", None)
    return getattr(plugin, "zero_stage", None) == 3


def _checkpointing_kwargs(model: Any) -> dict[str, Any] | None:
    """The keyword arguments gradient checkpointing was enabled with, so that TRL re-enables it
    alike after a ZeRO-3 generation (``None``: not enabled, or not found).

    Private hook, kept on purpose: transformers keeps these arguments only in the
    ``functools.partial`` it stores as each checkpointed module's ``_gradient_checkpointing_func``
    and exposes no public accessor (``is_activation_checkpointing`` says only whether it is on);
    the caller here holds an accelerator, not the ``TrainingArguments`` they came from.
    ``tests/utils/test_torch_plumbing.py`` fails if transformers stops storing them there.
    """
    for module in model.modules():
        function = getattr(module, "_gradient_checkpointing_func", None)
        if isinstance(function, functools.partial):
            return dict(function.keywords)
    return None


def cpu_vendor() -> str | None:
    """The processor's vendor as the CPU names itself (``GenuineIntel``, ``AuthenticAMD``),
    from ``/proc/cpuinfo``; ``None`` where that file does not say."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def mkl_branch(pinned: str | None) -> str | None:
    """The code branch MKL computes with where ``MKL_CBWR`` is ``pinned`` (lower case;
    ``None`` where nothing is pinned). MKL honours branches other than ``AUTO`` and
    ``COMPATIBLE`` on Intel processors only and takes ``AUTO`` on any other without a word
    (Intel's documentation; on an AMD EPYC, ``AVX2`` and ``AUTO`` give the same bits), so a
    name built from the variable alone would call two kernel sets one."""
    if not pinned:
        return None
    branch, comma, mode = pinned.lower().removeprefix("branch=").partition(",")  # ",strict"
    if branch not in ("auto", "compatible") and cpu_vendor() != "GenuineIntel":
        branch = "auto"
    return branch + comma + mode


def cpu_kernels() -> str:
    """The CPU kernels this process computes with: PyTorch's capability (``avx512``,
    ``avx2``, ``default``: ``ATEN_CPU_CAPABILITY`` lowers it), and MKL's and oneDNN's where
    ``MKL_CBWR`` (:func:`mkl_branch`: the branch MKL takes) or ``ONEDNN_MAX_CPU_ISA`` pins
    them. Trained weights differ between kernel sets, so whatever caches a trained model
    names them."""
    kernels = torch.backends.cpu.get_cpu_capability().lower()
    mkl = mkl_branch(os.environ.get("MKL_CBWR"))
    if mkl:
        kernels += f"-mkl{mkl}"
    onednn = os.environ.get("ONEDNN_MAX_CPU_ISA")
    if onednn:
        kernels += f"-onednn{onednn.lower()}"
    return kernels


@contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``count`` for the block (``None``: unchanged),
    and the caller's count back afterwards, also when the block raises.

    Small models gain nothing from many threads, and on a busy machine they slow down many
    times over; one thread also keeps a training run independent of the core count.
    """
    threads = torch.get_num_threads()
    if count is not None:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextmanager
def peft_reading_deprecated_flags() -> Iterator[None]:
    """Around peft wrapping or loading a model: peft reads ``is_gradient_checkpointing``, which
    transformers 5.24 deprecates (a FutureWarning per model that is neither the caller's to
    act on nor ours); every other warning passes."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "`is_gradient_checkpointing` is deprecated")
        yield


def load_causal_lm(name_or_path: str | os.PathLike[str], *, device: str | None = None) -> Any:
    """A causal LM from a local folder or a Hub id, in eval mode, on ``device`` (``None``: the
    GPU when there is one, else the CPU).

    A folder holding a PEFT adapter (``adapter_config.json``) is loaded on its base model
    (``peft``'s ``AutoPeftModelForCausalLM``); anything else with ``AutoModelForCausalLM``.
    """
    loader: Any  # peft's or transformers' auto class: both have from_pretrained
    if (Path(name_or_path) / "adapter_config.json").is_file():
        from peft import AutoPeftModelForCausalLM as loader
    else:
        from transformers import AutoModelForCausalLM as loader
    with peft_reading_deprecated_flags():
        model = loader.from_pretrained(name_or_path)
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return model.to(device).eval()


def has_gpu() -> bool:
    """Whether CUDA is there: training runs on it then (``use_cpu=not has_gpu()``)."""
    return torch.cuda.is_available()


def quiet_trainer_logs(trainer: Any) -> None:
    """Without progress bars a ``Trainer`` prints every log line (its ``PrinterCallback``);
    stages that report their own progress drop those lines (``log_history`` keeps them)."""
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)


def model_device(model: torch.nn.Module) -> torch.device:
    """Device of the model's first parameter (where its inputs go)."""
    return next(model.parameters()).device


def pad_token_id(tokenizer: PreTrainedTokenizerBase) -> int:
    """The tokenizer's pad token id, else its (first) EOS id; a tokenizer with neither fails."""
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if isinstance(value, int):
            return value
        if value:  # a list of EOS ids
            return int(value[0])
    raise ValueError("tokenizer has neither a pad token nor an EOS token; set one of them")


def pad_batch(
    batch: Sequence[Sequence[int]],
    pad_id: int,
    device: torch.device,
    *,
    side: str = "left",
    multiple: int = 1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``input_ids`` and ``attention_mask`` of token id lists, padded on ``side`` to the
    longest list's length rounded up to a ``multiple`` (few widths: few compiled shapes).

    Generation needs left padding (decoder-only models continue at the right edge); scoring
    tokens in place is simplest with right padding.
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    width = -(-max(len(ids) for ids in batch) // multiple) * multiple
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, ids in enumerate(batch):
        if len(ids):
            span = slice(width - len(ids), width) if side == "left" else slice(0, len(ids))
            input_ids[row, span] = torch.as_tensor(ids)
            attention_mask[row, span] = 1
    return input_ids.to(device), attention_mask.to(device)


def causal_lm_batch(rows: Sequence[Mapping[str, Any]], pad_id: int) -> dict[str, torch.Tensor]:
    """A right-padded causal-LM training batch (on the CPU, as a data collator returns it).

    Each row holds ``input_ids``, optionally its ``labels`` (same length; default: the ids, so
    every real token is trained) and optionally an ``attention_mask``, whose masked positions
    (a row padded beforehand, on either side) are dropped first. Padding gets ``pad_id`` as
    input and :data:`IGNORE_INDEX` as label, so it is never trained, whatever ``pad_id`` is.
    """
    ids, labels = [], []
    for number, row in enumerate(rows):
        row_ids = list(row["input_ids"])
        row_labels = list(row.get("labels", row_ids))
        if len(row_labels) != len(row_ids):
            raise ValueError(
                f"row {number} has {len(row_ids)} input_ids but {len(row_labels)} labels; give "
                "one label per token"
            )
        mask = row.get("attention_mask")
        if mask is not None and not all(mask):
            kept = [i for i, on in enumerate(mask) if on]
            row_ids, row_labels = [row_ids[i] for i in kept], [row_labels[i] for i in kept]
        ids.append(row_ids)
        labels.append(row_labels)
    cpu = torch.device("cpu")
    input_ids, attention_mask = pad_batch(ids, pad_id, cpu, side="right")
    label_ids, _ = pad_batch(labels, IGNORE_INDEX, cpu, side="right")
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": label_ids}
