"""The paper's baseline unlearning metrics, for comparison with WaterDrum.

* **ROUGE-L recall** of a model's greedy continuation of a text's prefix against the text's
  actual continuation (TOFU / MUSE style; ``rouge_score``, the ``reproduce`` extra).
* **MIA** by Min-k% Prob (Shi et al., 2024): the mean log-likelihood of the ``k`` share of a
  text's tokens the model finds least likely; members score higher. The paper's aggregate MIA
  value is ``1 - 2 * AUROC`` with the holdout set as positives, i.e. ``2 * AUROC - 1`` with the
  forget set as positives: about 1 before unlearning, 0 when members look like holdout text.

Unlike WaterDrum, both read the evaluated model's own text space (and MIA its logits), so they
need the retrained model as a reference to be interpreted (the paper's feasibility desideratum).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from waterdrum_hf.statistics import separability_auroc
from waterdrum_hf.utils.torch_plumbing import inference_mode, model_device, pad_batch, pad_token_id
from waterdrum_hf.utils.validation import check_string_list


def rouge_l_recall(predictions: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """ROUGE-L recall of each prediction against its reference (``rouge_score``, stemmed)."""
    predictions = check_string_list(predictions, "predictions")
    references = check_string_list(references, "references")
    if len(predictions) != len(references):
        raise ValueError(
            f"`predictions` has {len(predictions)} entries but `references` has {len(references)}."
        )
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        raise ImportError(
            "ROUGE-L needs the rouge-score package: pip install 'waterdrum-hf[reproduce]'"
        ) from None
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return np.array(
        [
            scorer.score(ref, pred)["rougeL"].recall
            for pred, ref in zip(predictions, references, strict=True)
        ]
    )


def min_k_percent_prob(
    model: Any, tokenizer: Any, texts: Sequence[str], *, k: float = 0.4, batch_size: int = 16
) -> np.ndarray:
    """Min-k% Prob of each text: the mean log-probability of its ``k`` lowest-scoring tokens.

    Tokens are scored given their prefix (teacher forcing; the first token, with nothing
    before it, is not scored); a text with fewer than two tokens gets NaN.
    """
    texts = check_string_list(texts, "texts")
    if not 0 < k <= 1:
        raise ValueError(f"`k` must be in (0, 1], got {k!r}.")
    encoded = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    pad = pad_token_id(tokenizer)
    device = model_device(model)
    scores = np.full(len(texts), np.nan)
    with inference_mode(model):
        for start in range(0, len(encoded), batch_size):
            batch = encoded[start : start + batch_size]
            input_ids, mask = pad_batch(batch, pad, device, side="right")  # token j at column j
            logits = model(input_ids=input_ids, attention_mask=mask).logits[:, :-1].float()
            log_probs = torch.log_softmax(logits, dim=-1).gather(-1, input_ids[:, 1:, None])[..., 0]
            for row, ids in enumerate(batch):
                values = log_probs[row, : len(ids) - 1].cpu().numpy()
                if len(values):
                    lowest = np.sort(values)[: max(1, int(k * len(values)))]
                    scores[start + row] = lowest.mean()
    return scores


def mia_value(member_scores: Sequence[float], holdout_scores: Sequence[float]) -> float:
    """The paper's aggregate MIA value, ``2 * AUROC - 1`` (members positive)."""
    return 2.0 * separability_auroc(member_scores, holdout_scores) - 1.0
