"""Training examples in TRL's standard dataset formats, tokenised with only the completion labelled.

An example's format is decided by its columns, in this order:

- ``"qa"``: ``question_column`` (and ``answer_column``), e.g. TOFU. The question becomes a prompt
  through :func:`waterdrum_hf.qa_queries` (the chat template, or ``Question: ... Answer:``).
- ``"prompt_completion"``: ``prompt`` and ``completion``. Strings are joined as they are;
  lists of messages (conversational) are rendered with the tokenizer's chat template, the
  prompt with the generation prompt.
- ``"messages"``: a conversation; every message before the last is the prompt, the last one
  (the assistant's) the completion.
- ``"text"``: ``text_column`` (language modelling), trained whole.

Only completion tokens carry labels (as TRL's ``completion_only_loss``): the prompt, padding and
a leading BOS are :data:`IGNORE_INDEX`. Where the prompt's tokens are not a prefix of the whole
example's (a chat template that renders them differently, or tokens merging across the
boundary), the completion starts where the two diverge, as in TRL's ``SFTTrainer``.
Non-conversational completions end with EOS.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal, cast

from transformers import PreTrainedTokenizerBase

from waterdrum_hf.generation.prompting import has_chat_template, prompt_token_ids, qa_queries
from waterdrum_hf.utils.torch_plumbing import IGNORE_INDEX
from waterdrum_hf.utils.validation import check_encodable

Format = Literal["qa", "prompt_completion", "messages", "text"]

PROMPT, COMPLETION, MESSAGES = "prompt", "completion", "messages"
"""TRL's column names of the prompt-completion and conversational formats."""


def example_format(
    columns: Collection[str], *, text_column: str = "text", question_column: str = "question"
) -> Format | None:
    """The format of an example with these columns (see the module), or ``None``."""
    if question_column in columns:
        return "qa"
    if PROMPT in columns and COMPLETION in columns:
        return "prompt_completion"
    if MESSAGES in columns:
        return "messages"
    if text_column in columns:
        return "text"
    return None


def has_prompt(columns: Collection[str], *, question_column: str = "question") -> bool:
    """Whether examples with these columns have a prompt that another answer can follow."""
    return example_format(columns, question_column=question_column) in (
        "qa",
        "prompt_completion",
        "messages",
    )


class ExampleEncoder:
    """Token ids and labels of one example in any format of the module.

    ``answer`` replaces the example's completion (a refusal for the IDK methods): after the
    question, after the prompt, or as the assistant's message after the conversation's prompt.
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        *,
        text_column: str = "text",
        question_column: str = "question",
        answer_column: str = "answer",
    ) -> None:
        self.tokenizer = tokenizer
        self.text_column = text_column
        self.question_column = question_column
        self.answer_column = answer_column

    def __call__(
        self, example: Mapping[str, Any], answer: str | None = None
    ) -> tuple[list[int], list[int]]:
        kind = example_format(
            example, text_column=self.text_column, question_column=self.question_column
        )
        if kind is None or (answer is not None and kind == "text"):
            raise ValueError(
                unknown_format(
                    example,
                    text_column=self.text_column,
                    question_column=self.question_column,
                    answer_column=self.answer_column,
                    refusal=answer is not None,
                )
            )
        if kind == "qa":
            return self._qa(example, answer)
        if kind == "text":
            return self._text(example[self.text_column])
        completion: Any
        if kind == "messages":
            prompt, completion = split_conversation(example[MESSAGES])
        else:
            prompt, completion = example[PROMPT], example[COMPLETION]
        if answer is not None:
            completion = [{"role": "assistant", "content": answer}] if _is_chat(prompt) else answer
        return self._prompt_completion(prompt, completion)

    def _qa(self, example: Mapping[str, Any], answer: str | None) -> tuple[list[int], list[int]]:
        """The question as a QA prompt (masked), then the answer and EOS (labelled)."""
        question = example[self.question_column]
        answer = example.get(self.answer_column) if answer is None else answer
        check_str(question, self.question_column)
        check_str(answer, self.answer_column)
        prompt_ids = prompt_token_ids(self.tokenizer, qa_queries([question], self.tokenizer)[0])
        if not has_chat_template(self.tokenizer):
            answer = f" {answer}"  # after "Answer:"
        answer_ids = self._with_eos(self.tokenizer(answer, add_special_tokens=False)["input_ids"])
        return prompt_ids + answer_ids, [IGNORE_INDEX] * len(prompt_ids) + answer_ids

    def _text(self, text: Any) -> tuple[list[int], list[int]]:
        """The whole text and EOS, all labelled but a leading BOS."""
        check_str(text, self.text_column)
        ids = self._with_eos(self.tokenizer(text)["input_ids"])
        labels = list(ids)
        if self.tokenizer.bos_token_id is not None and ids[:1] == [self.tokenizer.bos_token_id]:
            labels[0] = IGNORE_INDEX
        return ids, labels

    def _prompt_completion(self, prompt: Any, completion: Any) -> tuple[list[int], list[int]]:
        """Prompt and completion, strings or lists of messages, labelled after the prompt."""
        if _is_chat(prompt) and _is_chat(completion):
            prompt_text = self._render(prompt, add_generation_prompt=True)
            full_ids = prompt_token_ids(self.tokenizer, self._render([*prompt, *completion]))
        elif isinstance(prompt, str) and isinstance(completion, str):
            check_str(prompt, PROMPT)
            check_str(completion, COMPLETION)
            prompt_text = prompt
            full_ids = self._with_eos(prompt_token_ids(self.tokenizer, prompt + completion))
        else:
            raise TypeError(
                "'prompt' and 'completion' must both be strings or both be lists of messages "
                f"({{'role': ..., 'content': ...}}), got {type(prompt).__name__} and "
                f"{type(completion).__name__}"
            )
        prompt_ids = prompt_token_ids(self.tokenizer, prompt_text)
        start = _common_prefix_length(prompt_ids, full_ids)
        return full_ids, [IGNORE_INDEX] * start + full_ids[start:]

    def _render(
        self, messages: list[Mapping[str, Any]], add_generation_prompt: bool = False
    ) -> str:
        if not has_chat_template(self.tokenizer):
            raise ValueError(
                "conversational examples (lists of messages) are rendered with the tokenizer's "
                "chat template, and this tokenizer has none: set tokenizer.chat_template, or give "
                "'prompt' and 'completion' as strings"
            )
        for message in messages:
            check_str(message.get("content"), "content of a message")
        text = self.tokenizer.apply_chat_template(
            messages,  # type: ignore[arg-type]  # typed dict[str, str]; any message mapping works
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
        )
        return cast(str, text)  # with tokenize=False it is the text; typed as any of its results

    def _with_eos(self, ids: list[int]) -> list[int]:
        eos = self.tokenizer.eos_token_id
        return ids if eos is None or ids[-1:] == [eos] else [*ids, eos]


def unknown_format(
    columns: Collection[str],
    *,
    text_column: str = "text",
    question_column: str = "question",
    answer_column: str = "answer",
    refusal: bool = False,
) -> str:
    """The error message for an example whose format is not recognised (``refusal``: that
    cannot take a refusal answer, having no prompt)."""
    if refusal:
        return (
            f"refusal answers follow a prompt, but the example has no {question_column!r}, "
            f"'prompt' or 'messages' column (columns: {sorted(columns)}); give forget rows with "
            "a prompt (QA, prompt-completion or conversational)"
        )
    return (
        f"the example's format is not recognised: its columns are {sorted(columns)}. Give "
        f"{text_column!r} (language modelling), 'prompt' and 'completion', 'messages' "
        f"(conversational), or {question_column!r} and {answer_column!r} (QA); or set "
        "text_column= (or question_column= and answer_column=) to your columns"
    )


def split_conversation(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """``(prompt, completion)`` of a conversation: the last message, the assistant's, is the
    completion; the messages before it the prompt."""
    if not _is_chat(messages) or not messages:
        raise TypeError(
            "'messages' must be a non-empty list of messages ({'role': ..., 'content': ...})"
        )
    if messages[-1].get("role") != "assistant":
        raise ValueError(
            "the last message of a conversation is the completion trained on and must be the "
            f"assistant's, got role {messages[-1].get('role')!r}"
        )
    return list(messages[:-1]), [messages[-1]]


def check_str(value: Any, column: str) -> None:
    """A ``TypeError`` unless ``value`` is a string the tokenizer can encode."""
    if not isinstance(value, str):
        raise TypeError(f"column {column!r} must hold strings, got {type(value).__name__}")
    check_encodable(value, f"column {column!r}")


def _is_chat(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(m, Mapping) for m in value)


def _common_prefix_length(first: Sequence[int], second: Sequence[int]) -> int:
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return length
