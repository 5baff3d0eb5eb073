"""Fixtures of the benchmarks' own tests: the study scripts, each loaded from its file under
``benchmarks/`` as ``python benchmarks/<name>.py`` would run it (once per test module)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1]


def study_script(name: str) -> Iterator[ModuleType]:
    """``benchmarks/<name>.py`` as module ``benchmark_<name>``, registered while in use (its
    dataclasses look their module up by name)."""
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.fixture(scope="module")
def capacity() -> Iterator[ModuleType]:
    yield from study_script("capacity")


@pytest.fixture(scope="module")
def dilution() -> Iterator[ModuleType]:
    yield from study_script("dilution")


@pytest.fixture(scope="module")
def robustness() -> Iterator[ModuleType]:
    yield from study_script("robustness")
