"""Data for WaterDrum: the published benchmarks, forget/retain views, pairs and a toy corpus."""

from waterdrum_hf.data.corpus import toy_corpus
from waterdrum_hf.data.hub import load_waterdrum_ax, load_waterdrum_tofu
from waterdrum_hf.data.pairing import IGNORE_INDEX, ForgetRetainCollator, ForgetRetainDataset
from waterdrum_hf.data.splits import calibration_train_set, split_by_owner

__all__ = [
    "IGNORE_INDEX",
    "ForgetRetainCollator",
    "ForgetRetainDataset",
    "calibration_train_set",
    "load_waterdrum_ax",
    "load_waterdrum_tofu",
    "split_by_owner",
    "toy_corpus",
]
