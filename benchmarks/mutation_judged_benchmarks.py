"""Surviving mutants of the benchmark renderers and studies (``benchmarks/*_block.py``,
``doc_blocks.py``, ``capacity.py``, ``dilution.py``, ``robustness.py``) judged equivalent or not
checked (read by ``mutation_judged.py``): each entry is ``(function, before, after, reason)``
or ``(function, before, after, reason, category)``, as ``mutation_judged.Judged`` takes them."""

from __future__ import annotations

JUDGED_ENTRIES: tuple[tuple[str | None, ...], ...] = ()
