"""Queries from owners' data: completion prefixes (and their continuations) and QA prompts."""

from __future__ import annotations

import copy

import pytest

from waterdrum_hf import completion_queries, qa_queries
from waterdrum_hf.generation.prompting import completion_queries_and_continuations


def test_completion_queries_are_the_first_tokens(tiny_model, texts):
    _, tokenizer = tiny_model
    queries = completion_queries(texts, tokenizer, prefix_tokens=12)
    for query, text in zip(queries, texts, strict=True):
        assert text.startswith(query)
        assert len(tokenizer(query, add_special_tokens=False)["input_ids"]) == 12
    # The paper's rule (max_fraction=None) uses a short text whole; the default takes half.
    assert completion_queries(["short text"], tokenizer, 50, max_fraction=None) == ["short text"]


def test_max_fraction_leaves_part_of_every_text_to_complete(tiny_model, texts):
    _, tokenizer = tiny_model
    short = "The with statement is used to wrap the execution of a block."
    length = len(tokenizer(short, add_special_tokens=False)["input_ids"])
    [query] = completion_queries([short], tokenizer, prefix_tokens=50, max_fraction=0.5)
    assert short.startswith(query)
    assert len(tokenizer(query, add_special_tokens=False)["input_ids"]) == length // 2
    assert completion_queries([short], tokenizer, prefix_tokens=50) == [query]  # the default
    # Long texts keep their prefix_tokens; the cap only bites below 2 * prefix_tokens.
    assert completion_queries(texts, tokenizer, 12, max_fraction=0.5) == completion_queries(
        texts, tokenizer, 12
    )
    with pytest.raises(ValueError, match="max_fraction"):
        completion_queries([short], tokenizer, max_fraction=0)


def test_continuations_are_the_tokens_right_after_each_query(tiny_model, texts):
    """One rule for the demo's queries (max_fraction=0.5) and the reproduction's queries and
    ROUGE references: cut at min(prefix_tokens, half the text), at least one token."""
    _, tokenizer = tiny_model
    corpus = [*texts[:3], "The with statement is used to wrap the execution of a block.", "x"]
    queries, continuations = completion_queries_and_continuations(
        corpus, tokenizer, 12, max_fraction=0.5, continuation_tokens=5
    )
    assert queries == completion_queries(corpus, tokenizer, 12, max_fraction=0.5)
    for text, query, continuation in zip(corpus, queries, continuations, strict=True):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        cut = max(1, min(12, len(ids) // 2))
        assert tokenizer(query, add_special_tokens=False)["input_ids"] == ids[:cut]
        assert tokenizer(continuation, add_special_tokens=False)["input_ids"] == ids[cut : cut + 5]
        assert text.startswith(query + continuation)
    assert completion_queries_and_continuations(corpus, tokenizer, 12, continuation_tokens=0)[
        1
    ] == [""] * len(corpus)
    with pytest.raises(ValueError, match="continuation_tokens"):
        completion_queries_and_continuations(corpus, tokenizer, 12, continuation_tokens=-1)


def test_qa_queries_use_the_chat_template_or_a_plain_form(tiny_model):
    _, tokenizer = tiny_model
    [chat] = qa_queries(["What is a lambda?"], tokenizer)
    assert chat == "<s><|user|>What is a lambda?</s><|assistant|>"
    plain = copy.copy(tokenizer)
    plain.chat_template = None
    assert qa_queries(["Why?"], plain) == ["Question: Why?\nAnswer:"]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda t: completion_queries("one text", t), TypeError, "texts must be a list of strings"),
        (lambda t: completion_queries(["a", 3], t), TypeError, r"texts\[1\] must be a str"),
        (lambda t: completion_queries(["a"], t, prefix_tokens=0), ValueError, "prefix_tokens"),
        (lambda t: qa_queries([None], t), TypeError, r"questions\[0\]"),
    ],
)
def test_queries_reject_bad_input(tiny_model, call, error, match):
    with pytest.raises(error, match=match):
        call(tiny_model[1])


def test_row_queries_is_the_one_rule_from_rows_to_queries(tiny_model, texts):
    """Texts give completion queries (with their share cap), questions QA queries; rows with
    neither are refused; the callback's and the lm-eval tasks' queries are the same."""
    from datasets import Dataset

    from waterdrum_hf.callbacks.plan import dataset_queries
    from waterdrum_hf.generation.prompting import row_queries

    _, tok = tiny_model
    rows = Dataset.from_dict({"text": texts, "owner_id": [1] * len(texts)})
    capped = row_queries(rows, tok, prefix_tokens=400, max_fraction=0.25)
    assert capped == completion_queries(texts, tok, 400, max_fraction=0.25)
    assert capped != row_queries(rows, tok, prefix_tokens=400, max_fraction=None)
    kwargs = {"text_column": "text", "question_column": "question", "prefix_tokens": 8}
    assert dataset_queries(rows, tok, id_column="owner_id", **kwargs)[0] == row_queries(
        rows, tok, prefix_tokens=8
    )
    questions = Dataset.from_dict({"question": ["Who wrote it?"], "owner_id": [1]})
    assert row_queries(questions, tok) == qa_queries(["Who wrote it?"], tok)
    with pytest.raises(ValueError, match="neither a 'body' nor a 'q' column"):
        row_queries(rows, tok, text_column="body", question_column="q")
