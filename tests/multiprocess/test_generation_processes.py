"""generate() on two processes: queries split, every answer gathered on every process."""

from __future__ import annotations

import pytest

from waterdrum_hf import generate


@pytest.mark.end_to_end
def test_two_processes_split_the_queries_and_all_get_every_answer(
    tiny_model, tmp_path, run_two_processes
):
    """Each process samples its contiguous share with seed + rank; all get the whole result."""
    import json
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "programs" / "distributed_generate.py"
    out = tmp_path / "seen.json"
    run_two_processes(script, out)
    report = json.loads(out.read_text())
    model, tokenizer = tiny_model
    queries = ["The class", "A lambda", "The import", "Exceptions are", "A module"]
    kwargs = {"num_samples": 2, "max_new_tokens": 6}
    expected = generate(model, tokenizer, queries[:3], seed=0, **kwargs) + generate(
        model, tokenizer, queries[3:], seed=1, **kwargs
    )
    assert report["processes"] == 2
    for seen in report["seen"]:
        assert seen["together"] == expected
        # A wrapped model without an accelerator: unwrapped, all queries on each process.
        assert seen["everything"] == generate(model, tokenizer, queries, seed=0, **kwargs)
