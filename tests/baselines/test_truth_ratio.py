"""TOFU's Truth Ratio and its aggregates: hand-made cases, TOFU's and open-unlearning's
published code on the same numbers, bad input, and the model-facing function against a
forward pass of the tiny model done here."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from waterdrum_hf.baselines import aggregate_truth_ratios, model_truth_ratio, truth_ratio
from waterdrum_hf.generation.prompting import prompt_token_ids

# Normalised probabilities P(answer|q)^(1/len) as mean token log-likelihoods, per question:
# 1: paraphrased 1/2; perturbed 1/4 and 1/16, geometric mean 1/8: R = (1/8) / (1/2) = 1/4
#    (an arithmetic mean, 5/32, would give 5/16)
# 2: paraphrased 1/5; perturbed 1/10: R = 1/2
# 3: paraphrased 1/10; perturbed 2/5: R = 4
PARAPHRASED = np.log([1 / 2, 1 / 5, 1 / 10])
PERTURBED = [np.log([1 / 4, 1 / 16]), np.log([1 / 10]), np.log([2 / 5])]


def test_truth_ratio_is_the_geometric_mean_of_wrong_over_right():
    assert truth_ratio(PARAPHRASED, PERTURBED) == pytest.approx([1 / 4, 1 / 2, 4])


def test_aggregates_are_tofus_for_the_forget_set_and_for_the_others():
    ratios = [1 / 4, 1 / 2, 4]
    # forget set: min(R, 1/R) = 1/4, 1/2, 1/4
    assert aggregate_truth_ratios(ratios, "closer_to_1_better") == pytest.approx(1 / 3)
    # other sets: max(0, 1 - R) = 3/4, 1/2, 0
    assert aggregate_truth_ratios(ratios, "true_better") == pytest.approx(1.25 / 3)


def test_tofu_and_open_unlearning_code_give_the_same_numbers():
    rng = np.random.default_rng(1)
    paraphrased = -rng.uniform(0.5, 3.0, size=20)  # mean token log-likelihoods
    perturbed = -rng.uniform(0.5, 3.0, size=(20, 5))
    ours = truth_ratio(paraphrased, perturbed)
    # locuslab/tofu evaluate_util.py, eval_perturbation_ratio (per-token losses = -ll):
    # truth_ratio = exp(gt_loss_per_token - perturb_loss_per_token.mean(-1))
    assert ours == pytest.approx(np.exp(-paraphrased - (-perturbed).mean(-1)))
    # locuslab/tofu aggregate_eval_stat.py: curr_stat_1 = exp(mean perturbed loss - paraphrased
    # loss); forget: mean(min(c, 1/c)); other sets: mean(max(0, 1 - 1/c))
    curr_stat_1 = np.exp((-perturbed).mean(-1) - (-paraphrased))
    tofu_forget = np.mean(np.minimum(curr_stat_1, 1 / curr_stat_1))
    tofu_other = np.mean(np.maximum(0, 1 - 1 / curr_stat_1))
    assert aggregate_truth_ratios(ours, "closer_to_1_better") == pytest.approx(tofu_forget)
    assert aggregate_truth_ratios(ours, "true_better") == pytest.approx(tofu_other)
    # open-unlearning src/evals/metrics/memorization.py, truth_ratio: avg losses averaged over
    # the wrong answers (aggregate_to_1D), probabilities exp(-loss), wrong / (correct + 1e-10)
    correct_prob = np.exp(paraphrased)
    wrong_prob = np.exp(-(-perturbed).mean(axis=1))
    open_unlearning = wrong_prob / (correct_prob + 1e-10)
    assert ours == pytest.approx(open_unlearning, rel=1e-8)
    closer = np.mean(np.minimum(open_unlearning, 1 / (open_unlearning + 1e-10)))
    true_better = np.mean(np.maximum(0, 1 - open_unlearning))
    assert aggregate_truth_ratios(ours, "closer_to_1_better") == pytest.approx(closer, rel=1e-8)
    assert aggregate_truth_ratios(ours, "true_better") == pytest.approx(true_better, rel=1e-8)


def test_truth_ratio_refuses_bad_input():
    with pytest.raises(ValueError, match="has 3 entries but `perturbed_log_likelihoods` has 2"):
        truth_ratio(PARAPHRASED, PERTURBED[:2])
    with pytest.raises(ValueError, match=r"`perturbed_log_likelihoods\[1\]` is empty"):
        truth_ratio(PARAPHRASED, [[-1.0], [], [-1.0]])
    with pytest.raises(ValueError, match="NaN/inf"):
        truth_ratio([math.nan], [[-1.0]])
    with pytest.raises(ValueError, match="`ratios` must be positive"):
        aggregate_truth_ratios([0.5, 0.0], "true_better")
    with pytest.raises(ValueError, match="`aggregator` must be one of"):
        aggregate_truth_ratios([0.5], "mean")


QUESTIONS = [
    "Question: What does the class statement define?\nAnswer:",
    "Question: What raises an exception?\nAnswer:",
]
PARAPHRASES = [" It defines a class.", " The raise statement."]
WRONG = [[" It imports a module.", " A loop.", " It prints text."], [" The class statement."]]


def mean_log_likelihood(model, tokenizer, question, answer):
    """log P(answer | question) / |answer| from one unpadded forward pass."""
    prompt = prompt_token_ids(tokenizer, question)
    ids = torch.tensor([prompt + tokenizer(answer, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        log_probs = torch.log_softmax(model(input_ids=ids).logits[0, :-1].double(), -1)
    answer_positions = torch.arange(len(prompt) - 1, ids.shape[1] - 1)
    return log_probs[answer_positions, ids[0, len(prompt) :]].mean().item()


def test_model_truth_ratio_equals_the_pure_ratio_of_a_direct_forward_pass(tiny_model):
    model, tokenizer = tiny_model
    ours = model_truth_ratio(model, tokenizer, QUESTIONS, PARAPHRASES, WRONG, batch_size=3)
    expected = truth_ratio(
        [
            mean_log_likelihood(model, tokenizer, q, a)
            for q, a in zip(QUESTIONS, PARAPHRASES, strict=True)
        ],
        [
            [mean_log_likelihood(model, tokenizer, q, a) for a in answers]
            for q, answers in zip(QUESTIONS, WRONG, strict=True)
        ],
    )
    assert ours == pytest.approx(expected, rel=1e-4)
    with pytest.raises(ValueError, match="answer 1 has no tokens"):
        model_truth_ratio(model, tokenizer, QUESTIONS, [PARAPHRASES[0], ""], WRONG)
    with pytest.raises(ValueError, match=r"`perturbed_answers\[0\]` is empty"):
        model_truth_ratio(model, tokenizer, QUESTIONS, PARAPHRASES, [[], WRONG[1]])
    with pytest.raises(ValueError, match="`questions` has 2 entries but `perturbed_answers` has 1"):
        model_truth_ratio(model, tokenizer, QUESTIONS, PARAPHRASES, WRONG[:1])
