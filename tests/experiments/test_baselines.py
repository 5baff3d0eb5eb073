"""The paper's baselines: ROUGE-L recall and Min-k% Prob MIA, against hand computations."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from waterdrum_hf.experiments.baselines import mia_value, min_k_percent_prob, rouge_l_recall


def test_rouge_l_recall_is_the_lcs_over_the_reference_length():
    recall = rouge_l_recall(
        ["the cat on mat", "completely different words", "the cat sat on the mat"],
        ["the cat sat on the mat"] * 3,
    )
    assert recall == pytest.approx([4 / 6, 0.0, 1.0])
    with pytest.raises(ValueError, match="`predictions` has 1 entries but `references` has 2"):
        rouge_l_recall(["a"], ["a", "b"])


def test_min_k_percent_prob_equals_a_direct_computation_whatever_the_padding(tiny_model):
    model, tokenizer = tiny_model
    texts = [
        "The class statement defines a class.",
        "A lambda.",
        "x",
        "Exceptions are raised by the raise statement in a try clause.",
    ]
    batched = min_k_percent_prob(model, tokenizer, texts, k=0.4, batch_size=4)
    for text, score in zip(texts, batched, strict=True):
        ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
        if ids.shape[1] < 2:
            assert np.isnan(score)
            continue
        with torch.no_grad():
            log_probs = torch.log_softmax(model(input_ids=ids).logits[0, :-1].float(), -1)
        token_log_probs = log_probs.gather(-1, ids[0, 1:, None])[:, 0].numpy()
        lowest = np.sort(token_log_probs)[: max(1, int(0.4 * len(token_log_probs)))]
        assert score == pytest.approx(lowest.mean(), abs=1e-5)
    with pytest.raises(ValueError, match="`k` must be in"):
        min_k_percent_prob(model, tokenizer, texts, k=0)


def test_mia_value_is_the_papers_rescaled_auroc():
    members, holdout = [0.9, 0.8, -0.1, 0.7], [0.1, 0.2, 0.75]
    auroc = roc_auc_score([1] * 4 + [0] * 3, members + holdout)
    assert mia_value(members, holdout) == pytest.approx(2 * auroc - 1)
    assert mia_value([1, 2], [1, 2]) == pytest.approx(0.0)
