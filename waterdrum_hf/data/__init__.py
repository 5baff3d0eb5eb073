"""Data for WaterDrum: the published benchmarks, forget/retain views, pairs and a toy corpus."""

from .corpus import toy_corpus
from .hub import load_waterdrum_ax, load_waterdrum_tofu
from .pairing import IGNORE_INDEX, ForgetRetainCollator, ForgetRetainDataset
from .splits import calibration_train_set, split_by_owner

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
