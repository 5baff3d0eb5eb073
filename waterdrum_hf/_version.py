"""The installed version of waterdrum-hf, read from package metadata (pyproject.toml is the one
source). Read at call time so that cache fingerprints follow an upgrade in a running process."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def library_version() -> str:
    """``waterdrum-hf``'s installed version; ``0+unknown`` for a source tree never installed."""
    try:
        return version("waterdrum-hf")
    except PackageNotFoundError:
        return "0+unknown"
