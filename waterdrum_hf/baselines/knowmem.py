"""MUSE's KnowMem (Shi et al., 2024): how much a model still knows about the facts of a text,
as the mean ROUGE-L F1 of its answers to questions about them against the gold answers.

Following ``swj0419/muse_bench`` ``metrics/knowmem.py`` and ``metrics/logger.py``: each
question is asked in the prompt ``"Question: {q}\\nAnswer: "`` after the few-shot examples
``"Question: {q}\\nAnswer: {a}\\n\\n"``, answered greedily in up to 32 new tokens, and the
answer is cut before the first ``"\\n\\n"``, then ``"\\nQuestion"``, then ``"Question:"``; the
score is ``rouge_score``'s ROUGE-L F-measure *without* stemming, averaged over questions.
MUSE reports it times 100; open-unlearning's ``forget_knowmem_ROUGE`` takes the same F1 but
stemmed (``src/evals/metrics/utils.py``, ``eval_text_similarity``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from waterdrum_hf.baselines.inputs import check_same_length
from waterdrum_hf.baselines.rouge import rouge_l_scores
from waterdrum_hf.generation.engine import generate
from waterdrum_hf.utils.validation import check_positive_int, check_string_list

STOP_STRINGS = ("\n\n", "\nQuestion", "Question:")
"""Where MUSE cuts an answer, in this order: before the first of each."""


def knowmem(predictions: Sequence[str], references: Sequence[str]) -> float:
    """KnowMem: the mean ROUGE-L F1 (unstemmed) of the answers against the gold answers."""
    scores = rouge_l_scores(predictions, references, stemmer=False)
    if not scores:
        raise ValueError("`predictions` is empty: pass at least one answer.")
    return float(np.mean([score.fmeasure for score in scores]))


def knowmem_prompt(
    question: str, icl_questions: Sequence[str] = (), icl_answers: Sequence[str] = ()
) -> str:
    """MUSE's prompt for ``question``: the few-shot examples, then the question."""
    icl_questions = check_string_list(icl_questions, "icl_questions")
    icl_answers = check_string_list(icl_answers, "icl_answers")
    check_same_length(icl_questions, icl_answers, "icl_questions and icl_answers")
    examples = "".join(
        f"Question: {q}\nAnswer: {a}\n\n" for q, a in zip(icl_questions, icl_answers, strict=True)
    )
    return f"{examples}Question: {question}\nAnswer: "


def cut_answer(text: str) -> str:
    """A generated answer up to MUSE's stop strings (:data:`STOP_STRINGS`)."""
    for stop in STOP_STRINGS:
        text = text.split(stop)[0]
    return text


def knowmem_answers(
    model: Any,
    tokenizer: Any,
    questions: Sequence[str],
    *,
    icl_questions: Sequence[str] = (),
    icl_answers: Sequence[str] = (),
    max_new_tokens: int = 32,
    batch_size: int = 16,
) -> list[str]:
    """``model``'s greedy answer to each question in MUSE's prompt, cut at its stop strings.

    Greedy decoding is :func:`waterdrum_hf.generate`'s (``greedy=True``), which leaves out
    any checkpoint default that reshapes the distribution (e.g. a repetition penalty).
    """
    questions = check_string_list(questions, "questions")
    check_positive_int(max_new_tokens, "max_new_tokens")
    prompts = [knowmem_prompt(q, icl_questions, icl_answers) for q in questions]
    completions = generate(
        model,
        tokenizer,
        prompts,
        num_samples=1,
        greedy=True,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        show_progress=False,
    )
    return [cut_answer(samples[0]) for samples in completions]


def model_knowmem(
    model: Any,
    tokenizer: Any,
    questions: Sequence[str],
    answers: Sequence[str],
    *,
    icl_questions: Sequence[str] = (),
    icl_answers: Sequence[str] = (),
    max_new_tokens: int = 32,
    batch_size: int = 16,
) -> float:
    """:func:`knowmem` of ``model``'s answers (:func:`knowmem_answers`) to ``questions``
    against the gold ``answers``."""
    answers = check_string_list(answers, "answers")
    check_same_length(check_string_list(questions, "questions"), answers, "questions and answers")
    predicted = knowmem_answers(
        model,
        tokenizer,
        questions,
        icl_questions=icl_questions,
        icl_answers=icl_answers,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
    )
    return knowmem(predicted, answers)
