"""Stable digests: of settings (JSON), of models, tokenizers and keys, and the ``datasets``
fingerprint of callables that hold a model (never its pickled weights)."""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import torch


def json_digest(payload: Any) -> str:
    """SHA-256 (hex) of ``payload`` as JSON with sorted keys: the same for equal settings
    whatever their dict order. Strict: a value JSON cannot hold raises ``TypeError`` rather
    than being hashed by its ``str()`` (which may hold a memory address)."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


@lru_cache(maxsize=64)
def key_digest(key: int) -> str:
    """A deliberately slow one-way hash of a watermark id, so a cache fingerprint (it ends up
    in file names) does not give the 32-bit key away to a quick brute-force search."""
    return hashlib.pbkdf2_hmac(
        "sha256", str(key).encode(), b"waterdrum-hf watermark key", 200_000
    ).hex()


def writer_settings(
    scheme_settings: dict[str, object], vocab_size: int, watermark_ids: Iterable[int]
) -> dict[str, object]:
    """What decides a writer's perturbation, for cache digests: its scheme's settings, the
    vocabulary size and the ids as their slow one-way hashes (:func:`key_digest`)."""
    keys = [key_digest(int(i)) for i in watermark_ids]
    return {**scheme_settings, "vocab_size": vocab_size, "keys": keys}


def module_identity(module: Any) -> dict[str, Any]:
    """Name, revision and dtype of a loaded model; a digest of its weights when it has no name."""
    config = getattr(module, "config", None)
    name = getattr(config, "_name_or_path", "") or getattr(module, "name_or_path", "")
    if name:
        return {
            "class": type(module).__name__,
            "name_or_path": str(name),
            "commit": getattr(config, "_commit_hash", None),
            "dtype": str(getattr(module, "dtype", "")),
        }
    digest = hashlib.sha256()
    for key, tensor in sorted(module.state_dict().items()):
        digest.update(f"{key}:{tensor.dtype}:{tuple(tensor.shape)}".encode())
        digest.update(
            tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
        )
    return {"class": type(module).__name__, "weights": digest.hexdigest()}


def tokenizer_identity(tokenizer: Any) -> str:
    """Digest of what decides tokenisation and prompting: vocabulary, rules, specials, template."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        state = json.loads(backend.to_str())
        state.pop("truncation", None)  # runtime settings that calls may toggle
        state.pop("padding", None)
    else:
        state = sorted(tokenizer.get_vocab().items())
    payload = {
        "class": type(tokenizer).__name__,
        "state": state,
        "special_tokens": {k: str(v) for k, v in tokenizer.special_tokens_map.items()},
        "chat_template": getattr(tokenizer, "chat_template", None),
    }
    return json_digest(payload)


def register_with_datasets_hasher(cls: type) -> None:
    """Make ``datasets`` hash instances of ``cls`` by their ``fingerprint`` attribute.

    ``Dataset.map`` fingerprints its function by pickling it with ``datasets``' own pickler;
    pickling the model's weights would be slow and would not be stable. The reducer registered
    here applies to that pickler only, so ordinary pickling (``num_proc > 1`` sends the function
    to the workers) is unchanged.

    Private hook, kept on purpose: ``datasets`` offers no public way to fingerprint an object
    (``Hasher`` hashes its pickle; ``map(new_fingerprint=)`` is the caller's, and users call
    ``dataset.map(WatermarkedDataset(...))`` themselves), and every public pickling hook
    (``__reduce__``, ``copyreg``, ``dill.register``) would also change what the worker
    processes receive. Should ``datasets.utils._dill.pklregister`` go, this warns and
    ``datasets`` falls back to hashing the whole object (slow, and cache reuse may be lost);
    ``tests/scoring/test_dataset_verification.py`` fails loudly then.
    """
    try:
        from datasets.utils._dill import pklregister
    except ImportError:
        warnings.warn(
            f"datasets no longer has datasets.utils._dill.pklregister: {cls.__name__} is "
            "fingerprinted by pickling it whole (model weights included), which is slow and may "
            "not reuse the cache; please report this to waterdrum-hf.",
            RuntimeWarning,
            stacklevel=2,
        )
        return

    def save(pickler: Any, obj: Any) -> None:
        pickler.save_reduce(str, (f"{type(obj).__qualname__}:{obj.fingerprint}",), obj=obj)

    pklregister(cls)(save)
