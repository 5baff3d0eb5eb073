"""Data for WaterDrum: the published benchmarks, forget/retain views, pairs, and the toy
corpora (passages, and TOFU-shaped questions about fictitious authors)."""

from waterdrum_hf.data.corpus import toy_corpus
from waterdrum_hf.data.hub import load_waterdrum_ax, load_waterdrum_tofu
from waterdrum_hf.data.pairing import ForgetRetainCollator, ForgetRetainDataset
from waterdrum_hf.data.qa_corpus import toy_qa_corpus
from waterdrum_hf.data.splits import (
    calibration_train_set,
    first_rows_per_owner,
    mark_forget,
    partition_by_owner,
    split_by_owner,
)
from waterdrum_hf.utils.torch_plumbing import IGNORE_INDEX

__all__ = [
    "IGNORE_INDEX",
    "ForgetRetainCollator",
    "ForgetRetainDataset",
    "calibration_train_set",
    "first_rows_per_owner",
    "load_waterdrum_ax",
    "load_waterdrum_tofu",
    "mark_forget",
    "partition_by_owner",
    "split_by_owner",
    "toy_corpus",
    "toy_qa_corpus",
]
