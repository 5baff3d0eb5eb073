"""How ``evaluate`` finds the shipped WaterDrum module: by absolute path (:func:`load_metric`,
offline, never a bare name resolved against the current directory) or by the bare name, from
evaluate's own module cache (:func:`register_metric`).

With a bare name, ``evaluate.load`` first asks the Hub for ``evaluate-metric/waterdrum``; when
that fails (offline, or no such module) it loads the newest copy (by the script's modification
time) in its module cache, ``<HF_MODULES_CACHE>/evaluate_modules/metrics/
evaluate-metric--waterdrum/<64-hex hash>/waterdrum.py``, laid out as evaluate lays out a module
it downloaded. :func:`register_metric` writes our script there, under a hash of its content and
the library's version, and removes the copies an older version of this library wrote; copies
written by anything else are left alone. ``import waterdrum_hf`` calls it (a stat when the
copy is current), and so does ``waterdrum register-metric``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from waterdrum_hf._version import library_version

logger = logging.getLogger(__name__)

MODULE_NAME = "evaluate-metric--waterdrum"
"""The folder evaluate's cache fallback looks in for the bare name ``waterdrum``."""

SCRIPT = "waterdrum.py"
META = "waterdrum.json"
"""The copy's metadata file, named as evaluate names it (the script's stem)."""
WRITER = "waterdrum-hf version"
"""The key that marks a copy in the cache as this library's (in the copy's metadata file)."""


def evaluate_modules_cache() -> Path:
    """Where evaluate keeps its dynamic modules: ``$HF_MODULES_CACHE`` (default
    ``$HF_HOME/modules``) ``/evaluate_modules``, as evaluate's own config reads it (its value
    once evaluate is imported, so that a process that set the variables later still agrees)."""
    config = sys.modules.get("evaluate.config")
    if config is not None:
        modules = Path(config.HF_MODULES_CACHE)
    elif os.environ.get("HF_MODULES_CACHE"):
        modules = Path(os.environ["HF_MODULES_CACHE"])
    else:
        default = os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
        modules = Path(os.path.expanduser(os.environ.get("HF_HOME", default))) / "modules"
    return modules / "evaluate_modules"


def metric_path() -> Path:
    """Folder of the shipped `evaluate` module (``metrics/waterdrum`` in the source tree)."""
    return Path(__file__).resolve().parent / "waterdrum"


def load_metric(**load_kwargs: Any) -> Any:
    """Load the WaterDrum `evaluate` module shipped with this package (offline, by path).

    Keyword arguments go to ``evaluate.load`` (e.g. ``experiment_id``, ``keep_in_memory``).
    """
    import evaluate

    return evaluate.load(str(metric_path()), **load_kwargs)


def metric_script() -> Path:
    """The shipped module's script (``metrics/waterdrum/waterdrum.py`` in the source tree)."""
    return metric_path() / SCRIPT


def register_metric() -> Path:
    """Put the shipped WaterDrum module where ``evaluate.load("waterdrum")`` finds it, and
    return the cached script's path. Does nothing when the current copy is there; replaces
    the copies of other versions of this library. Raises ``OSError`` when the cache cannot
    be written."""
    script = metric_script()
    code = script.read_bytes()
    version = library_version()
    digest = hashlib.sha256(version.encode() + b"\0" + code).hexdigest()
    cache = evaluate_modules_cache()
    folder = cache / "metrics" / MODULE_NAME
    target = folder / digest / SCRIPT
    if target.is_file():
        return target
    _write_packages(cache, folder)
    staging = Path(tempfile.mkdtemp(prefix=".waterdrum-", dir=folder))
    try:
        (staging / "__init__.py").touch()
        (staging / SCRIPT).write_bytes(code)
        meta = {"original file path": str(script), "local file path": str(target), WRITER: version}
        (staging / META).write_text(json.dumps(meta))
        try:
            staging.rename(folder / digest)
        except OSError:  # another process wrote the same copy meanwhile
            if not target.is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for stale in _own_copies(folder):
        if stale.name != digest:
            shutil.rmtree(stale, ignore_errors=True)
    logger.debug("registered the WaterDrum metric for evaluate.load('waterdrum'): %s", target)
    return target


def register_metric_quietly() -> None:
    """:func:`register_metric` for ``import waterdrum_hf``: an unwritable cache is logged at
    debug level, never raised, so the import always works."""
    try:
        register_metric()
    except OSError as error:
        logger.debug("could not register the WaterDrum metric in evaluate's cache: %s", error)


def _write_packages(cache: Path, folder: Path) -> None:
    """The package files evaluate itself makes: ``__init__.py`` in the modules cache, in
    ``evaluate_modules`` (``cache``) and in the module's folder (the hash folder gets its own
    with the script)."""
    folder.mkdir(parents=True, exist_ok=True)
    for package in (cache.parent, cache, folder):
        init = package / "__init__.py"
        if not init.exists():
            init.touch()


def _own_copies(folder: Path) -> list[Path]:
    """The hash folders of ``folder`` that this library wrote (their metadata says so)."""
    own = []
    for copy in folder.iterdir():
        try:
            meta = json.loads((copy / META).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and WRITER in meta:
            own.append(copy)
    return own
