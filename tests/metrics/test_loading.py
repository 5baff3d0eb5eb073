"""``evaluate.load("waterdrum")``: the module registered in evaluate's module cache, by
``waterdrum register-metric`` and by ``import waterdrum_hf``, found offline by evaluate itself."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from waterdrum_hf.metrics import loading as evaluate_cache
from waterdrum_hf.metrics.loading import (
    MODULE_NAME,
    evaluate_modules_cache,
    register_metric,
    register_metric_quietly,
)

CACHE_VARIABLES = ("HF_HOME", "HF_MODULES_CACHE", "XDG_CACHE_HOME")


def fresh_env(hf_home: Path) -> dict[str, str]:
    """The environment of a new user's process: an empty HF_HOME, offline, no cache folders of
    the test run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "XDG_CACHE"))}
    return {
        **env,
        "HF_HOME": str(hf_home),
        "HF_HUB_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
    }


def module_folder(modules: Path) -> Path:
    return modules / "evaluate_modules" / "metrics" / MODULE_NAME


def plant_copy(folder: Path, name: str, meta: dict, mtime: float) -> Path:
    """A copy in the cache as another writer left it: a script that fails when loaded."""
    copy = folder / (name * 64)
    copy.mkdir(parents=True)
    (copy / "__init__.py").touch()
    (copy / "waterdrum.py").write_text("raise RuntimeError('a stale copy was loaded')\n")
    (copy / "waterdrum.json").write_text(json.dumps(meta))
    os.utime(copy / "waterdrum.py", (mtime, mtime))
    return copy


SCRIPT = """
import json, sys
import evaluate
assert "waterdrum_hf" not in sys.modules
metric = evaluate.load("waterdrum")
result = metric.compute(
    predictions=json.loads(sys.argv[1]), references=[11, 22, 11, 22],
    watermark_tokenizer=sys.argv[2], forget_ids=[22],
)
print(json.dumps({"module": type(metric).__module__, "result": result}))
"""


def test_evaluate_load_by_the_bare_name_after_register_metric_offline(tiny_folder, tmp_path):
    """A new user's processes: `waterdrum register-metric`, then a script that imports
    evaluate only. A copy an older waterdrum-hf left (newer on disk, so evaluate would pick it)
    is replaced; a copy someone else wrote is left alone."""
    from waterdrum_hf.config import NullConfig, WaterDrumConfig
    from waterdrum_hf.scoring import waterdrum_metrics

    hf_home = tmp_path / "hf_home"
    folder = module_folder(hf_home / "modules")
    future = time.time() + 86_400
    stale = plant_copy(folder, "a", {evaluate_cache.WRITER: "0.0.1"}, future)
    foreign = plant_copy(folder, "b", {"original file path": "elsewhere"}, time.time() - 86_400)
    env = fresh_env(hf_home)
    command = Path(sys.executable).with_name("waterdrum")
    done = subprocess.run(
        [str(command), "register-metric"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    [written] = [p for p in folder.iterdir() if p.is_dir() and p not in (stale, foreign)]
    assert done.stdout.strip() == str(written / "waterdrum.py") and done.stderr == ""
    assert re.fullmatch("[0-9a-f]{64}", written.name)  # what evaluate's cache lookup lists
    assert not stale.exists() and foreign.exists()

    texts = ["The quick brown fox", "jumps over the lazy dog", "a b c d e", "lorem ipsum dolor"]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(texts), str(tiny_folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["module"] == f"evaluate_modules.metrics.{MODULE_NAME}.{written.name}.waterdrum"
    assert "Using the latest cached version of the module" in done.stderr  # evaluate's one line
    analytic = WaterDrumConfig(null=NullConfig("analytic"))  # the module's default null
    expected = waterdrum_metrics(
        texts, [11, 22, 11, 22], str(tiny_folder), config=analytic, forget_ids=[22]
    )
    assert json.dumps(loaded["result"]) == json.dumps(expected)  # NaN-safe, exact floats


def test_importing_the_library_registers_the_metric_silently(tmp_path):
    hf_home = tmp_path / "hf_home"
    done = subprocess.run(
        [sys.executable, "-c", "import waterdrum_hf"],
        env=fresh_env(hf_home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout == done.stderr == ""
    [script] = module_folder(hf_home / "modules").glob("*/waterdrum.py")
    assert script.read_bytes() == evaluate_cache.metric_script().read_bytes()


def test_an_unwritable_cache_never_fails_the_import(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    done = subprocess.run(
        [sys.executable, "-c", "import waterdrum_hf; print(waterdrum_hf.__version__)"],
        env=fresh_env(tmp_path / "file" / "hf_home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stderr == "" and done.stdout.strip()


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """evaluate's modules cache in a temporary folder (as HF_MODULES_CACHE names it)."""
    monkeypatch.delitem(sys.modules, "evaluate.config", raising=False)
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    return tmp_path / "modules"


def test_registering_is_a_no_op_once_current_and_follows_the_version(modules, monkeypatch):
    first = register_metric()
    assert first.parent.parent == module_folder(modules)
    for package in (modules, modules / "evaluate_modules", first.parent.parent, first.parent):
        assert (package / "__init__.py").is_file()  # as evaluate lays out a module it fetched
    meta = json.loads((first.parent / "waterdrum.json").read_text())
    assert meta["local file path"] == str(first)
    os.utime(first, (1, 1))
    assert register_metric() == first and first.stat().st_mtime == 1  # nothing rewritten
    monkeypatch.setattr(evaluate_cache, "library_version", lambda: "99.0")
    upgraded = register_metric()
    assert upgraded != first and upgraded.is_file() and not first.parent.exists()
    assert [p.name for p in module_folder(modules).iterdir() if p.is_dir()] == [
        upgraded.parent.name
    ]  # no staging folder left behind


def test_an_unwritable_cache_is_logged_at_debug_level(tmp_path, monkeypatch, caplog):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.delitem(sys.modules, "evaluate.config", raising=False)
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "file" / "modules"))
    with pytest.raises(OSError):
        register_metric()
    with caplog.at_level(logging.DEBUG, logger="waterdrum_hf.metrics.loading"):
        register_metric_quietly()
    [record] = caplog.records
    assert record.levelno == logging.DEBUG and "could not register" in record.getMessage()


@pytest.mark.parametrize(
    "variables",
    [
        {"HF_HOME": "{tmp}/home"},
        {"HF_HOME": "{tmp}/home", "HF_MODULES_CACHE": "{tmp}/modules"},
        {"XDG_CACHE_HOME": "{tmp}/xdg"},
        {},
    ],
)
def test_the_cache_folder_is_the_one_evaluate_reads(variables, tmp_path, monkeypatch):
    """Without evaluate imported, the folder follows the variables as evaluate's config reads
    them (its config module run afresh under the same variables); with it, evaluate's value."""
    import evaluate

    for name in CACHE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    spec = importlib.util.spec_from_file_location(
        "evaluate._config_probe", evaluate.config.__file__
    )
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    expected = Path(probe.HF_MODULES_CACHE) / "evaluate_modules"
    with monkeypatch.context() as patch:
        patch.delitem(sys.modules, "evaluate.config")
        assert evaluate_modules_cache() == expected
    assert evaluate_modules_cache() == Path(evaluate.config.HF_MODULES_CACHE) / "evaluate_modules"
