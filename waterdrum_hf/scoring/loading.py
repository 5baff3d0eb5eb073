"""Loading the shipped ``evaluate`` module by absolute path (offline; never by a bare name
resolved against the current directory)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any


def metric_path() -> Path:
    """Folder of the shipped `evaluate` module (``metrics/waterdrum`` in the source tree).

    Found through ``importlib.resources``: the module imports this one, so importing it here
    would make the two import each other.
    """
    return Path(str(resources.files("waterdrum_hf.metrics") / "waterdrum")).resolve()


def load_metric(**load_kwargs: Any) -> Any:
    """Load the WaterDrum `evaluate` module shipped with this package (offline, by path).

    Keyword arguments go to ``evaluate.load`` (e.g. ``experiment_id``, ``keep_in_memory``).
    """
    import evaluate

    return evaluate.load(str(metric_path()), **load_kwargs)
