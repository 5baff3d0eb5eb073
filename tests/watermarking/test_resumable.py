"""Interrupted work loses nothing: `resumable_map` resumes from the shards a run finished.

Watermarking, the slow step, is killed mid-way (SIGKILL, in a subprocess) and re-run: the
resumed run computes only the unfinished shard, and its texts and scores equal an uninterrupted
run's. A cache written by another configuration or another library version is never reused.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import Dataset, load_from_disk

import waterdrum_hf._version
from waterdrum_hf import WatermarkedDataset, resumable_map
from waterdrum_hf.data import toy_corpus

SCRIPT = Path(__file__).resolve().parents[1] / "programs" / "watermark_resumable.py"
SETTINGS = {
    "num_beam_groups": 2,
    "beams_per_group": 1,
    "max_new_tokens": 12,
    "show_progress": False,
}
SHARD_SIZE = 2
ROWS = 6
KEYS = (3_141_592_653, 2_718_281_829)


def save_passages(path: Path) -> Path:
    texts = toy_corpus().shuffle(seed=1).select(range(ROWS))["text"]
    owners = [KEYS[i % 2] for i in range(ROWS)]
    Dataset.from_dict({"text": texts, "owner_id": owners}).save_to_disk(path)
    return path


def watermark(dataset: Path, output: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(SCRIPT), str(dataset), str(output), json.dumps(SETTINGS)]
    command += [str(SHARD_SIZE), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory):
    """One run killed after 2 of 3 shards and resumed; one uninterrupted run elsewhere."""
    root = tmp_path_factory.mktemp("resume")
    interrupted, uninterrupted = save_passages(root / "a"), save_passages(root / "b")
    killed = watermark(interrupted, root / "killed.json", "--die-after-shards", "2")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert not (root / "killed.json").exists()
    assert len(list(interrupted.glob("cache-*.arrow"))) == 2
    for dataset, name in ((interrupted, "resumed"), (uninterrupted, "fresh")):
        done = watermark(dataset, root / f"{name}.json")
        assert done.returncode == 0, done.stderr[-2000:]
    results = {
        name: json.loads((root / f"{name}.json").read_text()) for name in ("resumed", "fresh")
    }
    return interrupted, results


@pytest.mark.end_to_end
def test_a_killed_watermarking_run_resumes_to_the_uninterrupted_result(killed_and_resumed):
    _, results = killed_and_resumed
    resumed, fresh = results["resumed"], results["fresh"]
    assert fresh["computed_rows"] == ROWS
    assert resumed["computed_rows"] == SHARD_SIZE  # only the shard that was in progress
    assert resumed["text"] == fresh["text"]
    assert resumed["watermark_score"] == fresh["watermark_score"]
    assert min(fresh["watermark_score"]) > 0.2  # watermarked, not passed through


@pytest.mark.end_to_end
def test_a_cache_of_another_configuration_or_version_is_never_reused(
    killed_and_resumed, tiny_model, monkeypatch
):
    dataset_path, results = killed_and_resumed
    model, tokenizer = tiny_model
    dataset = load_from_disk(str(dataset_path))

    def run(**changes) -> tuple[Dataset, int]:
        watermarker = WatermarkedDataset(model, tokenizer, **{**SETTINGS, **changes})
        result = resumable_map(dataset, watermarker, shard_size=SHARD_SIZE, batched=True)
        return result, watermarker.num_watermarked

    def cache_names(result: Dataset) -> set[str]:
        names = {Path(f["filename"]).name for f in result.cache_files}
        return {name for name in names if name.startswith("cache-")}

    same, computed = run()  # this process reuses what the other processes wrote
    assert computed == 0 and list(same["text"]) == results["fresh"]["text"]
    assert len(cache_names(same)) == ROWS // SHARD_SIZE
    other, computed = run(kappa=3.0)
    assert computed == ROWS and cache_names(other).isdisjoint(cache_names(same))
    monkeypatch.setattr(waterdrum_hf._version, "version", lambda _name: "999.0.0")
    newer, computed = run()
    assert computed == ROWS and cache_names(newer).isdisjoint(cache_names(same))


_CALLS: list[int] = []
_FAIL_AT: dict[str, int] = {}


def _double(batch: dict[str, list[int]]) -> dict[str, list[int]]:
    """Module-level, so ``datasets`` hashes it by name: its state lives outside the hash."""
    _CALLS.append(batch["x"][0])
    if _FAIL_AT.get("x") == batch["x"][0]:
        del _FAIL_AT["x"]  # fails once
        raise RuntimeError("interrupted")
    return {"y": [2 * x for x in batch["x"]]}


def test_resumable_map_equals_map_and_resumes_at_the_first_unfinished_shard(tmp_path):
    Dataset.from_dict({"x": list(range(10))}).save_to_disk(tmp_path / "ds")
    dataset = load_from_disk(str(tmp_path / "ds"))
    _CALLS.clear()
    _FAIL_AT["x"] = 8  # the third shard fails, like a run killed there
    with pytest.raises(RuntimeError, match="interrupted"):
        resumable_map(dataset, _double, shard_size=4, batched=True)
    assert _CALLS == [0, 4, 8]
    _CALLS.clear()
    result = resumable_map(dataset, _double, shard_size=4, batched=True)
    assert _CALLS == [8]
    assert list(result["y"]) == [2 * x for x in range(10)] and result.column_names == ["x", "y"]
    _CALLS.clear()
    again = resumable_map(dataset, _double, shard_size=4, batched=True)
    assert not _CALLS and list(again["y"]) == list(result["y"])


def test_resumable_map_bad_input(tmp_path):
    in_memory = Dataset.from_dict({"x": [1, 2]})
    with pytest.raises(ValueError, match="save_to_disk"):
        resumable_map(in_memory, _double, batched=True)
    with pytest.raises(TypeError, match="IterableDataset is mapped lazily"):
        resumable_map(in_memory.to_iterable_dataset(), _double, batched=True)
    in_memory.save_to_disk(tmp_path / "ds")
    dataset = load_from_disk(str(tmp_path / "ds"))
    with pytest.raises(ValueError, match="`shard_size` must be >= 1"):
        resumable_map(dataset, _double, shard_size=0)
    for name, value in (("cache_file_name", "x.arrow"), ("num_proc", 2), ("new_fingerprint", "f")):
        with pytest.raises(ValueError, match=f"`{name}` is not supported"):
            resumable_map(dataset, _double, **{name: value})
    empty = resumable_map(dataset.select([]), _double, batched=True)
    assert len(empty) == 0
