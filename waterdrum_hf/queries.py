"""Queries that make a model reveal what it learned from an owner's data (paper section 5).

Completion queries are the first tokens of each training text under the *evaluated* model's
tokenizer (WaterDrum-Ax); QA queries are the questions in the model's chat format
(WaterDrum-TOFU). Feed either to :func:`waterdrum_hf.generate`.
"""

from __future__ import annotations

from collections.abc import Iterable

from transformers import PreTrainedTokenizerBase

_PLAIN_QA = "Question: {question}\nAnswer:"


def completion_queries(
    texts: Iterable[str], tokenizer: PreTrainedTokenizerBase, prefix_tokens: int = 50
) -> list[str]:
    """Return the first ``prefix_tokens`` tokens of each text, decoded back to a string.

    A text shorter than ``prefix_tokens`` tokens is used whole. Special tokens are neither
    added nor kept, so the query is plain text ready for :func:`waterdrum_hf.generate`.
    """
    texts = _strings(texts, "texts")
    if isinstance(prefix_tokens, bool) or not isinstance(prefix_tokens, int) or prefix_tokens < 1:
        raise ValueError(f"prefix_tokens must be an int >= 1, got {prefix_tokens!r}")
    if not texts:
        return []
    ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
    return tokenizer.batch_decode(
        [row[:prefix_tokens] for row in ids],
        skip_special_tokens=True,
        clean_up_tokenization_spaces=False,
    )


def qa_queries(questions: Iterable[str], tokenizer: PreTrainedTokenizerBase) -> list[str]:
    """Return each question as a prompt that ends where the model's answer starts.

    Uses the tokenizer's chat template (one user turn plus the generation prompt) and falls back
    to ``"Question: {question}\\nAnswer:"`` when the tokenizer has none.
    """
    questions = _strings(questions, "questions")
    if not _has_chat_template(tokenizer):
        return [_PLAIN_QA.format(question=question) for question in questions]
    return [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
        )
        for question in questions
    ]


def _prompt_ids(tokenizer: PreTrainedTokenizerBase, prompt: str) -> list[int]:
    """Token ids of a prompt; special tokens are added unless it already starts with BOS text
    (as a chat-templated prompt does), so BOS is never doubled."""
    bos = tokenizer.bos_token
    return tokenizer(prompt, add_special_tokens=not (bos and prompt.startswith(bos)))["input_ids"]


def _has_chat_template(tokenizer: PreTrainedTokenizerBase) -> bool:
    return getattr(tokenizer, "chat_template", None) is not None


def _strings(values: Iterable[str], name: str) -> list[str]:
    """Return ``values`` as a list, raising ``TypeError`` unless it holds strings only."""
    if isinstance(values, str):
        raise TypeError(f"{name} must be a list of strings, not a single string; wrap it: [{name}]")
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"{name} must be a list of strings, got {type(values).__name__}") from None
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(value).__name__}")
    return values
