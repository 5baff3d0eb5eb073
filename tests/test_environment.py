"""The test run itself: offline, and nothing written into the user's Hugging Face cache."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def test_dataset_metric_and_module_caches_go_to_a_temporary_folder():
    import datasets
    import evaluate
    import transformers.utils.hub

    for cache in (
        datasets.config.HF_DATASETS_CACHE,
        evaluate.config.HF_EVALUATE_CACHE,
        evaluate.config.HF_MODULES_CACHE,
        transformers.utils.hub.HF_MODULES_CACHE,
    ):
        scratch = Path(cache).resolve().relative_to(Path(tempfile.gettempdir()).resolve()).parts[0]
        assert scratch.startswith("waterdrum-hf-tests-"), cache  # conftest's temporary folder
    assert os.environ["HF_HUB_OFFLINE"] == os.environ["HF_EVALUATE_OFFLINE"] == "1"
