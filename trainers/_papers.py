"""The paper behind each unlearning method, for the model cards: read from ``papers.bib``
beside this module (one BibTeX entry per paper, with its arXiv id as ``eprint``)."""

from __future__ import annotations

import re
from importlib import resources

from waterdrum_hf.trainers._card import Paper

_ENTRY = re.compile(r"^@\w+\{(?P<key>[^,\s]+),", re.MULTILINE)


def _field(entry: str, name: str) -> str:
    """The braced value of field ``name`` in a BibTeX entry, inner braces and line breaks
    removed (``{LLM}`` reads ``LLM``)."""
    start = re.search(rf"^\s*{name}\s*=\s*\{{", entry, re.MULTILINE)
    if start is None:
        raise KeyError(f"papers.bib: an entry has no {name!r} field")
    depth, at = 1, start.end()
    for at in range(start.end(), len(entry)):
        depth += {"{": 1, "}": -1}.get(entry[at], 0)
        if depth == 0:
            break
    return " ".join(entry[start.end() : at].replace("{", "").replace("}", "").split())


def _read(text: str) -> dict[str, Paper]:
    """BibTeX key -> :class:`Paper` of every entry in ``text``."""
    starts = [match.start() for match in _ENTRY.finditer(text)]
    papers = {}
    for first, last in zip(starts, [*starts[1:], len(text)], strict=True):
        entry = text[first:last].strip()
        key = _ENTRY.match(entry)
        assert key is not None  # each slice starts at a match
        papers[key["key"]] = Paper(_field(entry, "title"), _field(entry, "eprint"), entry)
    return papers


_PAPERS = _read(resources.files("waterdrum_hf.trainers").joinpath("papers.bib").read_text())

GRAD_ASCENT = _PAPERS["jang2023knowledge"]
GRAD_DIFF = _PAPERS["liu2022continual"]
TOFU = _PAPERS["maini2024tofu"]
SCRUB = _PAPERS["kurmanji2023towards"]
NPO = _PAPERS["zhang2024negative"]
SIMNPO = _PAPERS["fan2025simplicity"]
DPO = _PAPERS["rafailov2023direct"]
TASK_ARITHMETIC = _PAPERS["ilharco2023editing"]
