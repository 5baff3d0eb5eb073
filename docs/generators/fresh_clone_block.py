"""The README's sentence on the fresh-clone run, from the record ``benchmarks/fresh_clone.py``
writes (``benchmarks/results/fresh_clone.json``)."""

from __future__ import annotations

import json

from doc_blocks import RESULTS

RECORD = RESULTS / "fresh_clone.json"


def render_fresh_clone() -> str:
    """The README's sentence on the fresh clone's run, from ``fresh_clone.json``."""
    results = json.loads(RECORD.read_text(encoding="utf-8"))
    ran = {r["command"]: r for r in results["commands"]}
    demo, test = ran["bash dev.sh demo"], ran["bash dev.sh test"]
    failed = [c for c, r in ran.items() if r["returncode"] != 0]
    others = len(ran) - 2
    outcome = (
        f"each of the {others} other commands of this README and the quickstart ran as printed too"
        if not failed
        else f"these failed: {', '.join(f'`{c}`' for c in failed)}"
    )
    return (
        f"On a fresh clone (commit {results['commit'][:7]}, {results['cpu_count']} CPU cores, "
        f"{results['processor']}), `bash dev.sh demo` took {demo['seconds'] / 60:.1f} minutes, "
        f"{demo['install_seconds'] / 60:.1f} of them installing `./.venv`, and `bash dev.sh "
        f"test` {test['seconds'] / 60:.1f}; {outcome} ({len(results['not_run'])} are names or "
        "placeholders, or cannot run here, and the record says why: "
        "[fresh_clone.json](benchmarks/results/fresh_clone.json), written by `python "
        "benchmarks/fresh_clone.py`)."
    )
