"""Fixtures of the data tests."""

from __future__ import annotations

import pytest
from datasets import Dataset

from waterdrum_hf.data import (
    toy_corpus,
)


@pytest.fixture(scope="module")
def corpus() -> Dataset:
    return toy_corpus()
