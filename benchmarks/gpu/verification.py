"""Step ``verification``: ``waterdrum score`` end to end on the device in bf16, and the time of
verification's shuffle stage.

End to end: the built-in tiny model (:mod:`waterdrum_hf.tiny`) in bf16 on the device samples
completions of the toy corpus's queries; half of the owners watermark their completions with
their own :class:`~waterdrum_hf.WaterfallLogitsProcessor` (a model that kept their data), the
other half do not (forgotten owners); the completions are scored as ``waterdrum score`` scores
them (:func:`waterdrum_hf.waterdrum_result`). The retain value must stand well above the
forget value. The processor is also run on scores on the "meta" device, which shows on any
machine whether its tensors follow the scores' device and dtype.

Shuffle stage: verification's cost is the exact permutation of every distinct (owner key,
previous token) group (:func:`waterdrum_hf.schemes.permutation.permuted_positions`). Every
backend in :data:`SHUFFLE_BACKENDS` is timed on the same groups and checked equal to the CPU's
positions: a GPU kernel is measured by adding it there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from benchmarks.gpu.common import (
    UNK,
    Budget,
    Setup,
    release,
    secret_ids,
    timed,
    word_tokenizer,
)


def _cpu_positions(seeds: np.ndarray, tokens: np.ndarray, vocab_size: int) -> np.ndarray:
    from waterdrum_hf.schemes.permutation import permuted_positions

    return permuted_positions(seeds, tokens, vocab_size)


SHUFFLE_BACKENDS: dict[str, Callable[[np.ndarray, np.ndarray, int], np.ndarray]] = {
    "cpu": _cpu_positions,
}
"""Shuffle-stage kernels by name: ``(seeds (M, 2), tokens (M,), N) -> positions (M,)``, each
exact against ``"cpu"`` (the library's kernel)."""


def processor_checks(vocab_size: int, dtype: torch.dtype) -> dict[str, Any]:
    """Run a Waterfall processor on ``meta`` scores of ``dtype``: its output must be on the
    scores' device in their dtype (a tensor it kept on the CPU would fail on ``meta``)."""
    from waterdrum_hf import WaterfallLogitsProcessor

    processor = WaterfallLogitsProcessor(vocab_size, secret_ids(1)[0])
    input_ids = torch.tensor([[3, 4], [5, 6]])
    processor.reset(prompt_length=1)
    scores = torch.empty((2, vocab_size + 8), dtype=dtype, device="meta")
    out = processor(input_ids, scores)
    return {"processor_meta_device": str(out.device), "processor_meta_dtype": str(out.dtype)}


def end_to_end(setup: Setup) -> dict[str, Any]:
    """Sample with the tiny model in bf16 on the device, watermark half of the owners, score."""
    import waterdrum_hf.tiny as tiny
    from waterdrum_hf import (
        WaterfallLogitsProcessor,
        completion_queries,
        generate,
        waterdrum_result,
    )
    from waterdrum_hf.data import toy_corpus

    sizes = setup.sizes
    with timed(torch.device("cpu")) as built:
        model, tokenizer = tiny.load(show_progress=False)
    model = model.to(setup.device, setup.dtype)
    corpus = toy_corpus(sizes.verify_owners, max_passages_per_owner=sizes.verify_passages)
    keys = secret_ids(sizes.verify_owners, seed=1)
    watermarked = set(range(sizes.verify_owners // 2))
    completions: list[list[str]] = []
    owners: list[int] = []
    with timed(setup.device) as sampled:
        for owner in range(sizes.verify_owners):
            texts = [
                t for t, o in zip(corpus["text"], corpus["owner_id"], strict=True) if o == owner
            ]
            processors = []
            if owner in watermarked:
                processors = [WaterfallLogitsProcessor(tokenizer.vocab_size, keys[owner])]
            completions += generate(
                model,
                tokenizer,
                completion_queries(texts, tokenizer, sizes.verify_prefix),
                num_samples=sizes.verify_samples,
                max_new_tokens=sizes.verify_new_tokens,
                seed=owner,
                logits_processor=processors,
                show_progress=False,
            )
            owners += [keys[owner]] * len(texts)
    forget = [keys[o] for o in range(sizes.verify_owners) if o not in watermarked]
    with timed(torch.device("cpu")) as scored:
        result = waterdrum_result(completions, owners, tokenizer, forget_ids=forget)
    del model
    release(setup.device)
    return {
        "tiny_load_s": built["seconds"],
        "sampling_s": sampled["seconds"],
        "scoring_s": scored["seconds"],
        "forget": result.forget.value if result.forget else None,
        "retain": result.retain.value if result.retain else None,
        "separability_auroc": result.separability_auroc,
        "model_dtype": str(setup.dtype),
        "completions": sum(len(c) for c in completions),
    }


def shuffle_stage(texts: list[str], tokenizer: Any, keys: list[int]) -> dict[str, Any]:
    """Time verification whole, its shuffle stage on the CPU, and every other backend on the
    same groups (checked exact against the CPU)."""
    from waterdrum_hf import Verifier
    from waterdrum_hf.schemes.permutation import permutation_backend

    verifier = Verifier(tokenizer, show_progress=False)
    ids = np.array([keys[i % len(keys)] for i in range(len(texts))], dtype=np.int64)
    token_ids = verifier.token_ids(texts)
    contexts, tokens, text_of = verifier.countable_pairs(token_ids)
    seeds = np.concatenate([ids[text_of][:, None], contexts], axis=1)
    vocab = verifier.vocab_size
    _cpu_positions(seeds[:8], tokens[:8], vocab)  # compiles the kernel outside the timing
    with timed(torch.device("cpu")) as whole:
        verifier.verify(texts, ids)
    row: dict[str, Any] = {
        "vocab_size": vocab,
        "texts": len(texts),
        "pairs": len(tokens),
        "groups": len(np.unique(seeds, axis=0)),
        "cpu_kernel": permutation_backend(),
        "verify_s": whole["seconds"],
    }
    reference = None
    for name, backend in SHUFFLE_BACKENDS.items():
        with timed(torch.device("cuda" if torch.cuda.is_available() else "cpu")) as t:
            positions = backend(seeds, tokens, vocab)
        row[f"shuffle_{name}_s"] = t["seconds"]
        if reference is None:
            reference = positions
        row[f"shuffle_{name}_exact"] = bool(np.array_equal(positions, reference))
    row["shuffle_share_of_verify"] = row["shuffle_cpu_s"] / row["verify_s"]
    return row


def run(setup: Setup, budget: Budget) -> dict[str, Any]:
    from waterdrum_hf.data import toy_corpus

    sizes = setup.sizes
    e2e = end_to_end(setup)
    checks = processor_checks(256, setup.dtype)
    rows = [{"stage": "end to end", **e2e, **checks}]
    if budget.expired:
        rows.append({"stage": "shuffle", "skipped": "time budget"})
    else:
        import waterdrum_hf.tiny as tiny

        _, tokenizer = tiny.load(show_progress=False)
        texts = list(toy_corpus(sizes.verify_owners)["text"])[: sizes.shuffle_texts]
        rows.append(
            {"stage": "shuffle, toy corpus", **shuffle_stage(texts, tokenizer, secret_ids(4))}
        )
        words = word_tokenizer(sizes.shuffle_vocab)
        # Zipf-like ids as in real text (benchmarks/verify_speed.py's exponent), 20 owners.
        zipf = np.random.default_rng(4).zipf(1.2, size=(sizes.shuffle_texts, sizes.shuffle_length))
        ids = UNK + 1 + (zipf - 1) % (sizes.shuffle_vocab - UNK - 1)  # frequent words first
        synthetic = [" ".join(f"w{i}" for i in row) for row in ids]
        rows.append(
            {"stage": "shuffle, Zipf words", **shuffle_stage(synthetic, words, secret_ids(20))}
        )
    return {
        "rows": rows,
        "notes": [
            f"tiny model in {setup.dtype} on {setup.device.type}; "
            f"{sizes.verify_samples} samples of {sizes.verify_new_tokens} tokens per query; "
            "owners 1..n/2 watermark their completions (retain), the rest do not (forget)",
            "shuffle: the exact permutations of verification's (key, previous token) groups; "
            f"backends: {', '.join(SHUFFLE_BACKENDS)}",
        ],
    }
