"""What every step shares: the shapes, the device, random-weight models, word data, memory and
time measurement, and each step's time budget.

No Hub: models are built from a ``LlamaConfig`` with random weights, directly on the device in
bf16, and the data are words ``w3 ... w{V-1}`` of a word-level tokenizer whose token ids are the
word numbers (every text of ``n`` words is exactly ``n`` tokens).
"""

from __future__ import annotations

import gc
import math
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

PAD, EOS, UNK = 0, 1, 2
"""Ids of the word tokenizer's special tokens (texts are drawn from the words above them)."""


@dataclass(frozen=True)
class Shape:
    """A Llama architecture: the paper's Llama-2-7B, or a tiny one for the CPU smoke run."""

    name: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    layers: int
    heads: int
    context: int


LLAMA2_7B = Shape("llama-2-7b", 32000, 4096, 11008, 32, 32, 4096)
SMOKE_SHAPE = Shape("smoke", 512, 64, 128, 2, 4, 512)


@dataclass(frozen=True)
class Sizes:
    """How much work each step does; :data:`GPU_SIZES` at the paper's protocol, the smoke run
    a few tokens of each."""

    batch_size: int = 8  # training: sequences per forget and per retain batch
    seq_len: int = 256  # training: tokens per example
    warmup_steps: int = 2
    timed_steps: int = 5
    prompt_tokens: int = 50  # generation: the paper's query length
    num_samples: int = 10  # generation: the paper's samples per query
    new_tokens: int = 200  # generation: the paper's completion length
    batches: tuple[int | str, ...] = ("auto", 32, 160)  # generation: in this order
    timed_repeats: int = 3  # generation: timed calls after the untimed one at each shape
    callback_steps: int = 30
    callback_eval_steps: int = 10
    callback_owners: int = 4
    queries_per_owner: tuple[int, ...] = (4, 16, 64)
    verify_owners: int = 4
    verify_passages: int = 8  # per owner
    verify_prefix: int = 24
    verify_samples: int = 4
    verify_new_tokens: int = 96
    shuffle_vocab: int = 128000  # the paper's watermark tokenizer (Llama-3.1)
    shuffle_texts: int = 1000
    shuffle_length: int = 200
    copy_mib: int = 2048
    score_owners: int = 4  # score: owners (half of them forgotten)
    score_texts_per_owner: int = 8  # score: texts (queries) per owner
    budgets: dict[str, float] = field(
        default_factory=lambda: {
            "training": 420.0,
            "generation": 540.0,
            "callback": 420.0,
            "verification": 300.0,
            "score": 300.0,
            "fsdp": 420.0,
        }
    )


GPU_SIZES = Sizes()
SMOKE_SIZES = Sizes(
    batch_size=2,
    seq_len=16,
    warmup_steps=1,
    timed_steps=2,
    prompt_tokens=8,
    num_samples=2,
    new_tokens=6,
    batches=("auto", 4),
    timed_repeats=2,
    callback_steps=4,
    callback_eval_steps=2,
    callback_owners=2,
    queries_per_owner=(1, 2),
    verify_owners=2,
    verify_passages=2,
    verify_prefix=12,
    verify_samples=2,
    verify_new_tokens=24,
    shuffle_vocab=4096,
    shuffle_texts=20,
    shuffle_length=32,
    copy_mib=16,
    score_owners=2,
    score_texts_per_owner=2,
    budgets={
        name: 90.0
        for name in ("training", "generation", "callback", "verification", "score", "fsdp")
    },
)


@dataclass
class Setup:
    """The run's shape, sizes, device and dtype (bf16 everywhere, the CPU smoke run too)."""

    shape: Shape
    sizes: Sizes
    device: torch.device
    dtype: torch.dtype = torch.bfloat16
    smoke: bool = False

    @classmethod
    def create(cls, smoke: bool) -> Setup:
        device = torch.device("cuda" if torch.cuda.is_available() and not smoke else "cpu")
        if smoke:
            return cls(SMOKE_SHAPE, SMOKE_SIZES, device, smoke=True)
        return cls(LLAMA2_7B, GPU_SIZES, device)

    @property
    def cuda(self) -> bool:
        return self.device.type == "cuda"


class Budget:
    """A step's time budget: settings check :attr:`expired` before they start (a setting that
    has started runs to its end), so each device command ends in a known time."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.start = time.perf_counter()

    @property
    def used(self) -> float:
        return time.perf_counter() - self.start

    @property
    def expired(self) -> bool:
        return self.used > self.seconds


def llama_config(shape: Shape) -> Any:
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=shape.vocab_size,
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.heads,
        max_position_embeddings=shape.context,
        pad_token_id=PAD,
        eos_token_id=EOS,
        bos_token_id=None,
        tie_word_embeddings=False,
    )


def build_model(setup: Setup, seed: int = 0) -> Any:
    """A random-weight ``LlamaForCausalLM`` of the setup's shape, made on its device in its
    dtype (no float32 copy on the host: 7B parameters are initialised on the GPU)."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    with torch.device(setup.device):
        model = AutoModelForCausalLM.from_config(llama_config(setup.shape), dtype=setup.dtype)
    return model


def word_tokenizer(vocab_size: int) -> Any:
    """A word-level tokenizer: word ``w{i}`` is token ``i``, with ``<pad>`` (0), ``</s>`` (1,
    EOS) and ``<unk>`` (2) below the words (special names that no word contains: an added token
    is matched inside words, so ``w1`` as EOS would split ``w185``)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": PAD, "</s>": EOS, "<unk>": UNK}
    vocab.update({f"w{i}": i for i in range(UNK + 1, vocab_size)})
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )


def word_texts(vocab_size: int, count: int, length: int, seed: int = 0) -> list[str]:
    """``count`` texts of ``length`` words drawn uniformly from the words (no special token)."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(UNK + 1, vocab_size, size=(count, length))
    return [" ".join(f"w{i}" for i in row) for row in ids]


def secret_ids(count: int, seed: int = 0) -> list[int]:
    """Watermark ids for the synthetic owners (keys: used, never written to the results)."""
    rng = np.random.default_rng(seed + 12345)
    return [int(i) for i in rng.integers(0, 2**32, size=count, dtype=np.uint64)]


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@contextmanager
def timed(device: torch.device) -> Iterator[dict[str, float]]:
    """``with timed(device) as t:`` ... ``t["seconds"]``, the device's queue drained both ends."""
    result: dict[str, float] = {}
    synchronize(device)
    start = time.perf_counter()
    yield result
    synchronize(device)
    result["seconds"] = time.perf_counter() - start


def reset_peak(device: torch.device) -> None:
    """Release what the last setting left, then start counting the peak afresh."""
    release(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_gib(device: torch.device) -> float | None:
    """Peak GPU memory allocated by tensors since :func:`reset_peak` (None on a CPU)."""
    if device.type != "cuda":
        return None
    return torch.cuda.max_memory_allocated(device) / 2**30


def allocated_gib(device: torch.device) -> float | None:
    if device.type != "cuda":
        return None
    return torch.cuda.memory_allocated(device) / 2**30


def release(device: torch.device) -> None:
    """Collect garbage and give cached GPU blocks back (call after ``del`` of a model)."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def live_tensors() -> int:
    """Tensors reachable by the garbage collector: a count that grows if something leaks."""
    gc.collect()
    with warnings.catch_warnings():  # isinstance on a deprecated torch alias warns
        warnings.simplefilter("ignore")
        return sum(1 for obj in gc.get_objects() if isinstance(obj, torch.Tensor))


def warm_up(device: torch.device) -> None:
    """One bf16 matrix product and its backward: cuBLAS keeps a workspace (64 MiB on an H200)
    from a process's first product on, which a memory check must not count as a leak."""
    a = torch.randn(64, 64, device=device, dtype=torch.bfloat16, requires_grad=True)
    (a @ a).sum().backward()
    del a
    release(device)


def weight_bytes(model: torch.nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters())


def copy_bandwidth(device: torch.device, mib: int, repeats: int = 10) -> float:
    """Device-to-device copy bandwidth in GB/s, bytes read plus bytes written (the median of
    ``repeats`` copies of ``mib`` MiB after one warm-up)."""
    source = torch.empty(mib * 2**20, dtype=torch.uint8, device=device).fill_(1)
    target = torch.empty_like(source)
    target.copy_(source)
    seconds = []
    for _ in range(repeats):
        with timed(device) as t:
            target.copy_(source)
        seconds.append(t["seconds"])
    del source, target
    return 2 * mib * 2**20 / float(np.median(seconds)) / 1e9


def median(values: list[float]) -> float:
    return float(np.median(values)) if values else math.nan


def is_oom(error: BaseException) -> bool:
    return isinstance(error, torch.OutOfMemoryError) or "out of memory" in str(error).lower()
