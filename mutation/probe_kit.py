"""What a probe of the mutation gate returns: observations the probe runner compares.

A probe (``mutation/probes_*.py``) runs one function of the gate's modules on inputs
that reach its judged mutants and returns what a caller could observe. ``observe`` turns any
return value into plain data that keeps what an ``==`` on the value could miss: numpy dtypes
and shapes, the exact bits of floats, the types of containers and dataclasses. ``each`` runs
several calls and records, for each, its observation or the type of what it raised, with the
categories of the warnings it gave, so one probe reaches every refusal of a function.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def observe(value: Any) -> Any:
    """``value`` as JSON-able data with its types: equal observations, equal behaviour."""
    import numpy as np

    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if value is None or isinstance(value, (bool, int, str)):
        return [kind, value]
    if isinstance(value, float):
        return [kind, "nan" if math.isnan(value) else value.hex()]
    if isinstance(value, np.ndarray):
        data = value.tobytes() if value.dtype != object else repr(value.tolist()).encode()
        return [kind, value.dtype.str, list(value.shape), hashlib.sha256(data).hexdigest()]
    if isinstance(value, np.generic):
        return [kind, value.dtype.str, value.tobytes().hex()]
    if isinstance(value, Mapping):
        return [kind, sorted(([repr(k), observe(v)] for k, v in value.items()), key=str)]
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [observe(v) for v in value]
        return [kind, sorted(items, key=str) if isinstance(value, (set, frozenset)) else items]
    if isinstance(value, Path):
        return [kind, value.as_posix()]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [kind, {f.name: observe(getattr(value, f.name)) for f in dataclasses.fields(value)}]
    if hasattr(value, "__dict__") and not callable(value):
        return [kind, observe(vars(value))]
    return [kind, repr(value)]


def each(*calls: Callable[[], Any]) -> list[Any]:
    """Each call's observation, or the type of the exception it raised, with the categories
    of its warnings: ``[["returned" | "raised", ..., [warning categories]], ...]``."""
    outcomes = []
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                outcome = ["returned", observe(call())]
            except Exception as error:  # the type is the observation; the message is not
                outcome = ["raised", f"{type(error).__module__}.{type(error).__qualname__}"]
        outcome.append([f"{w.category.__module__}.{w.category.__qualname__}" for w in caught])
        outcomes.append(outcome)
    return outcomes


def use_test_helpers() -> None:
    """Put ``tests/`` (beside ``mutation/``) on ``sys.path``: its tokenizer builders and
    fixtures' helpers make a probe's inputs as the tests make theirs."""
    tests = str(Path(__file__).resolve().parents[1] / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
