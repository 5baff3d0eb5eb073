"""Forget/retain pairing and the collator: prompts and padding never trained."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from waterdrum_hf.data import (
    IGNORE_INDEX,
    ForgetRetainCollator,
    ForgetRetainDataset,
)
from waterdrum_hf.utils.torch_plumbing import causal_lm_batch


@pytest.fixture(scope="module")
def word_tokenizer() -> PreTrainedTokenizerFast:
    """A whitespace word-level tokenizer: one token per word, easy to count by hand."""
    words = "<pad> <s> </s> <|user|> <|assistant|> Question: Answer: what is x ? y . a b c d e f g"
    vocab = {w: i for i, w in enumerate(["[UNK]", *words.split()])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="[UNK]",
        add_bos_token=True,
    )


def test_causal_lm_batch_right_pads_and_never_trains_padding():
    pad = 0  # the pad id may be a real token (EOS): only the mask decides what is trained
    batch = causal_lm_batch(
        [
            {"input_ids": [5, 6, 7]},
            {"input_ids": [8, 0], "labels": [IGNORE_INDEX, 0]},
            {"input_ids": [0, 0, 9], "attention_mask": [0, 0, 1]},  # padded before, on the left
        ],
        pad,
    )
    assert batch["input_ids"].tolist() == [[5, 6, 7], [8, 0, 0], [9, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0], [1, 0, 0]]
    assert batch["labels"].tolist() == [
        [5, 6, 7],
        [IGNORE_INDEX, 0, IGNORE_INDEX],
        [9, IGNORE_INDEX, IGNORE_INDEX],
    ]
    assert all(t.dtype == torch.long and t.device.type == "cpu" for t in batch.values())
    with pytest.raises(ValueError, match="row 0 has 2 input_ids but 1 labels"):
        causal_lm_batch([{"input_ids": [1, 2], "labels": [1]}], pad)


def test_collator_pads_with_eos_when_the_tokenizer_has_no_pad_token(word_tokenizer):
    tokenizer = copy.deepcopy(word_tokenizer)
    tokenizer.pad_token = None
    collate = ForgetRetainCollator(tokenizer)
    assert collate.pad_id == tokenizer.eos_token_id
    eos = tokenizer.eos_token_id
    batch = collate(
        [
            {"forget": {"text": "a"}, "retain": {"text": "c"}},
            {"forget": {"text": "a b"}, "retain": {"text": "c"}},
        ]
    )
    short = batch["forget"]  # row 0: <s> a </s> and one EOS of padding
    assert short["input_ids"][0, -2:].tolist() == [eos, eos]
    assert short["labels"][0, -2:].tolist() == [eos, IGNORE_INDEX]  # the real EOS is trained
    tokenizer.eos_token = None
    with pytest.raises(ValueError, match="neither a pad token nor an EOS token"):
        ForgetRetainCollator(tokenizer)


def test_pairs_walk_the_anchor_and_spread_partners():
    forget = [{"text": f"f{i}"} for i in range(3)]
    retain = [{"text": f"r{i}"} for i in range(7)]
    pairs = ForgetRetainDataset(forget, retain, seed=1)
    assert len(pairs) == 3
    assert [p["forget"]["text"] for p in pairs] == ["f0", "f1", "f2"]
    first = [p["retain"]["text"] for p in pairs]
    assert len(set(first)) == 3  # drawn without replacement
    assert first == [p["retain"]["text"] for p in ForgetRetainDataset(forget, retain, seed=1)]
    epochs = set()
    for epoch in range(5):
        pairs.set_epoch(epoch)
        epochs.add(tuple(p["retain"]["text"] for p in pairs))
    assert len(epochs) > 1

    by_retain = ForgetRetainDataset(forget, retain, anchor="retain", seed=0)
    assert len(by_retain) == 7
    assert [p["retain"]["text"] for p in by_retain] == [f"r{i}" for i in range(7)]
    assert Counter(p["forget"]["text"] for p in by_retain).most_common(1)[0][1] <= 3  # cycled


def test_pairing_rejects_bad_arguments():
    one = [{"text": "a"}]
    with pytest.raises(ValueError, match="anchor"):
        ForgetRetainDataset(one, one, anchor="both")
    with pytest.raises(ValueError, match="retain is empty"):
        ForgetRetainDataset(one, [])
    with pytest.raises(TypeError, match="alternative_answers"):
        ForgetRetainDataset(one, one, alternative_answers="I don't know")


def test_collator_masks_prompt_and_padding_of_qa_examples(word_tokenizer):
    forget = [{"question": "what is x ?", "answer": "x is y ."}]
    retain = [{"question": "what is y ?", "answer": "y ."}]
    pairs = ForgetRetainDataset(forget, retain, alternative_answers=["a b"])
    batch = ForgetRetainCollator(word_tokenizer)([pairs[0], pairs[0]])
    tok = word_tokenizer.convert_ids_to_tokens
    side = batch["forget"]
    # <s> Question: what is x ? Answer: | x is y . </s>
    assert tok(side["input_ids"][0].tolist()) == [
        "<s>",
        "Question:",
        "what",
        "is",
        "x",
        "?",
        "Answer:",
        "x",
        "is",
        "y",
        ".",
        "</s>",
    ]
    assert side["labels"][0].tolist()[:7] == [IGNORE_INDEX] * 7
    assert tok(side["labels"][0, 7:].tolist()) == ["x", "is", "y", ".", "</s>"]
    assert side["attention_mask"].sum().item() == 2 * 12
    retain_side = batch["retain"]
    assert retain_side["input_ids"].shape == (2, 10)
    assert tok(retain_side["labels"][0, 7:].tolist()) == ["y", ".", "</s>"]
    assert tok(batch["alternative"]["labels"][0, 7:].tolist()) == ["a", "b", "</s>"]


def test_collator_pads_completion_examples_and_masks_padding(word_tokenizer):
    items = [
        {"forget": {"text": "a b c"}, "retain": {"text": "d"}},
        {"forget": {"text": "e"}, "retain": {"text": "f g"}},
    ]
    batch = ForgetRetainCollator(word_tokenizer, max_length=4)(items)
    forget = batch["forget"]
    pad = word_tokenizer.pad_token_id
    assert forget["input_ids"].tolist() == [
        word_tokenizer.convert_tokens_to_ids(["<s>", "a", "b", "c"]),  # cut at max_length
        word_tokenizer.convert_tokens_to_ids(["<s>", "e", "</s>"]) + [pad],
    ]
    assert forget["labels"][1].tolist() == [
        IGNORE_INDEX,
        *forget["input_ids"][1, 1:3].tolist(),
        IGNORE_INDEX,
    ]
    assert forget["attention_mask"].tolist() == [[1, 1, 1, 1], [1, 1, 1, 0]]


def test_collator_names_the_missing_or_bad_column(word_tokenizer):
    collate = ForgetRetainCollator(word_tokenizer)
    with pytest.raises(ValueError, match="text_column"):
        collate([{"forget": {"body": "a"}, "retain": {"text": "b"}}])
    with pytest.raises(TypeError, match="'text' must hold strings"):
        collate([{"forget": {"text": 3}, "retain": {"text": "b"}}])
    with pytest.raises(ValueError, match="refusal answers follow a prompt.*\\[.text.\\]"):
        collate([{"forget": {"text": "a"}, "retain": {"text": "b"}, "alternative": "c"}])
    with pytest.raises(ValueError, match="max_length"):
        ForgetRetainCollator(word_tokenizer, max_length=0)
