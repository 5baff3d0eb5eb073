"""Fixtures of the command tests: a scored file and owners' rows."""

from __future__ import annotations

import json

import pytest
from tokenizer_builders import word_texts, word_tokenizer

from tests.scripts.cli_cases import KEYS


@pytest.fixture
def scored_file(tmp_path):
    tok = word_tokenizer(4096)
    tok.save_pretrained(tmp_path / "tok")
    texts = word_texts(4096, 10, 30, seed=5)
    owners = [KEYS[i % 2] for i in range(10)]
    path = tmp_path / "outputs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"text": t, "owner_id": o}) for t, o in zip(texts, owners, strict=True)
        )
    )
    (tmp_path / "forget.txt").write_text(f"{KEYS[1]}\n")
    return tmp_path, texts, owners, tok


@pytest.fixture(scope="module")
def owner_rows(tiny_model, tmp_path_factory):
    """A local dataset: toy passages with an owner id column (two owners)."""
    from waterdrum_hf.data import toy_corpus

    corpus = toy_corpus(2, max_passages_per_owner=3)
    path = tmp_path_factory.mktemp("rows") / "rows.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"text": t, "owner_id": KEYS[o]})
            for t, o in zip(corpus["text"], corpus["owner_id"], strict=True)
        )
    )
    return path
