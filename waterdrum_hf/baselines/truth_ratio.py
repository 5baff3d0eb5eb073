"""TOFU's Truth Ratio (Maini et al., 2024): how much likelier a model finds wrong answers to a
question than a correct one, each probability normalised by the answer's length.

For a question ``q``, its paraphrased correct answer ``a`` and perturbed (wrong) answers
``b_1..b_m``, with ``P(x|q)^(1/|x|) = exp(mean token log-likelihood of x)``::

    R = (prod_j P(b_j|q)^(1/|b_j|))^(1/m) / P(a|q)^(1/|a|)
      = exp(mean_j ll(b_j) - ll(a))

a *geometric* mean over the perturbed answers, as TOFU's code computes it (``locuslab/tofu``
``evaluate_util.py``, ``eval_perturbation_ratio``, which leaves the arithmetic mean commented
out) and open-unlearning's does (``src/evals/metrics/memorization.py``, ``truth_ratio``:
``exp(-mean avg_loss)`` of the wrong answers over that of the correct one). R near 1: the model
cannot tell the correct answer from wrong ones (the retrained model on the forget set).

Aggregates (open-unlearning's ``aggregator``; TOFU's ``aggregate_eval_stat.py``):
``"closer_to_1_better"`` (the forget set), ``mean(min(R, 1/R))``; ``"true_better"`` (retain
set, real authors, world facts), ``mean(max(0, 1 - R))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from waterdrum_hf.baselines.inputs import check_same_length, finite_array
from waterdrum_hf.baselines.token_scores import score_answers
from waterdrum_hf.utils.validation import check_string_list

AGGREGATORS = ("closer_to_1_better", "true_better")
"""The Truth Ratio aggregates :func:`aggregate_truth_ratios` computes."""


def truth_ratio(
    paraphrased_log_likelihoods: Sequence[float] | np.ndarray,
    perturbed_log_likelihoods: Sequence[Sequence[float]],
) -> np.ndarray:
    """The Truth Ratio of each question from its answers' mean token log-likelihoods.

    Args:
        paraphrased_log_likelihoods: per question, ``log P(a|q) / |a|`` (natural log) of its
            paraphrased correct answer.
        perturbed_log_likelihoods: per question, the same of each of its perturbed answers
            (at least one each; questions may have different numbers).

    Returns:
        ``R`` per question (see the module docstring): below 1 when the correct answer is the
        likelier, above 1 when the wrong ones are.
    """
    paraphrased = finite_array(paraphrased_log_likelihoods, "paraphrased_log_likelihoods")
    if isinstance(perturbed_log_likelihoods, (str, bytes)):
        raise TypeError("`perturbed_log_likelihoods` must be a sequence of number sequences.")
    perturbed = list(perturbed_log_likelihoods)
    check_same_length(
        paraphrased, perturbed, "paraphrased_log_likelihoods and perturbed_log_likelihoods"
    )
    wrong = np.array(
        [
            finite_array(values, f"perturbed_log_likelihoods[{i}]").mean()
            for i, values in enumerate(perturbed)
        ]
    )
    ratios: np.ndarray = np.exp(wrong - paraphrased)
    return ratios


def aggregate_truth_ratios(
    ratios: Sequence[float] | np.ndarray,
    aggregator: Literal["closer_to_1_better", "true_better"],
) -> float:
    """TOFU's aggregate of per-question Truth Ratios: ``"closer_to_1_better"`` (the forget
    set: 1 when the model cannot tell right from wrong) or ``"true_better"`` (sets the model
    should know: 1 when it finds the correct answers far likelier)."""
    values = finite_array(ratios, "ratios")
    if (values <= 0).any():
        raise ValueError("`ratios` must be positive: they are ratios of probabilities.")
    if aggregator == "closer_to_1_better":
        return float(np.minimum(values, 1 / values).mean())
    if aggregator == "true_better":
        return float(np.maximum(0.0, 1 - values).mean())
    raise ValueError(f"`aggregator` must be one of {', '.join(AGGREGATORS)}, got {aggregator!r}.")


def model_truth_ratio(
    model: Any,
    tokenizer: Any,
    questions: Sequence[str],
    paraphrased_answers: Sequence[str],
    perturbed_answers: Sequence[Sequence[str]],
    *,
    batch_size: int = 16,
) -> np.ndarray:
    """:func:`truth_ratio` of each question under ``model``.

    Each answer is scored given its question as the model is prompted (apply the chat
    template first for a chat model): the question's tokens (with the tokenizer's special
    tokens, as :func:`waterdrum_hf.generate` adds them) followed by the answer's (none added,
    no EOS), every answer token scored.
    """
    questions = check_string_list(questions, "questions")
    paraphrased_answers = check_string_list(paraphrased_answers, "paraphrased_answers")
    check_same_length(questions, paraphrased_answers, "questions and paraphrased_answers")
    check_same_length(questions, perturbed_answers, "questions and perturbed_answers")
    perturbed = [
        check_string_list(answers, f"perturbed_answers[{i}]")
        for i, answers in enumerate(perturbed_answers)
    ]
    for i, answers in enumerate(perturbed):
        if not answers:
            raise ValueError(f"`perturbed_answers[{i}]` is empty: give each question one or more.")
    prompts = questions + [
        q for q, answers in zip(questions, perturbed, strict=True) for _ in answers
    ]
    answers = paraphrased_answers + [answer for answers in perturbed for answer in answers]
    scores = score_answers(model, tokenizer, prompts, answers, batch_size=batch_size)
    means = iter(float(s.log_probs.mean()) for s in scores[len(questions) :])
    return truth_ratio(
        [s.log_probs.mean() for s in scores[: len(questions)]],
        [[next(means) for _ in answers] for answers in perturbed],
    )
