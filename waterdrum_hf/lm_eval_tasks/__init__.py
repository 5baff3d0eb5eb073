"""WaterDrum as lm-evaluation-harness tasks: the task folder (package data) and its hooks.

``lm_eval --include_path $(waterdrum lm-eval-tasks) --tasks waterdrum_ax ...`` runs the
paper's evaluation with any lm-eval backend (``vllm`` is the fast one): each query is sampled
``repeats: 10`` times (up to 200 new tokens, temperature 1, top-p 1, no top-k, no stop but the
model's end of sequence), a ``take_first_k`` filter keeps all ten samples, and the aggregation
is :func:`waterdrum_hf.scoring.waterdrum_result` over all queries at once.

Documents take the owners in turn (each owner's first row, then each one's second, ...), so
``--limit N`` keeps every owner once ``N`` reaches the number of owners.

Keys never reach lm-eval's logs. ``--log_samples`` writes whole documents, so a document holds
its prompt (``query``), an opaque owner index (``owner``: owners numbered by first appearance
in the data), its position in the data (``row``) and ``source``, a JSON description of where
the rows and their ids come from (a published benchmark's layout, whose ids are public, or a
local data file's path) and how they are scored. The aggregation reads that source again to turn indices into ids; the per-document
items lm-eval logs under each metric name print as a short summary, never as ids.

Settings come from the task's ``metadata`` (the YAML's, updated by ``--metadata '{...}'`` and
by ``--model_args``, whose ``pretrained``/``tokenizer`` name the tokenizer the prompts are
built with), and, for the file-naming ones, from environment variables.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from waterdrum_hf.generation.prompting import DEFAULT_MAX_FRACTION
from waterdrum_hf.utils.files import check_local_location

BENCHMARKS = ("waterdrum-ax", "waterdrum-tofu")
"""The published benchmarks a task can name in its ``benchmark`` metadata."""

WATERMARK_TOKENIZER = "meta-llama/Llama-3.1-8B-Instruct"
"""The tokenizer that watermarked the published benchmarks (their default)."""

ENVIRONMENT = {
    "data_file": "WATERDRUM_DATA_FILE",
    "forget_ids_file": "WATERDRUM_FORGET_IDS_FILE",
    "watermark_tokenizer": "WATERDRUM_WATERMARK_TOKENIZER",
}
"""The settings an environment variable may give, where the task's metadata does not."""

METRICS = ("forget", "retain", "separability_auroc", "num_skipped")
"""What the tasks report: the flat result's values of the same names."""


def tasks_path() -> Path:
    """The folder of the task YAML files, for lm-eval's ``--include_path``."""
    return Path(str(resources.files(__name__))).resolve()


@dataclass(frozen=True)
class Source:
    """Where a task's rows and their owners' ids come from, and how they are scored; holds
    no id (it is written into every logged document)."""

    benchmark: str | None = None
    config: str | None = None
    split: str = "full"
    dataset_path: str | None = None
    data_file: str | None = None
    forget_ids_file: str | None = None
    id_column: str = "owner_id"
    text_column: str = "text"
    question_column: str = "question"
    max_rows_per_owner: int | None = None
    watermark_tokenizer: str | None = None
    scoring: str | None = None
    """How the values are read: :meth:`WaterDrumConfig.to_json` text of the metadata's
    ``scoring``, the flat settings the ``evaluate`` module takes (e.g. ``{"null":
    "empirical", "null_keys": 100}``); ``None``: the defaults."""

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> Source:
        """The source a task's metadata describes (environment variables fill in the
        file-naming settings it leaves out); relative paths become absolute."""
        given = {
            key: metadata[key] for key in cls.__dataclass_fields__ if metadata.get(key) is not None
        }
        for key, variable in ENVIRONMENT.items():
            if key not in given and os.environ.get(variable):
                given[key] = os.environ[variable]
        for key in ("data_file", "forget_ids_file"):
            if key in given:
                given[key] = str(Path(given[key]).expanduser().resolve())
        if "dataset_path" in given:  # a local copy (it must exist), or a Hub id
            check_local_location(str(given["dataset_path"]), "dataset_path")
            mirror = Path(str(given["dataset_path"])).expanduser()
            if mirror.exists():
                given["dataset_path"] = str(mirror.resolve())
        if "max_rows_per_owner" in given:
            given["max_rows_per_owner"] = int(given["max_rows_per_owner"])
        if "scoring" in given:  # checked now, kept as JSON text (documents hold the source)
            given["scoring"] = _scoring_config(given["scoring"]).to_json()
        if "benchmark" in given:
            given.setdefault("watermark_tokenizer", WATERMARK_TOKENIZER)
        source = cls(**given)
        source.check()
        return source

    def check(self) -> None:
        """Refuse a source that cannot give ids, with the setting to add."""
        if self.benchmark is not None:
            if self.benchmark not in BENCHMARKS:
                raise ValueError(f"benchmark must be one of {BENCHMARKS}, got {self.benchmark!r}")
            if self.config is None or "forget_" not in self.config:
                raise ValueError(
                    f"{self.benchmark}: give a forget config (forget_01, ... or "
                    f"unwatermarked_forget_01, ...), got {self.config!r}"
                )
            return
        for key in ("data_file", "forget_ids_file"):
            if getattr(self, key) is None:
                raise ValueError(
                    f"the local WaterDrum task needs {key}: pass --metadata "
                    f'\'{{"{key}": "PATH"}}\' or set {ENVIRONMENT[key]}'
                )
        if self.watermark_tokenizer is None:
            raise ValueError(
                "the local WaterDrum task needs watermark_tokenizer (the tokenizer that "
                "watermarked the data): pass it in --metadata or set "
                f"{ENVIRONMENT['watermark_tokenizer']}"
            )

    def watermark_tokenizer_location(self) -> str:
        """What loads the watermark tokenizer: its name or folder (``tiny``: the built-in
        model's, resolved here)."""
        from waterdrum_hf.tiny import pretrained_location

        assert self.watermark_tokenizer is not None  # check() refuses a source without one
        return pretrained_location(self.watermark_tokenizer, "watermark_tokenizer")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Source:
        return cls(**json.loads(text))

    def rows(self) -> Any:
        """The rows as a ``datasets.Dataset`` with the id column (each owner's first
        ``max_rows_per_owner`` rows)."""
        from datasets import Dataset

        import waterdrum_hf.data as data

        if self.benchmark is not None:
            rows = self._benchmark(self.split)
        else:
            from waterdrum_hf.utils.files import read_json_lines

            assert self.data_file is not None  # check() refuses a local source without it
            records = read_json_lines(self.data_file)
            if not records:
                raise ValueError(f"data file {self.data_file!r} has no rows")
            rows = Dataset.from_list(records)
            if self.id_column not in rows.column_names:
                raise ValueError(
                    f"data file {self.data_file!r} has no column {self.id_column!r} (give "
                    "id_column in --metadata)"
                )
        return data.first_rows_per_owner(rows, self.max_rows_per_owner, id_column=self.id_column)

    def owner_ids(self) -> list[int]:
        """The ids of the owners in order of first appearance (owner index -> id)."""
        from waterdrum_hf.keys import check_watermark_id

        column = self.rows()[self.id_column]
        ids = [check_watermark_id(value, f"column {self.id_column!r}") for value in column]
        return list(dict.fromkeys(ids))

    def forget_ids(self) -> list[int]:
        """The forget set's ids: a benchmark's forget split's owners (public), or the ids of
        the forget ids file."""
        if self.benchmark is not None:
            return sorted(set(self._benchmark("forget")["owner_id"]))
        from waterdrum_hf.keys import read_watermark_ids

        assert self.forget_ids_file is not None  # check() refuses a local source without it
        return read_watermark_ids(self.forget_ids_file, "forget ids")

    def _benchmark(self, split: str) -> Any:
        import waterdrum_hf.data as data

        load = (
            data.load_waterdrum_ax if self.benchmark == "waterdrum-ax" else data.load_waterdrum_tofu
        )
        kwargs = {"path": self.dataset_path} if self.dataset_path else {}
        assert self.config is not None  # check() refuses a benchmark without its config
        return load(self.config, split=split, **kwargs)


def owner_indices(ids: Sequence[int]) -> list[int]:
    """Each row's owner index: owners numbered 0, 1, ... in order of first appearance."""
    index: dict[int, int] = {}
    return [index.setdefault(owner, len(index)) for owner in ids]


def interleave_by_owner(owners: Sequence[int]) -> list[int]:
    """Row positions that take the owners in turn: each owner's first row (owners in order of
    first appearance), then each one's second, and so on; an owner whose rows run out drops
    out. Any prefix of the order holds as many owners as it can."""
    rows_of: dict[int, list[int]] = {}
    for row, owner in enumerate(owners):
        rows_of.setdefault(owner, []).append(row)
    turns = itertools.zip_longest(*rows_of.values())
    return [row for turn in turns for row in turn if row is not None]


def documents(**metadata: Any) -> Any:
    """The task's documents (lm-eval's ``custom_dataset``): ``query``, ``owner`` (index),
    ``row`` (position in the data) and ``source`` per row, owners taken in turn
    (:func:`interleave_by_owner`, so that ``--limit`` keeps every owner), in a ``DatasetDict``
    with one split, ``test``.

    A row with a text column gets a completion query (its first ``prefix_tokens`` tokens,
    :func:`waterdrum_hf.generation.prompting.completion_queries`); otherwise its question in the model's
    chat format (:func:`waterdrum_hf.generation.prompting.qa_queries`), both with the evaluated model's
    tokenizer (``tokenizer`` or ``pretrained`` in the metadata; lm-eval adds ``--model_args``).
    """
    from datasets import Dataset, DatasetDict
    from transformers import AutoTokenizer

    from waterdrum_hf.generation.prompting import row_queries
    from waterdrum_hf.keys import check_watermark_id
    from waterdrum_hf.scoring.verification import load_tokenizer
    from waterdrum_hf.tiny import pretrained_location

    source = Source.from_metadata(metadata)
    name = metadata.get("tokenizer") or metadata.get("pretrained")
    if not isinstance(name, str):
        raise ValueError(
            "the WaterDrum tasks build their prompts with the evaluated model's tokenizer: "
            "pass --model_args pretrained=... (or tokenizer=... in --metadata)"
        )
    tokenizer = AutoTokenizer.from_pretrained(
        pretrained_location(name, "model's tokenizer"),
        revision=metadata.get("revision"),
        trust_remote_code=bool(metadata.get("trust_remote_code", False)),
    )
    rows = source.rows()
    ids = [check_watermark_id(v, f"column {source.id_column!r}") for v in rows[source.id_column]]
    owners = owner_indices(ids)
    order = interleave_by_owner(owners)
    rows = rows.select(order)
    queries = row_queries(
        rows, tokenizer, text_column=source.text_column, question_column=source.question_column,
        prefix_tokens=int(metadata.get("prefix_tokens", 50)),
        max_fraction=metadata.get("max_fraction", DEFAULT_MAX_FRACTION),
    )  # fmt: skip
    # What the aggregation needs is checked now, not after hours of sampling.
    source.forget_ids()
    load_tokenizer(source.watermark_tokenizer_location())
    docs = {
        "query": queries,
        "owner": [owners[row] for row in order],
        "row": order,
        "source": [source.to_json()] * len(queries),
    }
    return DatasetDict({"test": Dataset.from_dict(docs)})


@dataclass(frozen=True)
class QuerySamples:
    """One document's samples and its owner index: the item every WaterDrum metric gets from
    :func:`process_results`. Prints as a summary (lm-eval logs items by ``str``)."""

    source: str
    owner: int
    samples: tuple[str, ...]

    def __str__(self) -> str:
        return f"{len(self.samples)} samples of owner index {self.owner}"


def process_results(doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, QuerySamples]:
    """lm-eval's per-document hook: the document's samples (what the filter kept) as the item
    of every metric; the values are computed over all documents by the aggregations."""
    samples = results[0]
    if isinstance(samples, str):  # a filter that keeps one sample
        samples = [samples]
    item = QuerySamples(doc["source"], int(doc["owner"]), tuple(samples))
    return dict.fromkeys(METRICS, item)


@functools.lru_cache(maxsize=2)
def _scalars(items: tuple[QuerySamples, ...]) -> dict[str, float | int]:
    """:func:`waterdrum_result`'s flat scalars over all queries (computed once for the four
    aggregations of a task)."""
    from waterdrum_hf.config import WaterDrumConfig
    from waterdrum_hf.scoring import waterdrum_result

    sources = {item.source for item in items}
    if len(sources) != 1:
        raise ValueError("the items come from several WaterDrum tasks; aggregate them apart")
    check_repeats_differ(items)
    source = Source.from_json(sources.pop())
    ids = source.owner_ids()
    if any(item.owner >= len(ids) for item in items):
        raise ValueError(
            "a document's owner index has no owner in the data: the data changed since the "
            "documents were built"
        )
    result = waterdrum_result(
        [list(item.samples) for item in items],
        [ids[item.owner] for item in items],
        source.watermark_tokenizer_location(),
        config=WaterDrumConfig.from_json(source.scoring) if source.scoring else None,
        forget_ids=source.forget_ids(),
    )
    return result.scalars()


def check_repeats_differ(items: Sequence[QuerySamples]) -> None:
    """Refuse samples whose repeats are all copies of one completion: a backend that gave every
    repeat the same seed. lm-eval's ``local-completions`` sends ``seed=1234`` with every
    request, and a seeded server (vLLM) answers the ten repeats of a query alike; the value
    would then read one sample per query as ten."""
    repeated = [item.samples for item in items if len(item.samples) > 1]
    if repeated and all(samples[0] and len(set(samples)) == 1 for samples in repeated):
        raise ValueError(
            f"every query's {len(repeated[0])} samples are one completion repeated: the backend "
            "sampled each repeat with the same seed (lm-eval's local-completions sends "
            "seed=1234 with every request). Add --gen_kwargs seed=None, or sample with "
            "`waterdrum score --engine openai` (a seed of its own per query)."
        )


def _scoring_config(scoring: Any) -> Any:
    """The :class:`~waterdrum_hf.WaterDrumConfig` of a task's ``scoring``: the flat settings
    (:meth:`~waterdrum_hf.WaterDrumConfig.from_keywords`), as a mapping or its JSON text."""
    from waterdrum_hf.config import WaterDrumConfig

    settings = json.loads(scoring) if isinstance(scoring, str) else scoring
    if not isinstance(settings, Mapping):
        raise TypeError(
            'The task\'s `scoring` must be a mapping of scoring settings, e.g. {"null": '
            f'"empirical", "null_keys": 100}}, got {type(settings).__name__}.'
        )
    return WaterDrumConfig.from_keywords(settings)


def _aggregation(name: str) -> Any:
    def aggregate(items: Sequence[QuerySamples]) -> float:
        return _scalars(tuple(items)).get(name, math.nan)

    aggregate.__name__ = aggregate.__qualname__ = f"aggregate_{name}"
    aggregate.__doc__ = f"lm-eval's aggregation of ``{name}``: the WaterDrum result's value."
    return aggregate


aggregate_forget = _aggregation("forget")
aggregate_retain = _aggregation("retain")
aggregate_separability_auroc = _aggregation("separability_auroc")
aggregate_num_skipped = _aggregation("num_skipped")


def read_samples(path: str | os.PathLike[str]) -> tuple[list[int], list[int], list[list[str]]]:
    """An lm-eval samples file (``samples_<task>_<date>.jsonl``) of a WaterDrum task, as
    written: each document's row in the data (its ``row``), owner index and samples, in row
    order."""
    from waterdrum_hf.utils.files import read_json_lines

    records = read_json_lines(path)
    try:
        parsed = sorted(
            (
                int(r["doc"]["row"]),
                int(r["doc"]["owner"]),
                [str(s) for s in r["filtered_resps"][0]],
            )
            for r in records
        )
    except (KeyError, TypeError, IndexError, ValueError, AttributeError):
        raise ValueError(
            f"{str(path)!r} is not an lm-eval samples file of a WaterDrum task"
        ) from None
    rows = [row for row, _, _ in parsed]
    if len(set(rows)) != len(rows):
        raise ValueError(
            f"{str(path)!r} holds a document more than once (one samples file per filter)"
        )
    return rows, [owner for _, owner, _ in parsed], [samples for _, _, samples in parsed]
