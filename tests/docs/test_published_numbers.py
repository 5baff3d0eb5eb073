"""Every number we publish comes from a committed results file.

Two kinds of check: a generated block (between ``<!-- NAME:start/end -->`` markers) must read
exactly what ``docs/generators/update_docs.py`` renders from its results files today, so a hand
edit of a number, or a results file changed without re-rendering, fails here; and the prose
quoted from the reproduction runs, which is not generated, must have each of its numbers in
the results file it cites (equal, or equal once that file's value is rounded to the same
decimals).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "generators"))

import doc_blocks  # noqa: E402
import update_docs  # noqa: E402

NUMBER = re.compile(r"(?<![\w.])[+-]?\d[\d,]*(?:\.\d+)?")


@pytest.mark.parametrize("block", update_docs.BLOCKS, ids=lambda b: f"{b.path}:{b.name}")
def test_each_generated_block_reads_what_its_results_files_give(block):
    for source in block.sources:
        assert (ROOT / source).is_file(), f"{source} is not committed"
    text = (ROOT / block.path).read_text()
    assert doc_blocks.read_block(text, block.name) == block.text(), (
        f"{block.path}:{block.name} differs from its results: run python docs/generators/update_docs.py"
    )


def test_a_changed_results_number_changes_its_block(tmp_path, monkeypatch):
    """The check above can fail: the audits block follows audits.json (here the first model
    whose value at 4 bits lies inside its interval before moves outside it, so the prose must
    start naming it)."""
    audits = json.loads((update_docs.DEMO / "audits.json").read_text())
    before = update_docs.render_audits()
    name, model = next(
        (name, m)
        for name, m in audits["models"].items()
        if m["before"]["forget_ci_low"] <= m["int4"]["forget"] <= m["before"]["forget_ci_high"]
    )
    model["int4"]["forget"] = model["before"]["forget_ci_high"] + 0.1
    monkeypatch.setattr(update_docs, "_audits", lambda: audits)
    after = update_docs.render_audits()
    assert before != after
    assert f"{name} at 4 bits" not in before and f"{name} at 4 bits" in after


def test_the_quantization_prose_names_every_value_outside_its_interval():
    """The audits guide's claim is the table's: each value after quantization outside its
    interval before is named, and none that is inside."""
    audits = json.loads((update_docs.DEMO / "audits.json").read_text())
    readme = doc_blocks.read_block((ROOT / update_docs.AUDITS).read_text(), "demo-audits")
    for name, model in audits["models"].items():
        low, high = model["before"]["forget_ci_low"], model["before"]["forget_ci_high"]
        for audit, bits in (("int8", 8), ("int4", 4)):
            outside = not low <= model[audit]["forget"] <= high
            assert (f"{name} at {bits} bits (" in readme) == outside, (name, bits)


def test_blocks_are_found_and_replaced_by_their_markers():
    text = "a\n<!-- x:start -->\nold\n<!-- x:end -->\nb"
    assert doc_blocks.read_block(text, "x") == "old"
    assert (
        doc_blocks.replace_block(text, "x", "new") == "a\n<!-- x:start -->\nnew\n<!-- x:end -->\nb"
    )
    with pytest.raises(ValueError, match="one <!-- y:start -->"):
        doc_blocks.read_block(text, "y")


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "").lstrip("+") for n in NUMBER.findall(text)}


def _decimals(number: str) -> int:
    return len(number.partition(".")[2])


def _cited(number: str, available: set[str]) -> bool:
    """``number`` is in the file, or is one of its numbers rounded to ``number``'s decimals."""
    places, value = _decimals(number), float(number)
    return any(
        _decimals(f) >= places and abs(float(f) - value) <= 0.5 * 10**-places + 1e-12
        for f in available
    )


def _section(path: str, start: str, end: str | None) -> str:
    text = (ROOT / path).read_text()
    begin = text.index(start)
    return text[begin : text.index(end, begin) if end else len(text)]


#: Numbers of the quoted prose that are names or counts, not measurements: model names
#: (Llama-3.1-8B), the built-in tokenizer's vocabulary, and models counted from the settings
#: (11 shares k x 3 seeds = 33 per setting, 99 for three; 7 methods x 3 settings = 21; 6
#: shares x 3 seeds x 4 schemes = 72).
NOT_MEASURED = {"3.1", "8", "4096", "33", "99", "21", "72"}

REPRODUCTION, SCHEMES = "reproduction/results.md", "schemes/results.md"
SUBSTITUTION, NULLS = "substitution/results.md", "null_agreement.md"
#: The guides' quoted prose (the README's before) is checked number by number with its label
#: (which study, row and column) in tests/published/test_quoted_statistics.py; these sections only by
#: membership.
QUOTED = [
    (update_docs.METRIC, "Measured against 2,000 random keys", "the measurements are in", [NULLS]),
    (
        update_docs.METRIC,
        "**Many owners at once.**",
        "and the report say so",
        ["owner_detection_error.md"],
    ),
    (update_docs.RESULTS_README, "## Watermark schemes compared", "## The paper's", [SCHEMES]),
    (
        update_docs.RESULTS_README,
        "## The paper's claims",
        None,
        [REPRODUCTION, SUBSTITUTION, "duplicate_fidelity/results.md", "reproduction_qa/results.md"],
    ),
]


@pytest.mark.parametrize(("path", "start", "end", "cited"), QUOTED, ids=lambda v: str(v)[:30])
def test_quoted_numbers_are_in_the_results_they_cite(path, start, end, cited):
    available: set[str] = set()
    for name in cited:
        available |= _numbers((ROOT / "benchmarks/results" / name).read_text())
    quoted = _numbers(_section(path, start, end)) - NOT_MEASURED
    missing = sorted(n for n in quoted if not _cited(n, available))
    assert not missing, f"{path}: {missing} are in none of {cited}"
