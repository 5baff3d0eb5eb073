"""Old public keyword names that keep working after a rename, with a FutureWarning."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def renamed_keywords(**renames: str) -> Callable[[F], F]:
    """Accept each old keyword name (``old="new"``) for its new name, warning once per call.

    Passing both names is a TypeError: the call would be ambiguous.
    """

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"pass `{new}=` only (`{old}=` is its old name).")
                warnings.warn(
                    f"`{old}=` is now called `{new}=`; the old name will be removed in a future "
                    "release.",
                    FutureWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return call  # type: ignore[return-value]

    return decorate
