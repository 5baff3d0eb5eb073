"""The toy corpus, forget/retain splits, calibration sets, pairing and the pair collator."""

from __future__ import annotations

import copy
import re
from collections import Counter

import pytest
import torch
from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from waterdrum_hf._torch_plumbing import causal_lm_batch
from waterdrum_hf.data import (
    IGNORE_INDEX,
    ForgetRetainCollator,
    ForgetRetainDataset,
    calibration_train_set,
    first_rows_per_owner,
    partition_by_owner,
    split_by_owner,
    toy_corpus,
)
from waterdrum_hf.data.corpus import _assign_topics, topic_texts


@pytest.fixture(scope="module")
def corpus() -> Dataset:
    return toy_corpus()


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


def test_toy_corpus_is_deterministic_with_every_owner_present(corpus):
    assert corpus.column_names == ["text", "owner_id"]
    assert corpus["text"][:] == toy_corpus()["text"][:]
    counts = Counter(corpus["owner_id"])
    assert sorted(counts) == list(range(20)) and min(counts.values()) >= 20
    lengths = [len(text) for text in corpus["text"]]
    assert min(lengths) >= 100 and max(lengths) <= 700
    heading_rule = re.compile(r"(^| )[*=]{5,}( |$)")
    assert not any("\n" in text or heading_rule.search(text) for text in corpus["text"])
    assert sum(lengths) > 0.85 * sum(len(t) for t in topic_texts().values())


def test_every_topic_belongs_to_exactly_one_owner():
    topics = topic_texts()
    owners = _assign_topics(topics, 20)
    dealt = [name for names in owners for name in names]
    assert sorted(dealt) == sorted(topics)
    sizes = [sum(len(topics[n]) for n in names) for names in owners]
    assert max(sizes) == max(len(t) for t in topics.values())  # the largest topic stands alone


def test_toy_corpus_options(corpus):
    capped = toy_corpus(5, passage_chars=300, max_passages_per_owner=4)
    assert list(capped["owner_id"]) == [o for o in range(5) for _ in range(4)]
    assert max(len(t) for t in capped["text"]) <= 350


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"num_owners": 0}, "num_owners"),
        ({"num_owners": 1000}, "num_owners"),
        ({"passage_chars": 10}, "passage_chars"),
        ({"max_passages_per_owner": 0}, "max_passages_per_owner"),
    ],
)
def test_toy_corpus_rejects_bad_sizes(kwargs, name):
    with pytest.raises(ValueError, match=name):
        toy_corpus(**kwargs)


def test_split_by_owner_keeps_order_and_checks_ids(corpus):
    forget, retain = split_by_owner(corpus, [18, 19])
    assert set(forget["owner_id"]) == {18, 19} and 18 not in retain["owner_id"]
    assert len(forget) + len(retain) == len(corpus)
    assert forget["text"][:] == [r["text"] for r in corpus if r["owner_id"] in (18, 19)]
    assert split_by_owner(corpus, 19)[0]["text"][:] == [
        r["text"] for r in corpus if r["owner_id"] == 19
    ]
    with pytest.raises(ValueError, match=r"1 of 2 forget_ids own no row") as info:
        split_by_owner(corpus, [19, 42])
    assert "42" not in str(info.value)  # ids are watermark keys: never in messages
    with pytest.raises(TypeError, match="forget_ids"):
        split_by_owner(corpus, ["19"])
    with pytest.raises(ValueError, match="id_column 'owner'"):
        split_by_owner(corpus, [1], id_column="owner")


def test_partition_by_owner_is_the_one_forget_retain_rule():
    items, owners = ["a", "b", "c", "d", "e"], [3, 1, 3, 2, 1]
    assert partition_by_owner(items, owners, {3}) == (["a", "c"], ["b", "d", "e"])
    assert partition_by_owner(items, owners, {1, 2}) == (["b", "d", "e"], ["a", "c"])
    assert partition_by_owner(items, owners, set()) == ([], items)  # order kept on both sides
    with pytest.raises(ValueError):  # one owner per item
        partition_by_owner(items, owners[:-1], {3})


def test_first_rows_per_owner_keeps_each_owners_first_rows_in_order():
    data = Dataset.from_dict({"text": list("abcdefg"), "who": [5, 5, 9, 5, 9, 9, 7]})
    assert first_rows_per_owner(data, 2, id_column="who")["text"] == ["a", "b", "c", "e", "g"]
    assert first_rows_per_owner(data, 1, id_column="who")["text"] == ["a", "c", "g"]
    assert first_rows_per_owner(data, None, id_column="who") is data
    with pytest.raises(ValueError, match="max_rows"):
        first_rows_per_owner(data, 0, id_column="who")


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


def test_calibration_train_set_adds_the_first_share_of_the_forget_set(corpus):
    forget, retain = split_by_owner(corpus, [19])
    for fraction in (0.0, 0.3, 1.0):
        train = calibration_train_set(forget, retain, fraction)
        kept = round(fraction * len(forget))
        assert len(train) == len(retain) + kept
        assert train["text"][len(retain) :] == forget["text"][:kept]
    with pytest.raises(ValueError, match="fraction"):
        calibration_train_set(forget, retain, 1.5)


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
    with pytest.raises(ValueError, match="alternative answers need QA-style"):
        collate([{"forget": {"text": "a"}, "retain": {"text": "b"}, "alternative": "c"}])
    with pytest.raises(ValueError, match="max_length"):
        ForgetRetainCollator(word_tokenizer, max_length=0)
