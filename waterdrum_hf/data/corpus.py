"""A small offline corpus of owners' passages, cut from Python's own documentation.

``pydoc_data.topics`` ships with every CPython install (the text behind ``help("assert")``),
so the demo, the examples and the tests get a multi-owner corpus with no download. Its exact
content follows the running Python's version; for a given Python it is fully deterministic.
"""

from __future__ import annotations

import re

from datasets import Dataset

_HEADING_RULE = re.compile(r"^\s*([*=~^\-])\1{2,}\s*$")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def topic_texts() -> dict[str, str]:
    """Return the raw ``pydoc_data.topics`` texts by topic name (79 topics on Python 3.11)."""
    from pydoc_data.topics import topics

    return dict(topics)


def toy_corpus(
    num_owners: int = 20,
    *,
    passage_chars: int = 600,
    max_passages_per_owner: int | None = None,
) -> Dataset:
    """Build a ``Dataset`` with columns ``text`` (str) and ``owner_id`` (int).

    Every documentation topic belongs to exactly one owner, so owners differ in subject, as
    WaterDrum-Ax's arXiv categories do. Topics are dealt to owners largest first, each to the
    owner with the fewest characters so far, which balances owners by size. Each topic is cut
    into passages of whole paragraphs (whitespace collapsed, heading rules dropped) of at most
    ``passage_chars`` characters; a paragraph longer than that is cut between words, and a
    short tail is merged into the passage before it. Rows are ordered by owner id, then
    topic name, then position in the topic.

    With the defaults on Python 3.11: 79 topics, 428k characters in 857 passages of 116-627
    characters (mean ~500, ~115 tokens of the tiny model's tokenizer), 30-116 passages per
    owner.

    Args:
        num_owners: number of owners, 1 to the number of topics (79 on Python 3.11).
        passage_chars: target maximum passage length in characters (at least 100).
        max_passages_per_owner: keep only each owner's first passages, e.g. to make owners
            equal in size; ``None`` keeps all.
    """
    topics = topic_texts()
    if not isinstance(num_owners, int) or not 1 <= num_owners <= len(topics):
        raise ValueError(f"num_owners must be an int in 1..{len(topics)}, got {num_owners!r}")
    if not isinstance(passage_chars, int) or passage_chars < 100:
        raise ValueError(f"passage_chars must be an int >= 100, got {passage_chars!r}")
    if max_passages_per_owner is not None and (
        not isinstance(max_passages_per_owner, int) or max_passages_per_owner < 1
    ):
        raise ValueError(
            f"max_passages_per_owner must be None or an int >= 1, got {max_passages_per_owner!r}"
        )

    owners = _assign_topics(topics, num_owners)
    texts: list[str] = []
    owner_ids: list[int] = []
    for owner, names in enumerate(owners):
        passages = [p for name in sorted(names) for p in _passages(topics[name], passage_chars)]
        passages = passages[:max_passages_per_owner]
        texts.extend(passages)
        owner_ids.extend([owner] * len(passages))
    return Dataset.from_dict({"text": texts, "owner_id": owner_ids})


def _assign_topics(topics: dict[str, str], num_owners: int) -> list[list[str]]:
    """Deal topics to owners, largest first, each to the currently smallest owner."""
    owners: list[list[str]] = [[] for _ in range(num_owners)]
    sizes = [0] * num_owners
    for name in sorted(topics, key=lambda n: (-len(topics[n]), n)):
        owner = min(range(num_owners), key=lambda o: (sizes[o], o))
        owners[owner].append(name)
        sizes[owner] += len(topics[name])
    return owners


def _passages(text: str, passage_chars: int) -> list[str]:
    """Cut one topic into whitespace-normalised passages of about ``passage_chars``.

    A paragraph that does not fit starts a new passage when the current one is at least half
    full; otherwise it is cut between words to fill the current one.
    """
    passages: list[str] = []
    current = ""
    for paragraph in _PARAGRAPH_BREAK.split(text):
        lines = [line for line in paragraph.splitlines() if not _HEADING_RULE.match(line)]
        words = " ".join(lines).split()
        too_long = len(current) + 1 + len(" ".join(words)) > passage_chars
        if current and too_long and 2 * len(current) >= passage_chars:
            passages.append(current)
            current = ""
        for word in words:
            if current and len(current) + 1 + len(word) > passage_chars:
                passages.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
    if current:
        if passages and len(current) < passage_chars // 6:
            passages[-1] = f"{passages[-1]} {current}"
        else:
            passages.append(current)
    return passages
