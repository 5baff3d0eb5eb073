"""A tiny offline language model and tokenizer, built on first use from Python's own docs.

The demo, the examples and the tests need a causal LM that writes varied, on-topic text (a
randomly initialised model repeats one word and is useless as a paraphraser) without any
download. The recipe trains a byte-level BPE tokenizer and a ~1M-parameter ``LlamaForCausalLM``
on :func:`waterdrum_hf.data.toy_corpus` for a fixed number of steps (about a minute, on one CPU
thread) and saves both with ``save_pretrained``.

The default build ships with the package (:data:`SHIPPED`, 3.7 MB), so ``load()`` gives the
same weights on every machine: built on the spot, they would differ by processor, because
PyTorch and MKL pick their kernels by CPU (AVX2, AVX-512) and a minute of training turns their
rounding differences into other weights. :func:`build_reproducibly` rebuilds the shipped
weights bit for bit on any Intel x86-64 processor with AVX2 (it pins :data:`BUILD_KERNELS`;
MKL pins its AVX2 code path on Intel processors only, so on others it refuses rather than
build other weights).

Larger variants of the same recipe (same tokenizer, corpus, seed and steps; wider and deeper,
with a lower learning rate) come from ``load(size=...)``: :data:`SIZES` names them (``"1m"``,
the shipped default, ``"4m"`` and ``"16m"``, which takes about 25 minutes on one CPU thread),
and a :class:`TinySize` describes any other. Each is built once, with this machine's kernels,
into a folder of its own whose name says which kernels (a build is never reused under others).

The model writes varied Python-documentation prose. It was also trained on chats that answer
:data:`PARAPHRASE_PROMPT` with the user's passage, so a paraphrase prompt yields text in that
format and domain; at this size it does not learn to copy the passage itself. Its
``generation_config`` sets ``repetition_penalty=1.3``: without it, greedy and beam search from
so small a model loop (``"x" and "x" and ...``). :func:`waterdrum_hf.generate` samples
without it, as it ignores every checkpoint default that reshapes the distribution.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoTokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    PreTrainedTokenizerFast,
)

from waterdrum_hf.generation.prompting import PARAPHRASE_PREFILL, PARAPHRASE_PROMPT
from waterdrum_hf.utils.files import building_folder, check_local_location
from waterdrum_hf.utils.progress import library_progress, progress_bar
from waterdrum_hf.utils.torch_plumbing import (
    cpu_kernels,
    cpu_vendor,
    load_causal_lm,
    mkl_branch,
    torch_threads,
)

VERSION = "2"
"""Bumped whenever the build code changes (recipe fields are hashed into the folder name)."""

SHIPPED = Path(__file__).with_name("tiny_model")
"""The default build, shipped in the package: a model folder with ``build.json`` beside the
weights (their digest, the recipe's fingerprint, the kernels and versions that built them)."""

BUILD_KERNELS = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
"""The CPU kernels :data:`SHIPPED` was built with: PyTorch's, MKL's and oneDNN's AVX2 code
paths, which any Intel x86-64 processor with AVX2 runs the same (what a machine whose best
kernels are AVX2 uses on its own). MKL honours ``MKL_CBWR=AVX2`` on Intel processors only
(:func:`~waterdrum_hf.utils.torch_plumbing.mkl_branch`). PyTorch reads its variable once, at
import: a build under them runs in a child process."""

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>' + message['content'] + eos_token }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)

_SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>"]


@dataclass(frozen=True)
class _Recipe:
    """Everything that decides the build; part of the cache folder's name.

    Many small steps beat fewer large ones at this budget. One thread keeps the result
    independent of the core count and the build fast on a busy machine.
    """

    seed: int = 0
    vocab_size: int = 4096
    hidden_size: int = 128
    intermediate_size: int = 256
    num_layers: int = 2
    num_heads: int = 4
    context: int = 1024
    block_size: int = 256
    batch_size: int = 1
    steps: int = 1400
    learning_rate: float = 3e-3
    threads: int = 1
    repetition_penalty: float = 1.3


@dataclass(frozen=True)
class TinySize:
    """The size of a variant of the tiny model: its architecture and pretraining budget.

    Everything else (tokenizer, corpus, seed, context, batch and block size) stays the default
    build's, so variants differ in capacity only. A pretraining step costs about in proportion
    to the parameter count: the default build takes about a minute on one CPU thread.
    """

    hidden_size: int = _Recipe.hidden_size  # defaults: the default build's
    intermediate_size: int = _Recipe.intermediate_size
    num_layers: int = _Recipe.num_layers
    num_heads: int = _Recipe.num_heads
    steps: int = _Recipe.steps
    learning_rate: float = _Recipe.learning_rate

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not value > 0:
                raise ValueError(f"TinySize.{field.name} must be > 0, got {value!r}.")
        if self.hidden_size % self.num_heads:
            raise ValueError(
                f"TinySize.hidden_size ({self.hidden_size}) must be a multiple of "
                f"num_heads ({self.num_heads})."
            )


SIZES: dict[str, TinySize] = {
    "1m": TinySize(),  # the default build: 0.85M parameters
    "4m": TinySize(256, 512, 4, 4, learning_rate=2e-3),  # 3.7M
    "16m": TinySize(512, 1024, 5, 8, learning_rate=1e-3),  # 15.2M
}
"""Named sizes for :func:`load` (parameter counts with the 4096-token vocabulary). All
pretrain for the default's 1400 steps (the same tokens); on one CPU thread the default takes
about a minute, ``"4m"`` about 7 and ``"16m"`` about 25 (estimated from measured seconds per
trained token; benchmarks/capacity.py). Wider models take a lower learning rate."""


NAME = "tiny"
"""The short name of the built-in model and its tokenizer, wherever a model or a tokenizer is
named (the demo's models were trained from it)."""


def pretrained_location(name: str, what: str) -> str:
    """What ``from_pretrained`` should load for ``name``: the built-in model's folder for
    :data:`NAME` (built on first use), else ``name``, which must exist if it looks like a
    local path (a one-line ``ValueError`` at once, before any Hub call)."""
    if name == NAME:
        return str(built_path())
    check_local_location(name, what)
    return name


def load(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    size: str | TinySize = "1m",
    show_progress: bool | None = None,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Return the tiny ``(model, tokenizer)``, building and caching them on first use.

    Args:
        cache_dir: folder that holds the builds of sizes other than the default (which ships,
            :data:`SHIPPED`); defaults to ``$HF_HOME/waterdrum_hf`` (see :func:`cache_path`).
        size: a name in :data:`SIZES` or a :class:`TinySize`: the model's width, depth and
            pretraining budget. Every size has the same tokenizer.
        show_progress: progress bars of training and loading; ``None`` shows them on a
            terminal only.

    Returns:
        The model in eval mode on the CPU (at this size a GPU gains nothing, and callers may
        feed it CPU tensors) and its tokenizer, loaded with ``AutoModelForCausalLM`` /
        ``AutoTokenizer`` from the cache folder.
    """
    path = built_path(cache_dir, size=size, show_progress=show_progress)
    with library_progress(show_progress):
        return load_causal_lm(path, device="cpu"), AutoTokenizer.from_pretrained(path)


def built_path(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    size: str | TinySize = "1m",
    show_progress: bool | None = None,
) -> Path:
    """The folder of the build (:func:`cache_path`), building it first if it is missing: a
    model folder that ``from_pretrained`` (and ``waterdrum ... tiny``) loads."""
    path = cache_path(cache_dir, size=size)
    if path != SHIPPED and not path.is_dir():
        _build(path, _recipe(size), show_progress=show_progress)
    return path


def cache_path(
    cache_dir: str | os.PathLike[str] | None = None, *, size: str | TinySize = "1m"
) -> Path:
    """Return the folder that :func:`load` reads (absolute, so that a model's
    ``name_or_path``, and every cache digest made from it, does not depend on the working
    directory or on how ``HF_HOME`` was spelled): :data:`SHIPPED` for the default size, else
    ``tiny-h<hidden>x<layers>-<version>-<hash>-<kernels>`` in ``cache_dir``, built when it is
    missing. The hash covers the recipe and the running Python's ``pydoc_data`` text; the
    kernels are this process's (``avx512``, ``avx2``, ..., with MKL's branch where
    ``MKL_CBWR`` pins one)."""
    recipe = _recipe(size)
    if recipe == _Recipe():
        return SHIPPED
    if cache_dir is None:
        from huggingface_hub import constants

        cache_dir = Path(os.environ.get("HF_HOME") or constants.HF_HOME) / "waterdrum_hf"
    label = f"h{recipe.hidden_size}x{recipe.num_layers}"
    name = f"tiny-{label}-{VERSION}-{_fingerprint(_corpus_texts(), recipe)}-{cpu_kernels()}"
    return (Path(cache_dir) / name).resolve()


def weights_digest(model: PreTrainedModel) -> str:
    """The SHA-256 of a model's weights: every tensor of its state dict, in name order, its
    name and raw bytes (so a changed value, dtype, shape or name changes it)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        data = tensor.detach().cpu().contiguous()
        digest.update(f"{name}:{data.dtype}:{tuple(data.shape)}".encode())
        digest.update(data.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def shipped_build_info() -> dict[str, Any]:
    """What :data:`SHIPPED`'s ``build.json`` records: the weights' ``digest``
    (:func:`weights_digest`), the ``kernels`` they were built with, and the build's
    :func:`build_context`."""
    info: dict[str, Any] = json.loads((SHIPPED / "build.json").read_text(encoding="utf-8"))
    return info


def build_context() -> dict[str, Any]:
    """What decides the default build here besides the kernels: ``fingerprint`` (the recipe
    and the running Python's corpus text) and ``versions`` (Python, torch, transformers,
    tokenizers). Where it equals the shipped build's, :func:`build_reproducibly` gives the
    shipped weights."""
    import platform

    import tokenizers
    import transformers

    versions = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
    }
    return {"fingerprint": _fingerprint(_corpus_texts(), _Recipe()), "versions": versions}


def build_reproducibly(path: str | os.PathLike[str], *, show_progress: bool | None = None) -> Path:
    """Build the default recipe into ``path`` (which must not exist) in a child process under
    :data:`BUILD_KERNELS`: the shipped weights bit for bit wherever the running versions and
    corpus are those of :func:`shipped_build_info`. About a minute on one CPU thread.

    Raises ``RuntimeError`` on a processor whose MKL cannot take the pinned AVX2 branch (any
    not made by Intel): there the build would give other weights under the shipped name."""
    path = Path(path).resolve()
    if path.exists():
        raise ValueError(f"{path} exists: build_reproducibly builds into a new folder.")
    if mkl_branch(BUILD_KERNELS["MKL_CBWR"]) != "avx2":
        raise RuntimeError(
            f"the reproducible build needs MKL's AVX2 code path, which MKL takes on Intel "
            f"processors only; this one is {cpu_vendor() or 'of an unknown vendor'}, where "
            "MKL_CBWR=AVX2 runs MKL's own choice and the weights would differ from the shipped "
            "ones. tiny.load(size=...) builds other sizes with this machine's kernels."
        )
    child = (
        "import sys; from waterdrum_hf import tiny; tiny._build_under_build_kernels(sys.argv[1:])"
    )
    arguments = [str(path), {None: "", True: "1", False: "0"}[show_progress]]
    env = {**os.environ, **BUILD_KERNELS, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", child, *arguments], env=env, check=True)
    return path


def _recipe(size: str | TinySize) -> _Recipe:
    """The default recipe at ``size`` (a name in :data:`SIZES` or a :class:`TinySize`)."""
    if isinstance(size, str):
        if size not in SIZES:
            raise ValueError(
                f"`size` must be one of {', '.join(SIZES)} or a tiny.TinySize, got {size!r}."
            )
        size = SIZES[size]
    if not isinstance(size, TinySize):
        raise TypeError(f"`size` must be a name in tiny.SIZES or a tiny.TinySize, got {size!r}.")
    return replace(_Recipe(), **asdict(size))


def _fingerprint(texts: list[str], recipe: _Recipe) -> str:
    digest = hashlib.sha256(repr(sorted(asdict(recipe).items())).encode())
    for text in texts:
        digest.update(text.encode())
    return digest.hexdigest()[:10]


def _corpus_texts() -> list[str]:
    from waterdrum_hf.data.corpus import toy_corpus

    return list(toy_corpus()["text"])


def _build(path: Path, recipe: _Recipe, *, show_progress: bool | None) -> None:
    """Train and save the tokenizer and model into ``path``, atomically (temp dir + rename)."""
    with building_folder(path) as tmp:
        texts = _corpus_texts()
        tokenizer = _train_tokenizer(texts, recipe)
        with _deterministic(recipe):
            model = _train_model(tokenizer, texts, recipe, show_progress=show_progress)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)


def _train_tokenizer(texts: list[str], recipe: _Recipe) -> PreTrainedTokenizerFast:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=recipe.vocab_size,
        special_tokens=_SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator([*texts, PARAPHRASE_PROMPT, PARAPHRASE_PREFILL], trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        additional_special_tokens=_SPECIAL_TOKENS[3:],
        add_bos_token=True,
        chat_template=CHAT_TEMPLATE,
        model_max_length=recipe.context,
        padding_side="left",
    )


def _training_examples(texts: list[str]) -> list[str]:
    """Every passage as a chat that copies it as its "paraphrase"; every 4th also as plain text.

    Chats dominate because they also train plain language modelling (the user turn) and the
    answer format; the plain copies keep raw-text completion in distribution.
    """
    examples = []
    for i, text in enumerate(texts):
        system = f"<|system|>{PARAPHRASE_PROMPT}</s>" if i % 4 < 2 else ""
        prefill = PARAPHRASE_PREFILL if i % 2 == 0 else ""
        examples.append(f"<s>{system}<|user|>{text}</s><|assistant|>{prefill}{text}</s>")
        if i % 4 == 3:
            examples.append(f"<s>{text}</s>")
    return examples


def _train_model(
    tokenizer: PreTrainedTokenizerFast,
    texts: list[str],
    recipe: _Recipe,
    *,
    show_progress: bool | None,
) -> LlamaForCausalLM:
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=recipe.hidden_size,
        intermediate_size=recipe.intermediate_size,
        num_hidden_layers=recipe.num_layers,
        num_attention_heads=recipe.num_heads,
        num_key_value_heads=recipe.num_heads,
        max_position_embeddings=recipe.context,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    blocks = _packed_blocks(tokenizer, _training_examples(texts), recipe.block_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=recipe.learning_rate, weight_decay=0.01)
    warmup = max(1, recipe.steps // 20)  # linear warm-up, then cosine decay to 10 %
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min((s + 1) / warmup, 0.1 + 0.45 * (1 + math.cos(math.pi * s / recipe.steps))),
    )
    epochs = math.ceil(recipe.steps * recipe.batch_size / len(blocks))
    order = torch.cat([torch.randperm(len(blocks)) for _ in range(epochs)])
    model.train()
    bar = progress_bar(range(recipe.steps), desc="Training the tiny model", enabled=show_progress)
    for step in bar:
        batch = blocks[order[step * recipe.batch_size : (step + 1) * recipe.batch_size]]
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        bar.set_postfix(loss=f"{loss.item():.3f}")
    model.eval()
    model.generation_config.repetition_penalty = recipe.repetition_penalty
    return model


def _packed_blocks(
    tokenizer: PreTrainedTokenizerFast, examples: list[str], block_size: int
) -> torch.Tensor:
    """Shuffle the examples, concatenate their tokens and cut ``(n, block_size)`` blocks."""
    ids = tokenizer(examples, add_special_tokens=False)["input_ids"]
    stream = [t for i in torch.randperm(len(ids)).tolist() for t in ids[i]]
    n = len(stream) // block_size
    return torch.tensor(stream[: n * block_size]).view(n, block_size)


@contextmanager
def _deterministic(recipe: _Recipe) -> Iterator[None]:
    """Seed torch, fix the thread count and use deterministic kernels; restore all after."""
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    with torch.random.fork_rng(devices=[]), torch_threads(recipe.threads):
        torch.manual_seed(recipe.seed)
        torch.use_deterministic_algorithms(True)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(was_deterministic)


def _build_under_build_kernels(arguments: list[str]) -> None:
    """The child of :func:`build_reproducibly` (``[folder, progress]``): refuse unless the
    pinned kernels are in force (a processor without AVX2 falls back to others), then build."""
    if cpu_kernels() != "avx2-mklavx2-onednnavx2":
        raise SystemExit(
            f"the reproducible build needs {BUILD_KERNELS} in force on a processor with AVX2; "
            f"this process runs {cpu_kernels()}"
        )
    folder, progress = arguments
    _build(Path(folder), _Recipe(), show_progress={"": None, "1": True, "0": False}[progress])
