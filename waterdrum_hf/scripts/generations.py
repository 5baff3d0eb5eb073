"""Saved completions: ``generations.jsonl`` (what ``waterdrum score`` sampled, and what it
verified after ``--attack``: ``attacked.jsonl``) and lm-eval samples files, read back by
``waterdrum score --generations``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from waterdrum_hf.scripts.parser import CliError


def write_generations(path: Path, owners: list[int], completions: list[list[str]]) -> None:
    """Each query's samples as a line of JSON with its owner's display name (never the id):
    what ``--generations`` reads back."""
    from waterdrum_hf.scoring import owner_display_names

    names = owner_display_names(owners, None)
    with open(path, "w") as handle:
        for owner, samples in zip(owners, completions, strict=True):
            handle.write(json.dumps({"owner": names[owner], "samples": samples}) + "\n")


class Generations(NamedTuple):
    """Saved samples: per query, its samples; with an lm-eval samples file also the dataset
    row (lm-eval's ``doc_id``) and owner index of each query."""

    completions: list[list[str]]
    rows: list[int] | None = None
    owner_indices: list[int] | None = None


def read_generations(path: str) -> Generations:
    """A ``generations.jsonl`` of ``waterdrum score``, or an lm-eval samples file
    (``samples_<task>_<date>.jsonl``) of a WaterDrum task, as it was written."""
    from waterdrum_hf.lm_eval_tasks import read_samples
    from waterdrum_hf.utils.files import read_json_lines

    file = Path(path)
    if file.is_dir():
        raise CliError(f"generations file {path!r} is a folder; give its generations.jsonl")
    if not file.is_file():
        raise CliError(f"generations file {path!r} does not exist")
    try:
        records = read_json_lines(file)
        if records and "doc_id" in records[0]:
            rows, owner_indices, completions = read_samples(file)
            return Generations(completions, rows, owner_indices)
        return Generations([record["samples"] for record in records])
    except (ValueError, KeyError, TypeError):
        raise CliError(
            f"generations file {path!r} is neither a generations.jsonl written by waterdrum "
            "score nor an lm-eval samples file of a WaterDrum task"
        ) from None


def generations_owners(generations: Generations, owners: list[int], path: str) -> list[int]:
    """The owner id of each saved query, from the dataset rows' ids ``owners``: the rows in
    order, or, for an lm-eval samples file, the documents' rows, whose owner indices must
    match the dataset's (the same rows the task was built from)."""
    from waterdrum_hf.lm_eval_tasks import owner_indices

    if generations.rows is None:
        if len(generations.completions) != len(owners):
            raise CliError(
                f"generations file {path!r} has {len(generations.completions)} queries but the "
                f"dataset has {len(owners)} rows"
            )
        return owners
    indices = owner_indices(owners)
    if max(generations.rows) >= len(owners) or any(
        indices[row] != index
        for row, index in zip(generations.rows, generations.owner_indices or [], strict=True)
    ):
        raise CliError(
            f"samples file {path!r} was not made from this dataset's rows: give the task's "
            "dataset, config, split and max rows per owner"
        )
    return [owners[row] for row in generations.rows]
