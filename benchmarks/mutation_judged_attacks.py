"""Surviving mutants of ``waterdrum_hf/attacks/`` judged equivalent (read by
``mutation_judged.py``): each entry is ``(function, before, after, reason)``, as
``mutation_judged.Judged`` takes them."""

from __future__ import annotations

_MODULE = "waterdrum_hf.hub_results."
_PUSH = _MODULE + "x_push_hub_results"
_WRITE = _MODULE + "x_write_hub_results"

_TEMPORARY = 'with tempfile.TemporaryDirectory(prefix="waterdrum-hub-") as temporary:'
_PREFIX = (
    "the prefix names only the temporary directory, removed before the function returns; "
    "upload_folder is given the folder inside it named after the repository and uploads "
    "paths relative to that folder (allow_patterns too), so the commit, the card's model "
    "name and the return value are the same"
)

JUDGED_ENTRIES: tuple[tuple[str, str | None, str | None, str], ...] = ()
