"""Generated blocks of the documentation: text between ``<!-- NAME:start -->`` and
``<!-- NAME:end -->`` markers that a script rewrites from a committed results file, so that
no published number is pasted by hand.

A :class:`Block` names the file, the marker name, the results files it reads and the function
that renders it; :func:`update` rewrites every block (or, with ``check=True``, lists those whose
text differs from what their results files give). ``update_docs.py`` (beside this module) holds the
blocks of README.md, the documentation pages under ``docs/``, the metric card and
``benchmarks/results/README.md``.

A renderer writes its relative links from one folder (``Block.base``: the repository root
unless it says otherwise); :func:`relocate` rewrites them from the page the block sits on, so
one renderer serves a page at any depth and every link resolves from where it is read.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"


def read_results(name: str) -> dict[str, Any]:
    """A timing benchmark's results file, ``benchmarks/results/<name>.json``."""
    data: dict[str, Any] = json.loads((RESULTS / f"{name}.json").read_text())
    return data


def markers(name: str) -> tuple[str, str]:
    """The start and end markers of block ``name``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def read_block(text: str, name: str) -> str:
    """The text between block ``name``'s markers (without the newlines next to them)."""
    start, end = markers(name)
    if text.count(start) != 1 or text.count(end) != 1:
        raise ValueError(f"expected one {start} ... {end} block")
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def replace_block(text: str, name: str, block: str) -> str:
    """``text`` with block ``name``'s content replaced by ``block``."""
    read_block(text, name)  # exactly one block
    start, end = markers(name)
    head, rest = text.split(start, 1)
    return head + start + "\n" + block + "\n" + end + rest.split(end, 1)[1]


LINK = re.compile(r"(\]\()([^)\s#]+)((?:#[^)\s]*)?\))")
"""A Markdown link or image target: ``](target)`` or ``](target#anchor)``."""


def relocate(text: str, base: str, page: str) -> str:
    """``text`` with each relative link target written from folder ``base`` (relative to the
    repository root) rewritten to resolve from file ``page``; URLs and anchors are kept."""

    def move(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            return match.group(0)
        resolved = posixpath.normpath(posixpath.join(base, target))
        moved = posixpath.relpath(resolved, posixpath.dirname(page) or ".")
        return match.group(1) + moved + match.group(3)

    return LINK.sub(move, text)


@dataclass(frozen=True)
class Block:
    """One generated block: where it is, what it reads, how it is written."""

    path: str  # relative to the repository root
    name: str
    sources: tuple[str, ...]  # the committed results files it is rendered from
    render: Callable[[], str]
    base: str = ""  # the folder the renderer's relative links are written from

    def text(self) -> str:
        """The rendering, its links resolving from ``path``: what the page must hold."""
        return relocate(self.render(), self.base, self.path)


def update(blocks: Sequence[Block], check: bool = False) -> list[str]:
    """Rewrite every block from its results files; with ``check``, write nothing and return
    ``path:name`` of each block whose text differs from its rendering."""
    stale = []
    for block in blocks:
        path = ROOT / block.path
        text = path.read_text()
        rendered = block.text()
        if read_block(text, block.name) != rendered:
            stale.append(f"{block.path}:{block.name}")
            if not check:
                path.write_text(replace_block(text, block.name, rendered))
    return stale
