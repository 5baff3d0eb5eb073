"""Resumable stages: never reused across settings, versions or CPU kernels, never half-written."""

from __future__ import annotations

import time

import pytest

import waterdrum_hf._version
from waterdrum_hf.experiments.stage_cache import StageCache
from waterdrum_hf.utils.files import building_folder
from waterdrum_hf.utils.fingerprint import json_digest


def test_a_stage_is_named_by_its_settings_parents_and_version(tmp_path, monkeypatch):
    cache = StageCache(tmp_path)
    base = cache.stage("data", {"owners": 4})
    assert cache.stage("data", {"owners": 4}) == base
    assert cache.stage("data", {"owners": 5}).path != base.path
    model = cache.stage("model", {"epochs": 3}, base)
    assert (
        cache.stage("model", {"epochs": 3}, cache.stage("data", {"owners": 5})).path != model.path
    )
    monkeypatch.setattr(waterdrum_hf._version, "version", lambda _name: "99.0")
    assert cache.stage("data", {"owners": 4}).path != base.path


def test_a_stage_trained_under_other_cpu_kernels_is_not_reused(tmp_path, monkeypatch):
    """Pinning MKL's code path (as another processor would pick another) names another
    stage; so does PyTorch's capability (``ATEN_CPU_CAPABILITY``, read at import)."""
    import torch

    monkeypatch.delenv("MKL_CBWR", raising=False)
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    cache = StageCache(tmp_path)
    own = cache.stage("model", {"epochs": 3})
    monkeypatch.setenv("MKL_CBWR", "AVX2")
    assert cache.stage("model", {"epochs": 3}).path != own.path
    monkeypatch.delenv("MKL_CBWR")
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    assert cache.stage("model", {"epochs": 3}).path != own.path
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA")
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "NO AVX")
    assert cache.stage("model", {"epochs": 3}).path != own.path


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


def test_building_folder_appears_whole_or_not_at_all(tmp_path):
    target = tmp_path / "deep" / "stage"
    with pytest.raises(RuntimeError, match="killed"), building_folder(target) as folder:
        (folder / "half.txt").write_text("half")
        raise RuntimeError("killed")
    assert list((tmp_path / "deep").iterdir()) == []  # no temporary folder left either
    with building_folder(target) as folder:
        assert folder.parent == target.parent and not target.exists()
        (folder / "done.txt").write_text("mine")
    assert (target / "done.txt").read_text() == "mine"
    assert target.stat().st_mode & 0o777 == 0o755  # a shared cache serves other users
    with building_folder(target) as folder:  # another process finished first: its folder stays
        (folder / "done.txt").write_text("late")
    assert (target / "done.txt").read_text() == "mine"
    assert [p.name for p in (tmp_path / "deep").iterdir()] == ["stage"]


def test_json_digest_ignores_key_order_and_refuses_what_json_cannot_hold():
    settings = {"b": [1, 2, {"y": 1, "x": 2}], "a": "text"}
    reordered = {"a": "text", "b": [1, 2, {"x": 2, "y": 1}]}
    assert json_digest(settings) == json_digest(reordered)
    assert json_digest(settings) != json_digest({**settings, "b": [2, 1, {"x": 2, "y": 1}]})
    assert len(json_digest(settings)) == 64
    with pytest.raises(TypeError):  # no str() guess: it could hold a memory address
        json_digest({"model": object()})
