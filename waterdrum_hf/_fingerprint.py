"""Stable ``datasets`` fingerprints for callables that hold a model (never its pickled weights)."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

import torch


@lru_cache(maxsize=64)
def key_digest(key: int) -> str:
    """A deliberately slow one-way hash of a watermark id, so a cache fingerprint (it ends up
    in file names) does not give the 32-bit key away to a quick brute-force search."""
    return hashlib.pbkdf2_hmac(
        "sha256", str(key).encode(), b"waterdrum-hf watermark key", 200_000
    ).hex()


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
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def register_with_datasets_hasher(cls: type) -> None:
    """Make ``datasets`` hash instances of ``cls`` by their ``fingerprint`` attribute.

    ``Dataset.map`` fingerprints its function by pickling it with ``datasets``' own pickler;
    pickling the model's weights would be slow and would not be stable. The reducer registered
    here applies to that pickler only, so ordinary pickling (``num_proc > 1``) is unchanged.
    """
    from datasets.utils._dill import pklregister

    def save(pickler: Any, obj: Any) -> None:
        pickler.save_reduce(str, (f"{type(obj).__qualname__}:{obj.fingerprint}",), obj=obj)

    pklregister(cls)(save)
