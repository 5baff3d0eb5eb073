"""The record of the fresh-clone run (``benchmarks/fresh_clone.py``) holds every command the
README and the quickstart print today, each run without an error or marked as not run with
its reason; the README's time is the record's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "benchmarks" / "results" / "fresh_clone.json"


@pytest.fixture(scope="module")
def listed():
    """What the script finds on the pages now (``--list``)."""
    out = subprocess.check_output(
        [sys.executable, str(ROOT / "benchmarks" / "fresh_clone.py"), "--list"], text=True
    )
    return json.loads(out)


def test_the_script_finds_the_pages_commands(listed):
    """Known lines: a bash block's line without its comment, the unlearn line joined across
    its backslash, an inline command; prose names count too, and must be marked not run."""
    commands = [c["command"] for c in listed["commands"]]
    assert "bash dev.sh test" in commands and "bash dev.sh demo" in commands
    assert "pip install torch==2.13.0" in commands
    unlearn = [c for c in commands if c.startswith("waterdrum unlearn npo")]
    assert unlearn == [
        "waterdrum unlearn npo --config examples/recipes/npo.yaml "
        "--model_name_or_path M --dataset_name rows.jsonl --output_dir out "
        "--waterdrum_watermark_tokenizer T"
    ]
    assert "waterdrum demo --help" in commands and "waterdrum demo" in commands
    assert len(commands) == len(set(commands))
    assert set(listed["not_run"]) <= set(commands)  # no stale reason


@pytest.mark.skipif(
    os.environ.get("WATERDRUM_WRITING_FRESH_CLONE_RECORD") == "1",
    reason="run by benchmarks/fresh_clone.py, which is writing the record",
)
def test_the_record_ran_every_command_the_pages_print(listed):
    record = json.loads(RECORD.read_text())
    ran = {r["command"]: r for r in record["commands"]}
    printed = {c["command"] for c in listed["commands"]}
    assert set(ran) | set(record["not_run"]) == printed, "rerun benchmarks/fresh_clone.py"
    assert not set(ran) & set(record["not_run"])
    assert record["not_run"] == {c: r for c, r in listed["not_run"].items() if c in printed}
    assert [c for c, r in ran.items() if r["returncode"] != 0] == []
    demo = ran["bash dev.sh demo"]
    assert 0 < demo["install_seconds"] < demo["seconds"]


def test_the_readme_quotes_the_records_times():
    record = json.loads(RECORD.read_text())
    ran = {r["command"]: r for r in record["commands"]}
    readme = (ROOT / "README.md").read_text()
    demo = ran["bash dev.sh demo"]
    assert f"`bash dev.sh demo` took {demo['seconds'] / 60:.1f} minutes" in readme
    assert f"{demo['install_seconds'] / 60:.1f} of them installing" in readme
    assert f"test` {ran['bash dev.sh test']['seconds'] / 60:.1f};" in readme
    assert f"commit {record['commit'][:7]}" in readme
