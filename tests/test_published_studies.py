"""The committed robustness, dilution and capacity studies are what their scripts write: each
``results.md`` is the script's own Markdown of the committed ``results.json``, and the summary
in that JSON is the script's summary of the per-seed rows beside it (no hand edits, no numbers
from another run)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def as_json(value: object) -> str:
    """One spelling for comparing results (NaN equals NaN; tuples are lists)."""
    return json.dumps(value, sort_keys=True)


@pytest.mark.parametrize("name", ["capacity", "dilution", "robustness"])
def test_committed_study_is_the_scripts_output(name):
    folder = BENCHMARKS / "results" / name
    if not (folder / "results.json").exists():
        pytest.fail(f"{folder}/results.json is missing: run python benchmarks/{name}.py")
    module = script(name)
    results = json.loads((folder / "results.json").read_text())
    assert "--quick" not in results["command"]  # the full study, not its smoke test
    if name == "dilution":
        per_seed = {int(seed): values for seed, values in results["per_seed"].items()}
        assert len(per_seed) >= 3
        summary = module.summarise(per_seed)
    else:
        assert len(results["plan"]["seeds"]) >= 3
        summary = module.summarise(results["rows"])
    assert as_json(summary) == as_json(results["summary"])
    assert (folder / "results.md").read_text() == module.markdown(results)
