"""Fixtures of the trainer tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def tokenizer(tiny_model):
    return tiny_model[1]


@pytest.fixture(scope="module")
def dataset_folder(tmp_path_factory) -> Path:
    from trl_scripts import write_dataset

    return write_dataset(tmp_path_factory.mktemp("data"))
