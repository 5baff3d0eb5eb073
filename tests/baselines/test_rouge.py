"""ROUGE-L recall, the paper's text-overlap baseline, against hand computations."""

from __future__ import annotations

import pytest

from waterdrum_hf.baselines import rouge_l_recall


def test_rouge_l_recall_is_the_lcs_over_the_reference_length():
    # LCS of "the cat on mat" in "the cat sat on the mat": the cat on mat, 4 of 6 words
    recall = rouge_l_recall(
        ["the cat on mat", "completely different words", "the cat sat on the mat", "cats"],
        ["the cat sat on the mat"] * 3 + ["cat"],
    )
    assert recall == pytest.approx([4 / 6, 0.0, 1.0, 1.0])  # stemmed: cats -> cat


def test_rouge_l_recall_refuses_bad_input():
    with pytest.raises(ValueError, match="`predictions` has 1 entries but `references` has 2"):
        rouge_l_recall(["a"], ["a", "b"])
    with pytest.raises(TypeError, match="not a single string"):
        rouge_l_recall("a", ["a"])
    with pytest.raises(TypeError, match=r"references\[0\] must be a str"):
        rouge_l_recall(["a"], [3])
