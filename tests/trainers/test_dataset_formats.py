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
from waterdrum_hf.data.formats import ExampleEncoder

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
