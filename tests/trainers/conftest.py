"""Fixtures of the trainer tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def tokenizer(tiny_model):
    return tiny_model[1]
