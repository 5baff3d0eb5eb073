"""The toy corpus: deterministic, every owner present, one owner per topic."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from waterdrum_hf.data import (
    toy_corpus,
)
from waterdrum_hf.data.corpus import _assign_topics, topic_texts


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
