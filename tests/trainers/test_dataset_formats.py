"""One dataset in TRL's standard formats, forget and retain rows marked by a boolean column.

Labels of prompt-completion and conversational rows are compared with TRL's ``SFTTrainer``
(``completion_only_loss``): the same tokens, and the same ones trained on.
"""

from __future__ import annotations

import copy

import pytest
from datasets import Dataset, Value
from trainer_setup import FORGET_QA, RETAIN_QA, full_batch, make_config, small_model
from trl import SFTConfig, SFTTrainer

from waterdrum_hf import trainers
from waterdrum_hf.data import IGNORE_INDEX
from waterdrum_hf.data.formats import (
    ExampleEncoder,
    example_format,
    has_prompt,
    split_conversation,
    unknown_format,
)

PROMPT_COMPLETION = {
    "prompt": [f"Question: {row['question']}\nAnswer:" for row in FORGET_QA + RETAIN_QA],
    "completion": [f" {row['answer']}" for row in FORGET_QA + RETAIN_QA],
}
FORGET_MARKS = [True] * len(FORGET_QA) + [False] * len(RETAIN_QA)


def chat(rows):
    return {
        "prompt": [[{"role": "user", "content": row["question"]}] for row in rows],
        "completion": [[{"role": "assistant", "content": row["answer"]}] for row in rows],
    }


def one_dataset(columns: dict, marks=FORGET_MARKS) -> Dataset:
    return Dataset.from_dict({**columns, "forget": marks})


def trainer_on(method, tokenizer, tmp_path, **data):
    trainer_class, _ = trainers.get(method)
    return trainer_class(
        model=small_model(tokenizer),
        args=make_config(method, tmp_path),
        processing_class=tokenizer,
        **data,
    )


def trl_rows(dataset: Dataset, tokenizer, tmp_path) -> list[tuple[list[int], list[int]]]:
    """TRL's tokens and completion-only labels of each row (``SFTTrainer``'s own preparation)."""
    sft = SFTTrainer(
        model=small_model(tokenizer),
        args=SFTConfig(
            output_dir=str(tmp_path / "sft"),
            report_to="none",
            use_cpu=True,
            bf16=False,
            completion_only_loss=True,
            dataset_num_proc=None,
        ),
        train_dataset=dataset,
        processing_class=copy.deepcopy(tokenizer),
    )
    return [(row["input_ids"], row["labels"]) for row in sft.train_dataset]


@pytest.mark.parametrize("conversational", [False, True], ids=["strings", "messages"])
def test_prompt_completion_tokens_and_labels_equal_trls(conversational, tokenizer, tmp_path):
    columns = chat(FORGET_QA + RETAIN_QA) if conversational else PROMPT_COMPLETION
    dataset = Dataset.from_dict(columns)
    encode = ExampleEncoder(tokenizer)
    ours = [encode(row) for row in dataset]
    assert ours == trl_rows(dataset, tokenizer, tmp_path)
    for ids, labels in ours:  # a real prompt, masked; a real completion, labelled
        assert labels[0] == IGNORE_INDEX and labels[-1] == ids[-1] == tokenizer.eos_token_id


def test_a_conversation_trains_its_last_message_as_a_completion(tokenizer):
    rows = chat(FORGET_QA[:1])
    messages = [*rows["prompt"][0], *rows["completion"][0]]
    encode = ExampleEncoder(tokenizer)
    as_pair = encode({"prompt": rows["prompt"][0], "completion": rows["completion"][0]})
    assert encode({"messages": messages}) == as_pair
    answer = FORGET_QA[0]["answer"]
    labelled = [t for t in as_pair[1] if t != IGNORE_INDEX]
    assert tokenizer.decode(labelled, skip_special_tokens=True) == answer


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        ("text", {"text": [f"{r['question']} {r['answer']}" for r in FORGET_QA + RETAIN_QA]}),
        ("prompt-completion", PROMPT_COMPLETION),
        ("conversational", chat(FORGET_QA + RETAIN_QA)),
        (
            "messages",
            {
                "messages": [
                    p + c for p, c in zip(*chat(FORGET_QA + RETAIN_QA).values(), strict=True)
                ]
            },
        ),
        (
            "tofu",
            {
                "question": [r["question"] for r in FORGET_QA + RETAIN_QA],
                "answer": [r["answer"] for r in FORGET_QA + RETAIN_QA],
            },
        ),
    ],
)
def test_one_dataset_is_split_on_its_forget_column(name, columns, tokenizer, tmp_path):
    dataset = one_dataset(columns)
    trainer = trainer_on("graddiff", tokenizer, tmp_path, train_dataset=dataset)
    pairs = trainer.train_dataset
    assert trainer.data_rows == (len(FORGET_QA), len(RETAIN_QA))
    assert len(pairs) == len(FORGET_QA)  # one epoch walks the forget rows
    assert list(pairs.forget) == list(dataset.select(range(len(FORGET_QA))))
    assert list(pairs.retain) == list(dataset.select(range(len(FORGET_QA), len(dataset))))
    encode = ExampleEncoder(tokenizer)
    batch = full_batch(trainer)
    for i in range(len(pairs)):
        for side in ("forget", "retain"):
            ids, labels = encode(pairs[i][side])
            assert _strip(batch[side]["labels"][i].tolist()) == labels
            assert batch[side]["input_ids"][i, : len(ids)].tolist() == ids
            assert any(label != IGNORE_INDEX for label in labels)


def _strip(labels: list) -> list:
    """Labels without trailing padding (``IGNORE_INDEX``)."""
    end = len(labels)
    while end and labels[end - 1] == IGNORE_INDEX:
        end -= 1
    return labels[:end]


def test_refusals_follow_the_forget_prompt(tokenizer, tmp_path):
    dataset = one_dataset(PROMPT_COMPLETION)
    trainer = trainer_on("idknll", tokenizer, tmp_path, train_dataset=dataset)
    batch = full_batch(trainer)
    refusals = set(trainers.REFUSAL_ANSWERS)
    alternative = batch["alternative"]
    for ids, labels in zip(alternative["input_ids"], alternative["labels"], strict=True):
        text = tokenizer.decode(ids[labels != IGNORE_INDEX], skip_special_tokens=True)
        assert text in refusals
        assert tokenizer.decode(ids, skip_special_tokens=True).startswith("Question: ")


def test_a_method_without_retain_term_needs_no_retain_rows(tokenizer, tmp_path):
    dataset = one_dataset({"text": ["a forget text", "another one"]}, marks=[True, True])
    trainer = trainer_on("gradascent", tokenizer, tmp_path, train_dataset=dataset)
    assert trainer.data_rows == (2, 0)


def test_an_eval_dataset_with_a_forget_column_is_paired(tokenizer, tmp_path):
    dataset = one_dataset(PROMPT_COMPLETION)
    trainer = trainer_on(
        "kl", tokenizer, tmp_path, train_dataset=dataset, eval_dataset={"heldout": dataset}
    )
    metrics = trainer.evaluate(trainer.eval_dataset["heldout"])
    assert {"eval_loss/forget", "eval_loss/retain", "eval_loss/retain_kl"} <= set(metrics)
    assert metrics["eval_loss/retain_kl"] == pytest.approx(0.0, abs=1e-6)  # the reference


@pytest.mark.parametrize(
    ("method", "dataset", "error", "message"),
    [
        (
            "kl",
            one_dataset(PROMPT_COMPLETION, marks=[False] * 8),
            ValueError,
            r"^train_dataset has no forget rows: its 'forget' column is False in all 8 rows",
        ),
        (
            "kl",
            one_dataset(PROMPT_COMPLETION, marks=[True] * 8),
            ValueError,
            r"^train_dataset has no retain rows \('forget' is True in all 8 rows\), but this "
            "method trains a retain term",
        ),
        (
            "npo",
            Dataset.from_dict({"body": ["x", "y"], "forget": [True, False]}),
            ValueError,
            r"^forget rows: the example's format is not recognised: its columns are "
            r"\['body', 'forget'\]",
        ),
        (
            "npo",
            Dataset.from_dict({**PROMPT_COMPLETION, "forget": [1, 1, 1, 1, 0, 0, 0, 0]}),
            ValueError,
            r"^column 'forget' must be boolean \(True: forget row, False: retain row\), but its "
            "type is Value\\('int64'\\)",
        ),
        (
            "npo",
            [{"text": "a", "forget": "yes"}, {"text": "b", "forget": False}],
            ValueError,
            r"^column 'forget' must be boolean .*got 'yes' \(str\)",
        ),
        (
            "npo",
            Dataset.from_dict(PROMPT_COMPLETION),
            ValueError,
            r"^train_dataset has no 'forget' column \(its columns: \['completion', 'prompt'\]\)",
        ),
        (
            "npo",
            Dataset.from_dict({**PROMPT_COMPLETION, "forget": FORGET_MARKS}).to_iterable_dataset(),
            TypeError,
            "not streamed",
        ),
    ],
    ids=[
        "no-forget-rows",
        "no-retain-rows",
        "unknown-format",
        "int-column",
        "str-mark",
        "no-forget-column",
        "iterable",
    ],  # fmt: skip
)
def test_bad_one_dataset_raises_one_clear_line(
    method, dataset, error, message, tokenizer, tmp_path
):
    with pytest.raises(error, match=message) as raised:
        trainer_on(method, tokenizer, tmp_path, train_dataset=dataset)
    assert "\n" not in str(raised.value)


def test_the_forget_column_is_a_setting(tokenizer, tmp_path):
    dataset = Dataset.from_dict({**PROMPT_COMPLETION, "unlearn": FORGET_MARKS})
    dataset = dataset.cast_column("unlearn", Value("bool"))
    trainer = trainers.NPOTrainer(
        model=small_model(tokenizer),
        args=make_config("npo", tmp_path, forget_column="unlearn"),
        processing_class=tokenizer,
        train_dataset=dataset,
    )
    assert trainer.data_rows == (4, 4)


def test_conversations_need_a_chat_template(tokenizer):
    plain = copy.deepcopy(tokenizer)
    plain.chat_template = None
    with pytest.raises(ValueError, match="chat template"):
        ExampleEncoder(plain)(
            {"messages": chat(FORGET_QA[:1])["prompt"][0] + chat(FORGET_QA[:1])["completion"][0]}
        )
    with pytest.raises(ValueError, match="must be the assistant's"):
        ExampleEncoder(tokenizer)({"messages": chat(FORGET_QA[:1])["prompt"][0]})
    with pytest.raises(TypeError, match="both be strings or both be lists"):
        ExampleEncoder(tokenizer)(
            {"prompt": "Q", "completion": [{"role": "assistant", "content": "A"}]}
        )


def test_the_columns_decide_the_format_in_the_documented_order():
    """QA before prompt-completion before messages before text; a prompt needs its completion;
    the text and question columns are settings ("text" and "question" by default)."""
    assert example_format(["question", "answer", "prompt", "completion", "text"]) == "qa"
    assert example_format(["prompt", "completion", "messages", "text"]) == "prompt_completion"
    assert example_format(["messages", "text"]) == "messages"
    assert example_format(["text"]) == "text"
    assert example_format(["prompt", "text"]) == "text"
    assert example_format(["completion"]) is None
    assert example_format(["body", "q"]) is None
    assert example_format(["body"], text_column="body") == "text"
    assert example_format(["q", "text"], question_column="q") == "qa"


def test_has_prompt_is_true_for_the_formats_with_a_prompt():
    """QA, prompt-completion and conversations have a prompt; text and unknown columns do not;
    ``question_column`` names the QA column."""
    assert has_prompt(["question", "answer"])
    assert has_prompt(["prompt", "completion"])
    assert has_prompt(["messages"])
    assert not has_prompt(["text"])
    assert not has_prompt(["prompt"])
    assert has_prompt(["q", "a"], question_column="q")
    assert not has_prompt(["question", "answer"], question_column="q")


SYSTEM = {"role": "system", "content": "Be brief."}
USER = {"role": "user", "content": "Where?"}
ASSISTANT = {"role": "assistant", "content": "Paris"}


def test_a_conversation_splits_before_its_last_message():
    """Every message before the last is the prompt, the last one the completion; a tuple
    gives lists too."""
    assert split_conversation([SYSTEM, USER, ASSISTANT]) == ([SYSTEM, USER], [ASSISTANT])
    assert split_conversation((USER, ASSISTANT)) == ([USER], [ASSISTANT])


@pytest.mark.parametrize("messages", [[], ["hi", "there"], "text"], ids=["empty", "str", "bare"])
def test_a_conversation_must_be_a_non_empty_list_of_messages(messages):
    """An empty list, a list of strings or a string is not a conversation: a TypeError."""
    with pytest.raises(TypeError, match="must be a non-empty list of messages"):
        split_conversation(messages)


def test_the_unknown_format_messages_name_the_columns():
    """The whole message for unrecognised columns, and the one for a refusal without a
    prompt, with the default column names and the example's columns sorted."""
    assert unknown_format({"forget", "body"}) == (
        "the example's format is not recognised: its columns are ['body', 'forget']. Give "
        "'text' (language modelling), 'prompt' and 'completion', 'messages' (conversational), "
        "or 'question' and 'answer' (QA); or set text_column= (or question_column= and "
        "answer_column=) to your columns"
    )
    assert unknown_format({"text", "forget"}, refusal=True) == (
        "refusal answers follow a prompt, but the example has no 'question', 'prompt' or "
        "'messages' column (columns: ['forget', 'text']); give forget rows with a prompt (QA, "
        "prompt-completion or conversational)"
    )
    custom = unknown_format(["x"], text_column="body", question_column="q", answer_column="a")
    assert "Give 'body' (language modelling)" in custom and "or 'q' and 'a' (QA)" in custom


def test_an_unknown_example_and_a_refusal_after_a_text_raise(tokenizer):
    """Columns of no format, and a refusal answer for a text (which has no prompt), are a
    ValueError with :func:`unknown_format`'s message."""
    encode = ExampleEncoder(tokenizer)
    with pytest.raises(ValueError) as raised:
        encode({"body": "x"})
    assert str(raised.value) == unknown_format(["body"])
    with pytest.raises(ValueError) as raised:
        encode({"text": "x"}, answer="I don't know.")
    assert str(raised.value) == unknown_format(["text"], refusal=True)


def _ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_a_text_is_labelled_whole_but_its_bos(tokenizer):
    """BOS, the text and EOS; every label but BOS's is the token."""
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    body = _ids(tokenizer, "hello world")
    ids, labels = ExampleEncoder(tokenizer)({"text": "hello world"})
    assert ids == [bos, *body, eos]
    assert labels == [IGNORE_INDEX, *body, eos]


def test_a_text_column_is_a_setting(tokenizer):
    """``text_column`` names the column read as text."""
    expected = ExampleEncoder(tokenizer)({"text": "hello world"})
    assert ExampleEncoder(tokenizer, text_column="body")({"body": "hello world"}) == expected


def test_a_text_without_bos_is_labelled_from_its_first_token(tokenizer):
    """A tokenizer that has a BOS token but does not add it: nothing is masked."""
    no_bos = copy.deepcopy(tokenizer)
    no_bos.add_bos_token = False
    assert no_bos.bos_token_id is not None
    ids, labels = ExampleEncoder(no_bos)({"text": "hello world"})
    assert ids == [*_ids(tokenizer, "hello world"), tokenizer.eos_token_id]
    assert labels == ids


def test_eos_is_added_once_and_only_when_there_is_one(tokenizer):
    """A text that ends with EOS keeps its one EOS; a tokenizer without EOS adds none."""
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    ids, labels = ExampleEncoder(tokenizer)({"text": f"hello world{tokenizer.eos_token}"})
    assert ids == [bos, *_ids(tokenizer, "hello world"), eos]
    no_eos = copy.deepcopy(tokenizer)
    no_eos.eos_token = None
    ids, labels = ExampleEncoder(no_eos)({"text": "hello world"})
    assert ids == [bos, *_ids(tokenizer, "hello world")]
    assert labels == [IGNORE_INDEX, *_ids(tokenizer, "hello world")]


def test_a_qa_example_with_a_chat_template(tokenizer):
    """The question as one user turn with the generation prompt (masked), then the answer's
    own tokens, no space nor BOS before them, and EOS; ``answer`` replaces the answer."""
    prompt = _ids(tokenizer, "<s><|user|>Where?</s><|assistant|>")
    encode = ExampleEncoder(tokenizer)
    for example, kwargs, answer in [
        ({"question": "Where?", "answer": "Paris"}, {}, "Paris"),
        ({"question": "Where?", "answer": "Paris"}, {"answer": "I don't know."}, "I don't know."),
        ({"question": "Where?"}, {"answer": "I don't know."}, "I don't know."),
    ]:
        completion = [*_ids(tokenizer, answer), tokenizer.eos_token_id]
        assert encode(example, **kwargs) == (
            prompt + completion,
            [IGNORE_INDEX] * len(prompt) + completion,
        )


def test_a_qa_example_without_a_chat_template(tokenizer):
    """Without a chat template: BOS and ``Question: ...\nAnswer:`` (masked), then a space,
    the answer and EOS."""
    plain = copy.deepcopy(tokenizer)
    plain.chat_template = None
    prompt = tokenizer("Question: Where?\nAnswer:")["input_ids"]
    assert prompt[0] == tokenizer.bos_token_id
    completion = [*_ids(tokenizer, " Paris"), tokenizer.eos_token_id]
    assert completion[:-1] != _ids(tokenizer, "Paris")
    assert ExampleEncoder(plain)({"question": "Where?", "answer": "Paris"}) == (
        prompt + completion,
        [IGNORE_INDEX] * len(prompt) + completion,
    )


def test_qa_columns_are_settings(tokenizer):
    """``question_column`` and ``answer_column`` name the QA columns."""
    expected = ExampleEncoder(tokenizer)({"question": "Where?", "answer": "Paris"})
    encode = ExampleEncoder(tokenizer, question_column="q", answer_column="a")
    assert encode({"q": "Where?", "a": "Paris"}) == expected


def test_a_conversation_is_rendered_with_the_chat_template(tokenizer):
    """The whole conversation in the template; the prompt up to the generation prompt masked,
    the last message and its EOS labelled."""
    whole = _ids(tokenizer, "<s><|system|>Be brief.</s><|user|>Where?</s><|assistant|>Paris</s>")
    prompt = _ids(tokenizer, "<s><|system|>Be brief.</s><|user|>Where?</s><|assistant|>")
    assert whole[: len(prompt)] == prompt
    ids, labels = ExampleEncoder(tokenizer)({"messages": [SYSTEM, USER, ASSISTANT]})
    assert ids == whole
    assert labels == [IGNORE_INDEX] * len(prompt) + whole[len(prompt) :]


@pytest.mark.parametrize(
    "example",
    [
        {"messages": [SYSTEM, USER, ASSISTANT]},
        {"prompt": [SYSTEM, USER], "completion": [ASSISTANT]},
    ],
    ids=["messages", "prompt-completion"],
)
def test_a_refusal_is_the_assistants_message_after_a_conversation(example, tokenizer):
    """``answer`` replaces the last message by an assistant's message with that content."""
    refused = [SYSTEM, USER, {"role": "assistant", "content": "I don't know."}]
    encode = ExampleEncoder(tokenizer)
    assert encode(example, answer="I don't know.") == encode({"messages": refused})


def test_a_refusal_replaces_a_string_completion(tokenizer):
    """``answer`` replaces a string completion as it is."""
    encode = ExampleEncoder(tokenizer)
    assert encode({"prompt": "Q:", "completion": " A"}, answer=" No") == encode(
        {"prompt": "Q:", "completion": " No"}
    )


def test_the_completion_starts_where_the_prompt_tokens_diverge(tokenizer):
    """A prompt whose last token merges with the completion's first: the labels start at the
    first token that differs from the prompt's own."""
    assert tokenizer.tokenize("hel") == ["he", "l"]
    assert tokenizer.tokenize("hello") == ["he", "llo"]
    whole = [*tokenizer("hello")["input_ids"], tokenizer.eos_token_id]
    ids, labels = ExampleEncoder(tokenizer)({"prompt": "hel", "completion": "lo"})
    assert ids == whole
    assert labels == [IGNORE_INDEX, IGNORE_INDEX, *whole[2:]]


@pytest.mark.parametrize(
    ("example", "error", "message"),
    [
        ({"q": 3, "a": "Paris"}, TypeError, "column 'q' must hold strings, got int"),
        ({"q": "Where?"}, TypeError, "column 'a' must hold strings, got NoneType"),
        ({"body": None}, TypeError, "column 'body' must hold strings, got NoneType"),
        ({"body": "a\ud800"}, ValueError, "`column 'body'` holds a lone surrogate at character 1"),
        (
            {"prompt": "\ud800", "completion": "A"},
            ValueError,
            "`column 'prompt'` holds a lone surrogate at character 0",
        ),
        (
            {"prompt": "Q", "completion": "\ud800"},
            ValueError,
            "`column 'completion'` holds a lone surrogate at character 0",
        ),
        (
            {"messages": [{"role": "user", "content": 5}, ASSISTANT]},
            TypeError,
            "column 'content of a message' must hold strings, got int",
        ),
        (
            {"prompt": ["Q"], "completion": ["A"]},
            TypeError,
            "must both be strings or both be lists of messages",
        ),
    ],
    ids=[
        "question",
        "no-answer",
        "text",
        "text-surrogate",
        "prompt-surrogate",
        "completion-surrogate",
        "content",
        "lists-of-strings",
    ],  # fmt: skip
)
def test_a_bad_value_names_its_column(example, error, message, tokenizer):
    """A value that is not a string, or one UTF-8 cannot encode, raises naming its column."""
    encode = ExampleEncoder(tokenizer, text_column="body", question_column="q", answer_column="a")
    with pytest.raises(error) as raised:
        encode(example)
    assert message in str(raised.value)
