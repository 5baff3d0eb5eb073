"""The baselines are public names of ``waterdrum_hf`` and live only in
``waterdrum_hf.baselines`` (the old ``waterdrum_hf.experiments.baselines`` is gone)."""

from __future__ import annotations

import importlib.util

import waterdrum_hf
from waterdrum_hf import baselines


def test_every_baseline_is_exported_from_the_package_as_itself():
    for name in baselines.__all__:
        assert name in waterdrum_hf.__all__, name
        assert getattr(waterdrum_hf, name) is getattr(baselines, name), name


def test_no_alias_is_left_at_the_old_path():
    assert importlib.util.find_spec("waterdrum_hf.experiments.baselines") is None
