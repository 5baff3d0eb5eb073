"""``waterdrum audit``: does the unlearning hold under relearning and quantization, and the
metric under text attacks?

Perturb each model and score it again on the same queries: relearning fine-tunes it for a few
steps on a slice of the forget owners' texts (the dataset's rows of the forget ids),
quantization stores its weights in 8 or 4 bits (torchao). The model retrained without the
forget set (--retrained), put through the same audits, is the line to beat. Each --attack
NAME:STRENGTH edits every model's completions before verification, scored beside the unedited
ones (--audits with no value for the attacks only). Writes audits.json and a report
(report.json, report.md, audits.png). Each perturbed model's completions are cached in
OUT/cache, so a re-run resumes. Every AuditConfig field is a flag.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from waterdrum_hf.audits import AuditConfig
from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.attack_options import (
    AttackSource,
    check_attack_inputs,
)
from waterdrum_hf.scripts.data_options import DataArguments, load_rows, row_owners
from waterdrum_hf.scripts.files import (
    OverwriteArguments,
    check_finished_report,
    check_output_folder,
)
from waterdrum_hf.scripts.models import load_tokenizer_option, watermark_ids
from waterdrum_hf.scripts.parser import CliError, ScriptParser
from waterdrum_hf.scripts.score import report_settings
from waterdrum_hf.scripts.scoring_arguments import ScoringArguments
from waterdrum_hf.tiny import pretrained_location
from waterdrum_hf.utils.fields import flag

RESUMES = True
"""Each perturbed model's completions are cached in OUT/cache: a re-run resumes."""


@dataclass
class AuditArguments:
    """The models audited, the yardstick, and where the report goes."""

    _argument_group_name: ClassVar[str] = "models and report"

    model_name_or_path: list[str] = field(
        metadata={
            "help": "The models to audit: local folders, Hub ids or tiny (the built-in model), "
            "each optionally named (NAME=MODEL; default: the folder's name).",
            "metavar": "[NAME=]MODEL",
        },
    )
    output_dir: str = flag(help="Folder of the report.")
    retrained: str | None = flag(
        None, "The model retrained without the forget set, audited the same way as the yardstick."
    )
    tokenizer: str | None = flag(None, "The models' tokenizer (default: the first model's own).")
    show_progress: bool | None = flag(None, "Progress bars (default: on a terminal).")


GROUPS = (
    AuditArguments,
    DataArguments,
    AuditConfig,
    AttackSource,
    ScoringArguments,
    OverwriteArguments,
)
"""The script's argument groups, in the order ``main`` takes them."""


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser(GROUPS, prog=prog, description=__doc__)


def main(
    args: AuditArguments,
    data: DataArguments,
    config: AuditConfig,
    attack: AttackSource,
    scoring_args: ScoringArguments,
    existing: OverwriteArguments,
) -> int:
    from waterdrum_hf.audits import AuditQueries, check_audits, run_audits
    from waterdrum_hf.report import write_report

    models = named_models(args.model_name_or_path, args.retrained)
    # Everything that can be wrong with the input is checked before any model is touched.
    rows = load_rows(data)
    owners = row_owners(rows, data)
    forget_ids = watermark_ids(data.forget_ids, data.forget_ids_file, "forget ids", owners)
    if not forget_ids:
        raise CliError("the audits measure the forget set: give --forget-ids or --forget-ids-file")
    forget_texts = relearning_texts(rows, owners, forget_ids, config, data)
    source = check_attack_inputs(config.attacks, attack.attack_source, has_model=True)
    check_audits(config, forget_texts, source or ())
    scoring = scoring_args.scoring_config(len(rows) * config.num_samples)
    watermark_tokenizer = load_tokenizer_option(data.watermark_tokenizer, "watermark tokenizer")
    tokenizer = load_tokenizer_option(args.tokenizer or next(iter(models.values())), "tokenizer")
    check_output_folder(args.output_dir, "--output-dir")
    settings = report_settings(scoring, args, data, config, attack)
    check_finished_report(
        Path(args.output_dir) / "report.json",
        "settings",
        settings,
        overwrite=existing.overwrite,
        ignored=("output_dir", "show_progress"),
    )
    queries = AuditQueries(
        data.queries(rows, tokenizer),
        owners,
        forget_ids,
        forget_texts=forget_texts,
        attack_source=source or (),
    )
    results = run_audits(
        models,
        tokenizer,
        queries,
        config=config,
        scoring=scoring,
        watermark_tokenizer=watermark_tokenizer,
        retrained="retrained" if args.retrained else None,
        cache=stage_cache(Path(args.output_dir) / "cache", models),
        show_progress=args.show_progress,
    )
    before = {name: entries["before"] for name, entries in results.models.items()}
    write_report(
        {
            "models": before,
            "audits": results,
            "settings": settings,
        },
        args.output_dir,
        title="WaterDrum audit report",
    )
    print_table(results)
    print(f"Report: {Path(args.output_dir) / 'report.md'}")
    return 0


def relearning_texts(
    rows: Any, owners: list[int], forget_ids: list[int], config: AuditConfig, data: DataArguments
) -> list[str]:
    """The forget owners' texts that relearning fine-tunes on (none without relearning)."""
    if "relearning" not in config.audits:
        return []
    if data.text_column not in rows.column_names:
        raise CliError(
            f"relearning fine-tunes on the forget owners' texts, but the dataset has no "
            f"{data.text_column!r} column (pass --text-column, or --audits quantization)"
        )
    chosen = set(forget_ids)  # each owns a row (checked when read)
    return [t for t, o in zip(rows[data.text_column], owners, strict=True) if o in chosen]


def print_table(results: Any) -> None:
    """Each model's forget and retain values per audit, and its excess over the retrained."""
    print(f"{'model':>12}  {'audit':>16}  {'forget':>7}  {'retain':>7}  excess over retrained")
    for name, entries in results.models.items():
        for audit, result in entries.items():
            cells = [
                f"{s.value:+7.3f}" if s else f"{'–':>7}" for s in (result.forget, result.retain)
            ]
            excess = results.excess(name, audit) if name != results.retrained else None
            shown = "" if excess is None else f"{excess:+.3f}"
            print(f"{name:>12}  {audit:>16}  {cells[0]}  {cells[1]}  {shown}")


def named_models(specs: list[str], retrained: str | None) -> dict[str, str]:
    """``--model-name-or-path`` (``NAME=MODEL`` or ``MODEL``) and ``--retrained`` as names -> folders or
    Hub ids (``tiny``: the built-in model's folder); names must differ."""
    models: dict[str, str] = {}
    for spec in [*specs, *([f"retrained={retrained}"] if retrained else [])]:
        name, _, model = spec.rpartition("=")
        if not model:
            raise CliError(f"--model-name-or-path {spec!r} names no model")
        name = name or Path(model.rstrip("/")).name or model
        if name in models:
            raise CliError(
                f"two models are named {name!r}: name them apart with NAME=MODEL"
                + (" ('retrained' is --retrained's)" if name == "retrained" else "")
            )
        models[name] = pretrained_location(model, "model")
    return models


def stage_cache(folder: Path, models: dict[str, str]) -> Any:
    """``run_audits``' cache: each perturbed model's completions a stage under ``folder``,
    named by the model's files (name, size, modification time) and the audit's settings."""
    from waterdrum_hf.experiments.stage_cache import StageCache

    stages = StageCache(folder)

    def cache(model: str, audit: str, settings: Any, compute: Any) -> Any:
        identity = {"model": model_identity(models[model]), **settings}
        return stages.cached_json(stages.stage(f"audit-{model}-{audit}", identity), compute)

    return cache


def model_identity(location: str) -> Any:
    """A saved model's folder by its files (a changed model makes new stages); a Hub id as is."""
    folder = Path(location)
    if not folder.is_dir():
        return location
    return [
        [str(path.relative_to(folder)), path.stat().st_size, path.stat().st_mtime_ns]
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    ]


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum audit"))
