"""WaterDrum results in the Hugging Face Hub's formats: the model card's ``model-index`` and the
``.eval_results/`` files, written into a folder or pushed to a model repository.

Two formats, both produced through ``huggingface_hub``'s own objects (no YAML written by hand):

* ``model-index`` in ``README.md``'s metadata: one :class:`huggingface_hub.EvalResult` per value
  (metric type ``waterdrum_<key>``, e.g. ``waterdrum_forget``, ``waterdrum_forget_p_value``),
  put on the card through :class:`huggingface_hub.ModelCard` / ``ModelCardData``. An existing
  card keeps its text and every other result; WaterDrum's earlier values for the same dataset,
  config, split and revision are replaced as a whole (no stale interval survives a re-run).
* ``.eval_results/<dataset>_<config>.yaml``, the Hub's newer per-benchmark results: a list of
  :class:`huggingface_hub.EvalResultEntry` (serialised by ``eval_result_entries_to_yaml``) for
  the published benchmarks only (:data:`BENCHMARKS`), one entry per headline value (``forget``,
  ``retain``, ``separability_auroc``) with task id ``<config>/<key>`` (``forget_10/forget``),
  its interval and p-value in ``notes``. Source of the format: ``huggingface_hub`` 2.4's
  ``_eval_results.py`` (``EvalResultEntry``, ``eval_result_entries_to_yaml``,
  ``constants.EVAL_RESULTS_FOLDER``) and the Hub documentation it cites,
  https://huggingface.co/docs/hub/eval-results and hub-docs' ``eval_results.yaml``. There a
  result joins a leaderboard only when its dataset is registered as a *Benchmark* whose
  ``eval.yaml`` defines the task id; the WaterDrum datasets define none yet, so until their
  authors register these task ids the files are kept in the repository and the model page
  shows the ``model-index`` values. Leaderboards rank higher values first; a lower forget value
  is better unlearning.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from waterdrum_hf.hub_results.config import HubResultsConfig
from waterdrum_hf.scoring import WaterDrumResult

HEADLINE = ("forget", "retain", "separability_auroc")
"""The values an ``.eval_results/`` file holds (one leaderboard task each)."""
TASK_TYPE = "text-generation"
"""The ``model-index`` task: the values are read from the model's generated text."""
TASK_NAME = "Machine unlearning (WaterDrum)"
_SETS = {"forget": "forget set", "retain": "retain set", "overall": "all owners"}
_STATISTICS = {
    "": "value",
    "_ci_low": "interval low",
    "_ci_high": "interval high",
    "_null_mean": "null level (mean without the watermark)",
    "_null_std": "null spread (sd without the watermark)",
    "_p_value": 'p-value of "no watermark"',
}
_CARD = """---
{{ card_data }}
---

# {{ model_name }}

WaterDrum values of this model, written by waterdrum-hf, are in this card's metadata
(`model-index`: the evaluation results on the model page): how much of each data owner's
watermarked training data still shows in the text the model generates. The forget value should
fall to about 0 after unlearning; the retain value should stay where it was on the original
model. Measured on {{ dataset }}.

WaterDrum: Lu et al., "WaterDrum: Watermark-based Data-centric Unlearning Metric", ICLR 2026.
"""


def model_index_results(
    result: WaterDrumResult | Mapping[str, Any], config: HubResultsConfig
) -> list[Any]:
    """One :class:`huggingface_hub.EvalResult` per finite value of ``result`` (its scalars:
    sets' values, intervals, null levels and p-values, the AUROC and its interval)."""
    from huggingface_hub import EvalResult

    scalars = _typed(result).scalars()
    level = scalars.get("confidence")
    rows = []
    for key, name in _metric_names(level).items():
        value = scalars.get(key)
        if isinstance(value, (int, float)) and math.isfinite(value):
            rows.append(
                EvalResult(
                    task_type=TASK_TYPE,
                    task_name=TASK_NAME,
                    dataset_type=config.dataset_id,
                    dataset_name=config.dataset_id.rstrip("/").split("/")[-1],
                    dataset_config=config.dataset_config,
                    dataset_split=config.dataset_split,
                    dataset_revision=config.dataset_revision,
                    metric_type=f"waterdrum_{key}",
                    metric_value=float(value),
                    metric_name=name,
                    metric_config=config.scheme,
                    source_url=config.source_url,
                )
            )
    return rows


def eval_result_entries(
    result: WaterDrumResult | Mapping[str, Any], config: HubResultsConfig
) -> list[Any]:
    """The ``.eval_results/`` entries (:class:`huggingface_hub.EvalResultEntry`) of the
    headline values; none unless ``config`` names a published benchmark and its config."""
    from huggingface_hub import EvalResultEntry

    if not config.benchmark:
        return []
    scalars = _typed(result).scalars()
    entries = []
    for key in HEADLINE:
        value = scalars.get(key)
        if value is None or not math.isfinite(value):
            continue
        entries.append(
            EvalResultEntry(
                dataset_id=config.dataset_id,
                task_id=f"{config.dataset_config}/{key}",
                value=float(value),
                dataset_revision=config.dataset_revision,
                source_url=config.source_url,
                notes=_entry_notes(key, scalars, config.notes),
            )
        )
    return entries


def write_hub_results(
    result: WaterDrumResult | Mapping[str, Any], folder: str | Path, config: HubResultsConfig
) -> list[Path]:
    """Write ``result`` into ``folder`` laid out as a model repository: ``README.md``'s
    ``model-index`` (merged into the card already there, if any) and, for a published
    benchmark, ``.eval_results/<dataset>_<config>.yaml``. Returns the files written."""
    from huggingface_hub import ModelCard, ModelCardData, eval_result_entries_to_yaml
    from huggingface_hub.constants import EVAL_RESULTS_FOLDER, REPOCARD_NAME
    from huggingface_hub.utils import (  # type: ignore[attr-defined]  # not re-exported explicitly
        yaml_dump,
    )

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = model_index_results(result, config)
    if not rows:
        raise ValueError("`result` has no finite value to publish (no set was scored).")
    card_path = folder / REPOCARD_NAME
    model_name = config.model_name or folder.resolve().name
    if card_path.is_file():
        card = ModelCard.load(card_path)
        model_name = config.model_name or card.data.model_name or model_name
    else:
        card = ModelCard.from_template(
            ModelCardData(), template_str=_CARD, model_name=model_name,
            dataset=_dataset_words(config),
        )  # fmt: skip
    card.data.model_name = model_name
    card.data.eval_results = _merged(card.data.eval_results or [], rows)
    card.save(card_path)
    written = [card_path]
    entries = eval_result_entries(result, config)
    if entries:
        stem = f"{config.dataset_id.split('/')[-1].lower()}_{config.dataset_config}"
        path = folder / EVAL_RESULTS_FOLDER / f"{stem}.yaml"
        path.parent.mkdir(exist_ok=True)
        yaml = yaml_dump(eval_result_entries_to_yaml(entries), sort_keys=False)
        path.write_text(yaml, encoding="utf-8")
        written.append(path)
    return written


def push_hub_results(
    result: WaterDrumResult | Mapping[str, Any],
    repo_id: str,
    config: HubResultsConfig,
    *,
    token: str | None = None,
    create_pr: bool = False,
    commit_message: str | None = None,
    api: Any = None,
) -> Any:
    """Upload ``result`` to the model repository ``repo_id`` in one commit: its card
    (``model-index`` merged into the repository's ``README.md``) and the ``.eval_results/``
    file, through ``HfApi.upload_folder``. Returns the ``CommitInfo``.

    ``api`` is the ``huggingface_hub.HfApi`` to use (default ``HfApi(token=token)``);
    ``create_pr`` opens a pull request instead of committing to the main branch (what a
    community contribution does).
    """
    from huggingface_hub import HfApi
    from huggingface_hub.constants import REPOCARD_NAME
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError

    api = api if api is not None else HfApi(token=token)
    with tempfile.TemporaryDirectory(prefix="waterdrum-hub-") as temporary:
        staging = Path(temporary) / repo_id.rstrip("/").split("/")[-1]  # the default model name
        staging.mkdir()
        try:
            card = api.hf_hub_download(repo_id, REPOCARD_NAME, repo_type="model")
            shutil.copyfile(card, staging / REPOCARD_NAME)
        except EntryNotFoundError:
            pass  # a repository without a card gets a new one
        except RepositoryNotFoundError:
            raise ValueError(
                f"The model repository {repo_id!r} does not exist (or this token cannot see it): "
                "push the model first, or create it with huggingface_hub.create_repo."
            ) from None
        write_hub_results(result, staging, config)
        return api.upload_folder(
            repo_id=repo_id,
            folder_path=staging,
            repo_type="model",
            commit_message=commit_message or "Add WaterDrum evaluation results",
            create_pr=create_pr,
            allow_patterns=[REPOCARD_NAME, ".eval_results/*.yaml"],
        )


def _typed(result: WaterDrumResult | Mapping[str, Any]) -> WaterDrumResult:
    if isinstance(result, WaterDrumResult):
        return result
    return WaterDrumResult.from_dict(result)


def _metric_names(level: float | None) -> dict[str, str]:
    """Every scalar a card may hold, by key, with its display name."""
    interval = f"{level:.0%} " if level is not None else ""
    names = {}
    for key, words in _SETS.items():
        for suffix, what in _STATISTICS.items():
            what = f"{interval}{what}" if suffix.startswith("_ci") else what
            names[key + suffix] = f"WaterDrum {words}: {what}"
    names["separability_auroc"] = "WaterDrum separability (AUROC, retain vs forget)"
    names["separability_auroc_ci_low"] = f"WaterDrum separability: {interval}interval low"
    names["separability_auroc_ci_high"] = f"WaterDrum separability: {interval}interval high"
    return names


def _entry_notes(key: str, scalars: Mapping[str, Any], setup: str | None) -> str | None:
    """An entry's interval and verdict in words, then the setup."""
    words = []
    low, high = scalars.get(f"{key}_ci_low"), scalars.get(f"{key}_ci_high")
    if low is not None and high is not None:
        level = scalars.get("confidence")  # unknown for a hand-made result: named without
        words.append(f"{f'{level:.0%} ' if level else ''}interval {low:.4f} to {high:.4f}")
    mean, std = scalars.get(f"{key}_null_mean"), scalars.get(f"{key}_null_std")
    if mean is not None and std is not None:
        words.append(f"null level {mean:.4f} ± {std:.4f}")
    if scalars.get(f"{key}_p_value") is not None:
        words.append(f'p-value of "no watermark" {scalars[f"{key}_p_value"]:.3g}')
    if setup:
        words.append(setup)
    return "; ".join(words) or None


def _merged(existing: list[Any], rows: list[Any]) -> list[Any]:
    """``existing`` results without WaterDrum's earlier ones for the same evaluation, then
    ``rows``."""
    replaced = {row.unique_identifier for row in rows}
    kept = [
        r
        for r in existing
        if not (r.unique_identifier in replaced and str(r.metric_type).startswith("waterdrum_"))
    ]
    return kept + rows


def _dataset_words(config: HubResultsConfig) -> str:
    parts = [f"`{config.dataset_id}`"]
    if config.dataset_config:
        parts.append(f"config `{config.dataset_config}`")
    if config.dataset_split:
        parts.append(f"split `{config.dataset_split}`")
    return ", ".join(parts)
