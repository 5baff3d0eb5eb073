"""Which owners' data ``waterdrum score`` and ``waterdrum audit`` query, and who is forgotten
(:class:`DataArguments`): the rows (:func:`load_rows`), each row's owner (:func:`row_owners`)
and each row's query (:meth:`DataArguments.queries`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from waterdrum_hf.generation.prompting import DEFAULT_MAX_FRACTION
from waterdrum_hf.keys import watermark_id_from_text
from waterdrum_hf.scripts.files import read_table, require_columns
from waterdrum_hf.scripts.parser import CliError, positive
from waterdrum_hf.utils.fields import flag

BENCHMARKS = {"waterdrum-ax": "load_waterdrum_ax", "waterdrum-tofu": "load_waterdrum_tofu"}
"""The published benchmarks ``--dataset-name`` names, and their loaders in :mod:`waterdrum_hf.data`."""


@dataclass
class DataArguments:
    """The dataset whose owners are queried, how its rows become queries, and the forget set."""

    _argument_group_name: ClassVar[str] = "data (owners, queries, forget set)"

    dataset_name: str = flag(
        help="waterdrum-ax, waterdrum-tofu, or a local file/folder with an owner id column."
    )
    watermark_tokenizer: str = flag(
        help="Tokenizer that watermarked the data (Llama-3.1-8B-Instruct's for the published "
        "benchmarks; tiny: the built-in model's, which watermarked the demo's data)."
    )
    dataset_config: str | None = flag(
        None, "Configuration of a published benchmark (e.g. forget_01)."
    )
    split: str = flag("full", "Split of a published benchmark.")
    dataset_path: str | None = flag(None, "Local copy of the benchmark's Hub repository.")
    id_column: str = flag("owner_id", "Column with each row's watermark id.")
    text_column: str = flag("text", "Column of texts (completion queries).")
    question_column: str = flag(
        "question", "Column of questions (QA queries), used without a text column."
    )
    forget_ids: list[str] = flag(help="Owners who asked to be forgotten.", factory=list)
    forget_ids_file: str | None = flag(None, "File with one forget id per line.")
    max_rows_per_owner: int | None = flag(None, "Use only each owner's first rows (a quick look).")
    prefix_tokens: int = flag(50, "Query length in tokens.")
    max_fraction: str = flag(
        str(DEFAULT_MAX_FRACTION),
        "Largest share of a text a query takes, so every text leaves something to complete "
        "(texts of 2 x --prefix-tokens tokens or more get the full prefix); 'none': the "
        "paper's rule, a short text is used whole.",
    )

    def __post_init__(self) -> None:
        positive(self.max_rows_per_owner, "--max-rows-per-owner")
        positive(self.prefix_tokens, "--prefix-tokens")
        fraction_or_none(self.max_fraction)

    def queries(self, rows: Any, tokenizer: Any) -> list[str]:
        """One query per row (:func:`waterdrum_hf.generation.prompting.row_queries`) under these options."""
        from waterdrum_hf.generation.prompting import row_queries

        return row_queries(
            rows, tokenizer, text_column=self.text_column, question_column=self.question_column,
            prefix_tokens=self.prefix_tokens, max_fraction=fraction_or_none(self.max_fraction),
        )  # fmt: skip


def fraction_or_none(text: str) -> float | None:
    """``--max-fraction``'s value: a number in (0, 1], or ``none``."""
    if text.strip().lower() == "none":
        return None
    problem = f"--max-fraction: expected a number in (0, 1] or 'none', got {text!r}"
    try:
        value = float(text)
    except ValueError:
        raise CliError(problem) from None
    if not 0 < value <= 1:
        raise CliError(problem)
    return value


def load_rows(data: DataArguments) -> Any:
    """The dataset's rows (each owner's first ``--max-rows-per-owner``), with an owner id column."""
    import waterdrum_hf.data as loaders

    name = data.dataset_name.lower()
    if name in BENCHMARKS:
        loader = getattr(loaders, BENCHMARKS[name])
        kwargs = {"path": data.dataset_path} if data.dataset_path else {}
        config = [data.dataset_config] if data.dataset_config else []
        rows = loader(*config, split=data.split, **kwargs)
    else:
        if data.dataset_config or data.dataset_path:
            raise CliError(
                "--dataset-config and --dataset-path apply to the published benchmarks only"
            )
        rows = read_table(data.dataset_name, what="dataset")
    require_columns(rows, [data.id_column], f"dataset {data.dataset_name!r} (pass --id-column)")
    if data.text_column not in rows.column_names:
        require_columns(
            rows,
            [data.question_column],
            f"dataset {data.dataset_name!r} (no {data.text_column!r} either)",
        )
    return loaders.first_rows_per_owner(rows, data.max_rows_per_owner, id_column=data.id_column)


def row_owners(rows: Any, data: DataArguments) -> list[int]:
    """Each row's owner id, read from ``--id-column`` (one clear error for a bad id)."""
    where = f"column {data.id_column!r}"
    return [watermark_id_from_text(str(v), where) for v in rows[data.id_column]]
