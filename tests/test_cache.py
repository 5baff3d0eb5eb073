"""Resumable stages: never reused across settings or versions, never half-written."""

from __future__ import annotations

import time

import pytest

import waterdrum_hf._version
from waterdrum_hf.experiments.cache import StageCache


def test_a_stage_is_named_by_its_settings_parents_and_version(tmp_path, monkeypatch):
    cache = StageCache(tmp_path)
    base = cache.stage("data", {"owners": 4})
    assert cache.stage("data", {"owners": 4}) == base
    assert cache.stage("data", {"owners": 5}).path != base.path
    model = cache.stage("model", {"epochs": 3}, base)
    assert cache.stage("model", {"epochs": 3}, cache.stage("data", {"owners": 5})).path != model.path
    monkeypatch.setattr(waterdrum_hf._version, "version", lambda _name: "99.0")
    assert cache.stage("data", {"owners": 4}).path != base.path


def test_build_runs_once_and_a_failed_build_leaves_nothing(tmp_path):
    cache = StageCache(tmp_path)
    stage = cache.stage("data", {"n": 1})
    calls = []

    def crash(folder):
        (folder / "half.txt").write_text("half")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        cache.build(stage, crash)
    assert not stage.done and list(tmp_path.iterdir()) == []

    def build(folder):
        calls.append(1)
        time.sleep(0.2)
        (folder / "data.txt").write_text("complete")

    assert cache.build(stage, build) and stage.done
    assert cache.load_or_build(stage, build, lambda p: (p / "data.txt").read_text()) == "complete"
    assert calls == [1]
    assert (cache.built, cache.reused) == (1, 0)  # the failed build counts as neither
    later = StageCache(tmp_path)  # a later run reuses it
    assert not later.build(stage, build) and not later.build(stage, build) and calls == [1]
    assert (later.built, later.reused) == (0, 1)
    assert later.reused_seconds >= 0.2  # what building it took, recorded with the stage
