"""A faithful-paraphraser stand-in: Waterfall's watermark embedded by token substitution.

The paper watermarks with Llama-3.1-8B, whose paraphrases stay close to the source: an "exact
duplicate" re-watermarked under another key is nearly the same text, which is what defeats
ROUGE. The built-in small model cannot paraphrase faithfully (its rewrites share little text
with the source), so the reproduction embeds the watermark the way a faithful paraphraser
would, by changing few tokens: at every position the token is chosen among the source token
and the small model's most likely alternatives *given the source so far* (so alignment never
breaks), maximising

    log p(token) + copy_bias * [token == source token] + kappa * f(pi_key,prev(token)),

where ``f`` is Waterfall's function ``k_p`` at the token's position in the permutation seeded
by the key and the previous *output* token: the perturbation Waterfall adds, so the result
verifies like any Waterfall text. The first token is kept (it has no context).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from waterdrum_hf.schemes.permutation import permuted_positions
from waterdrum_hf.schemes.waterfall.function import watermark_function
from waterdrum_hf.utils.torch_plumbing import inference_mode, model_device


def substitution_watermark(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    keys: Sequence[int],
    *,
    kappa: float = 2.0,
    copy_bias: float = 2.0,
    alternatives: int = 8,
    k_p: int = 1,
) -> list[str]:
    """Each text watermarked under its key by substituting tokens (see the module)."""
    vocab_size = int(tokenizer.vocab_size)
    bos = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    device = model_device(model)
    watermarked = []
    with inference_mode(model):
        for text, key in zip(texts, keys, strict=True):
            source = tokenizer(text, add_special_tokens=False)["input_ids"]
            if len(source) < 2:
                watermarked.append(text)
                continue
            ids = torch.tensor([bos + source], device=device)
            log_probs = torch.log_softmax(
                model(input_ids=ids).logits[0, len(bos) - 1 : -1].float(), -1
            )
            top = log_probs.topk(alternatives, dim=-1)
            output = [source[0]]
            for j in range(1, len(source)):
                candidates = np.unique(np.append(top.indices[j].cpu().numpy(), source[j]))
                candidates = candidates[candidates < vocab_size]
                if output[-1] >= vocab_size or len(candidates) == 0:
                    output.append(source[j])  # no watermark context: keep the source
                    continue
                seeds = np.tile([int(key), output[-1]], (len(candidates), 1))
                positions = permuted_positions(seeds, candidates, vocab_size)
                score = (
                    log_probs[j, torch.as_tensor(candidates, device=device)].cpu().numpy()
                    + copy_bias * (candidates == source[j])
                    + kappa * watermark_function(positions, k_p, vocab_size)
                )
                output.append(int(candidates[np.argmax(score)]))
            watermarked.append(tokenizer.decode(output, skip_special_tokens=True))
    return watermarked
