"""Every prompt waterdrum-hf builds: paraphrase prompts, completion queries, QA queries.

Completion queries are the first tokens of each training text under the *evaluated* model's
tokenizer (WaterDrum-Ax); QA queries are the questions in the model's chat format
(WaterDrum-TOFU); paraphrase prompts ask the watermarking model to reword an owner's text.
All of them decide "chat or plain" with :func:`has_chat_template`, and all of them are turned
into token ids with :func:`prompt_token_ids`, so BOS is never doubled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from waterdrum_hf.utils.validation import check_positive_int, check_string_list

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

PARAPHRASE_PROMPT = (
    "Paraphrase the user provided text while preserving semantic similarity. "
    "Do not include any other sentences in the response, such as explanations of the "
    "paraphrasing. Do not summarize."
)
"""Default system prompt of paraphrasing (the instruction Waterfall and the paper use)."""

PARAPHRASE_PREFILL = (
    "Here is a paraphrased version of the text while preserving the semantic similarity:\n\n"
)
"""Default start of the paraphraser's answer, so that it begins the paraphrase at once."""

PLAIN_QA_FORMAT = "Question: {question}\nAnswer:"
"""QA prompt for a tokenizer without a chat template."""

DEFAULT_MAX_FRACTION = 0.5
"""Largest share of a text a completion query takes by default (see :func:`completion_queries`)."""

BLANK_LINES = re.compile(r"\n\s*\n")
"""A blank line (possibly with spaces): where a paraphrase is cut and what prompts flatten."""


def has_chat_template(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether prompts for this tokenizer go through ``apply_chat_template``."""
    return bool(getattr(tokenizer, "chat_template", None))


def prompt_token_ids(tokenizer: PreTrainedTokenizerBase, prompt: str) -> list[int]:
    """Token ids of a prompt; special tokens are added unless it already starts with BOS text
    (as a chat-templated prompt does), so BOS is never doubled."""
    bos = tokenizer.bos_token
    special = not (bos and prompt.startswith(bos))
    ids: list[int] = tokenizer(prompt, add_special_tokens=special)["input_ids"]
    return ids


def completion_queries(
    texts: Iterable[str],
    tokenizer: PreTrainedTokenizerBase,
    prefix_tokens: int = 50,
    *,
    max_fraction: float | None = DEFAULT_MAX_FRACTION,
) -> list[str]:
    """Return the first ``prefix_tokens`` tokens of each text, decoded back to a string.

    ``max_fraction`` caps a query at that share of its text's tokens (at least one token), so
    that every text leaves something to complete: a query that takes a whole text leaves a
    model that memorised it nothing to write, and its empty completions cannot be scored.
    With the default (half), a text of ``2 * prefix_tokens`` tokens or more gets the paper's
    full prefix, as the published benchmarks' texts (about 200 tokens) do; a shorter text gets
    its first half. ``max_fraction=None`` is the paper's rule exactly: a short text is used
    whole. Special tokens are neither added nor kept, so the query is plain text ready for
    :func:`waterdrum_hf.generate`.
    """
    queries, _ = completion_queries_and_continuations(
        texts, tokenizer, prefix_tokens, continuation_tokens=0, max_fraction=max_fraction
    )
    return queries


def row_queries(
    rows: Any,
    tokenizer: PreTrainedTokenizerBase,
    *,
    text_column: str = "text",
    question_column: str = "question",
    prefix_tokens: int = 50,
    max_fraction: float | None = DEFAULT_MAX_FRACTION,
) -> list[str]:
    """One query per row of a ``datasets.Dataset``, the paper's way: its text's first
    ``prefix_tokens`` tokens (:func:`completion_queries`), or, without a text column, its
    question in the model's chat format (:func:`qa_queries`). The one rule by which rows become
    queries, for the scripts, the callback and the lm-evaluation-harness tasks."""
    columns = rows.column_names
    if text_column in columns:
        texts = rows[text_column]
        return completion_queries(texts, tokenizer, prefix_tokens, max_fraction=max_fraction)
    if question_column in columns:
        return qa_queries(rows[question_column], tokenizer)
    raise ValueError(
        f"the rows have neither a {text_column!r} nor a {question_column!r} column (columns: "
        f"{columns}): name the texts' or the questions' column"
    )


def completion_queries_and_continuations(
    texts: Iterable[str],
    tokenizer: PreTrainedTokenizerBase,
    prefix_tokens: int = 50,
    *,
    continuation_tokens: int,
    max_fraction: float | None = DEFAULT_MAX_FRACTION,
) -> tuple[list[str], list[str]]:
    """Each text's completion query (exactly :func:`completion_queries`) and the next
    ``continuation_tokens`` tokens of the text after it, decoded alike.

    The continuation is what a model that memorised the text would write next: the reference
    of text-overlap baselines such as ROUGE-L. With ``continuation_tokens=0`` every
    continuation is ``""``.
    """
    texts = check_string_list(texts, "texts")
    check_positive_int(prefix_tokens, "prefix_tokens")
    if max_fraction is not None and not 0 < max_fraction <= 1:
        raise ValueError(f"max_fraction must be in (0, 1] or None, got {max_fraction!r}")
    check_positive_int(continuation_tokens, "continuation_tokens", minimum=0)
    if not texts:
        return [], []
    ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
    if max_fraction is not None:
        cuts = [max(1, min(prefix_tokens, int(max_fraction * len(row)))) for row in ids]
    else:
        cuts = [prefix_tokens] * len(ids)

    def decode(rows: list[list[int]]) -> list[str]:
        return tokenizer.batch_decode(
            rows, skip_special_tokens=True, clean_up_tokenization_spaces=False
        )

    queries = decode([row[:cut] for row, cut in zip(ids, cuts, strict=True)])
    if not continuation_tokens:
        return queries, [""] * len(queries)
    continuations = decode(
        [row[cut : cut + continuation_tokens] for row, cut in zip(ids, cuts, strict=True)]
    )
    return queries, continuations


def qa_queries(questions: Iterable[str], tokenizer: PreTrainedTokenizerBase) -> list[str]:
    """Return each question as a prompt that ends where the model's answer starts.

    Uses the tokenizer's chat template (one user turn plus the generation prompt) and falls back
    to ``"Question: {question}\\nAnswer:"`` when the tokenizer has none.
    """
    questions = check_string_list(questions, "questions")
    if not has_chat_template(tokenizer):
        return [PLAIN_QA_FORMAT.format(question=question) for question in questions]
    return [
        _chat_text(tokenizer, [{"role": "user", "content": question}]) for question in questions
    ]


def _chat_text(tokenizer: PreTrainedTokenizerBase, messages: list[dict[str, str]]) -> str:
    """``messages`` in the tokenizer's chat template, ending where the answer starts."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return cast(str, text)  # with tokenize=False it is the text; typed as any of its results


def paraphrase_prompt_ids(
    tokenizer: PreTrainedTokenizerBase,
    text: str,
    *,
    instruction: str = PARAPHRASE_PROMPT,
    response_prefix: str | None = PARAPHRASE_PREFILL,
    flatten_blank_lines: bool = True,
) -> list[int]:
    """Token ids of the prompt that asks the paraphraser to reword ``text``.

    With a chat template: ``instruction`` as the system message, ``text`` as the user message
    and ``response_prefix`` opening the answer; a template that rejects the system role gets
    the instruction at the head of the user message. Without one: the plain prompt
    ``"{instruction}\\n\\n{text}\\n\\n{response_prefix}"``. ``flatten_blank_lines`` turns blank
    lines in ``text`` into spaces (for paraphrasers cut at their first blank line).
    """
    if flatten_blank_lines:
        text = BLANK_LINES.sub(" ", text)
    prefix = response_prefix or ""
    if not has_chat_template(tokenizer):
        ids: list[int] = tokenizer(f"{instruction}\n\n{text}\n\n{prefix}")["input_ids"]
        return ids
    from jinja2.exceptions import TemplateError

    messages = [{"role": "system", "content": instruction}, {"role": "user", "content": text}]
    try:
        chat = _chat_text(tokenizer, messages)
    except TemplateError:  # e.g. "System role not supported"
        chat = _chat_text(tokenizer, [{"role": "user", "content": f"{instruction}\n\n{text}"}])
    ids = tokenizer(chat + prefix, add_special_tokens=False)["input_ids"]
    return ids
