"""MUSE's KnowMem: ROUGE-L F1 (unstemmed) by hand and by MUSE's code, MUSE's prompt and stop
strings, bad input, and the model-facing answers against the tiny model's own greedy output."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from rouge_score import rouge_scorer

from waterdrum_hf.baselines import knowmem, knowmem_answers, model_knowmem
from waterdrum_hf.baselines.knowmem import cut_answer, knowmem_prompt
from waterdrum_hf.generation.prompting import prompt_token_ids


def test_knowmem_is_the_mean_unstemmed_rouge_l_f1():
    # 1: LCS 4 words; precision 4/4, recall 4/6, F1 = 2 * 1 * (2/3) / (1 + 2/3) = 0.8
    # 2: "cats running" vs "cat run": no word in common without stemming, F1 = 0
    predictions = ["the cat on mat", "cats running"]
    references = ["the cat sat on the mat", "cat run"]
    assert knowmem(predictions, references) == pytest.approx(0.4)


def test_knowmem_agrees_with_muses_logger():
    predictions = ["Paris, in France", "He was born in 1990", "no idea", "the the the"]
    references = ["Paris", "He was born in the year 1990.", "London", "the answer"]
    # swj0419/muse_bench metrics/logger.py: RougeScorer(..., use_stemmer=False),
    # score(gt, output)["rougeL"].fmeasure; report(): mean_rougeL = sum(vals) / len(vals)
    scorer = rouge_scorer.RougeScorer(
        ["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=False
    )
    vals = [
        scorer.score(gt, out)["rougeL"].fmeasure
        for out, gt in zip(predictions, references, strict=True)
    ]
    assert knowmem(predictions, references) == pytest.approx(sum(vals) / len(vals))


def test_prompt_and_cut_are_muses():
    # swj0419/muse_bench metrics/knowmem.py: few-shot examples, then the question
    assert knowmem_prompt("Who?", ["Q1?", "Q2?"], ["A1.", "A2."]) == (
        "Question: Q1?\nAnswer: A1.\n\nQuestion: Q2?\nAnswer: A2.\n\nQuestion: Who?\nAnswer: "
    )
    assert knowmem_prompt("Who?") == "Question: Who?\nAnswer: "
    # cut before "\n\n", then "\nQuestion", then "Question:" (get_prefix_before_words_occur)
    assert cut_answer("Paris.\n\nQuestion: x") == "Paris."
    assert cut_answer("Paris\nQuestion 2") == "Paris"
    assert cut_answer("Paris Question: y") == "Paris "
    assert cut_answer(" Paris.\nBerlin.") == " Paris.\nBerlin."


def test_knowmem_refuses_bad_input():
    with pytest.raises(ValueError, match="`predictions` is empty"):
        knowmem([], [])
    with pytest.raises(ValueError, match="`predictions` has 1 entries but `references` has 2"):
        knowmem(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="`icl_questions` has 1 entries but `icl_answers` has 0"):
        knowmem_prompt("Who?", ["Q1?"], [])
    with pytest.raises(TypeError, match="not a single string"):
        knowmem("a", ["a"])


QUESTIONS = ["What does the class statement define?", "What raises an exception?"]
ICL = (["What does a lambda define?"], ["A small anonymous function."])


def test_model_answers_are_the_greedy_continuations_cut(tiny_model):
    model, tokenizer = tiny_model
    answers = knowmem_answers(
        model, tokenizer, QUESTIONS, icl_questions=ICL[0], icl_answers=ICL[1], max_new_tokens=12
    )
    for question, answer in zip(QUESTIONS, answers, strict=True):
        ids = torch.tensor([prompt_token_ids(tokenizer, knowmem_prompt(question, *ICL))])
        with torch.no_grad():  # plain greedy decoding, no checkpoint repetition penalty
            output = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                do_sample=False,
                max_new_tokens=12,
                repetition_penalty=1.0,
                pad_token_id=tokenizer.pad_token_id,
            )
        text = tokenizer.decode(output[0, ids.shape[1] :], skip_special_tokens=True)
        assert answer == cut_answer(text)
    gold = ["A class.", "The raise statement."]
    expected = knowmem(answers, gold)
    score = model_knowmem(
        model,
        tokenizer,
        QUESTIONS,
        gold,
        icl_questions=ICL[0],
        icl_answers=ICL[1],
        max_new_tokens=12,
    )
    assert score == pytest.approx(expected) and np.isfinite(score)
    with pytest.raises(ValueError, match="`questions` has 2 entries but `answers` has 1"):
        model_knowmem(model, tokenizer, QUESTIONS, gold[:1])
