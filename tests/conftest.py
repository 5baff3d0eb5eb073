"""Test-wide settings: offline, a writable HF_HOME, small tokenizers built in code."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

# Must happen before transformers / datasets / evaluate are imported anywhere. Without an
# HF_HOME from the caller (dev.sh sets ./.hf_home), use a temporary one and remove it after.
if "HF_HOME" not in os.environ:
    os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="waterdrum-hf-home-")
    atexit.register(shutil.rmtree, os.environ["HF_HOME"], ignore_errors=True)
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"


@pytest.fixture(scope="session")
def tiny_model():
    """The built-in tiny ``(model, tokenizer)``, built once per session under HF_HOME."""
    from waterdrum_hf import tiny

    return tiny.load(show_progress=False)
