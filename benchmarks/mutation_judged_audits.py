"""Surviving mutants of ``waterdrum_hf/audits/`` judged equivalent (read by
``mutation_judged.py``): each entry is ``(function, before, after, reason)``, as
``mutation_judged.Judged`` takes them."""

from __future__ import annotations

JUDGED_ENTRIES: tuple[tuple[str | None, ...], ...] = ()
