"""Input checks of the baseline metrics, beyond :mod:`waterdrum_hf.utils.validation`.

A baseline fed the wrong shape (one answer list short, ``k`` given as a percentage, a NaN
log-probability) would return a plausible number rather than fail, so each public function
checks its arrays here and raises an error that names the argument.
"""

from __future__ import annotations

import numbers
from collections.abc import Sized
from typing import Any

import numpy as np


def check_same_length(first: Sized, second: Sized, names: str) -> None:
    """``first`` and ``second`` (named ``"a and b"`` in ``names``) have as many entries."""
    one, two = names.split(" and ")
    if len(first) != len(second):
        raise ValueError(f"`{one}` has {len(first)} entries but `{two}` has {len(second)}.")


def check_fraction(k: object) -> float:
    """``k``, the share of tokens Min-k% keeps, as a float in (0, 1]."""
    if isinstance(k, bool) or not isinstance(k, numbers.Real):
        raise TypeError(f"`k` must be a number in (0, 1], got {type(k).__name__}.")
    share = float(k)
    if not 0 < share <= 1:
        raise ValueError(f"`k` must be in (0, 1] (a share, not a percentage), got {k!r}.")
    return share


def finite_array(values: Any, name: str, *, ndim: int = 1) -> np.ndarray:
    """``values`` as a float64 array of ``ndim`` dimensions holding one or more numbers, all
    finite."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be an array of numbers.") from None
    if array.ndim != ndim:
        raise ValueError(f"`{name}` must be {ndim}-dimensional, got shape {array.shape}.")
    if array.size == 0:
        raise ValueError(f"`{name}` is empty: pass at least one value.")
    if not np.isfinite(array).all():
        raise ValueError(f"`{name}` holds {int((~np.isfinite(array)).sum())} NaN/inf values.")
    return array


def token_id_array(values: Any, name: str) -> np.ndarray:
    """``values`` as a one-dimensional int64 array of token ids (>= 0)."""
    array = np.asarray(values)
    if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise TypeError(f"`{name}` must be a one-dimensional sequence of integer token ids.")
    if (array < 0).any():
        raise ValueError(f"`{name}` holds negative token ids.")
    return array.astype(np.int64)
