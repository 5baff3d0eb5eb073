"""Forget/retain splits by owner, first rows per owner, calibration training sets."""

from __future__ import annotations

import pytest
from datasets import Dataset

from waterdrum_hf.data import (
    calibration_train_set,
    first_rows_per_owner,
    partition_by_owner,
    split_by_owner,
)


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


def test_calibration_train_set_adds_the_first_share_of_the_forget_set(corpus):
    forget, retain = split_by_owner(corpus, [19])
    for fraction in (0.0, 0.3, 1.0):
        train = calibration_train_set(forget, retain, fraction)
        kept = round(fraction * len(forget))
        assert len(train) == len(retain) + kept
        assert train["text"][len(retain) :] == forget["text"][:kept]
    with pytest.raises(ValueError, match="fraction"):
        calibration_train_set(forget, retain, 1.5)
