"""``waterdrum audit``: does the unlearning hold under relearning and quantization, and the
metric under text attacks?"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waterdrum_hf.scripts.attack_options import ATTACK_READING, add_attack_options, check_attack_inputs
from waterdrum_hf.scripts.files import check_output_folder
from waterdrum_hf.scripts.models import load_tokenizer_option, watermark_ids
from waterdrum_hf.cli.parsing import CliError, add_no_progress, config_from_options, config_parser
from waterdrum_hf.cli.score import add_data_options, load_rows, make_queries, row_owners
from waterdrum_hf.cli.scoring_options import add_scoring_options, scoring_config
from waterdrum_hf.tiny import pretrained_location

DESCRIPTION = (
    "Perturb each model and score it again on the same queries: relearning fine-tunes it for a "
    "few steps on a slice of the forget owners' texts (the dataset's rows of the forget ids), "
    "quantization stores its weights in 8 or 4 bits (torchao). The model retrained without the "
    "forget set (--retrained), put through the same audits, is the line to beat. Each --attack "
    "NAME:STRENGTH edits every model's completions before verification, scored beside the "
    "unedited ones (--audits '' for the attacks only). Writes "
    "audits.json and a report (report.json, report.md, audits.png). Each perturbed model's "
    "completions are cached in OUT/cache, so a re-run resumes. Every AuditConfig field is a "
    "flag."
)


def add_parser(commands: Any) -> argparse.ArgumentParser:
    from waterdrum_hf.audits import AuditConfig

    parser = commands.add_parser(
        "audit", help="relearning, quantization and text-attack audits of unlearned models",
        description=DESCRIPTION,
        parents=[config_parser(AuditConfig, readings={"attacks": ATTACK_READING})],
    )  # fmt: skip
    parser.add_argument(
        "--model",
        nargs="+",
        required=True,
        metavar="[NAME=]MODEL",
        help="the models to audit: local folders, Hub ids or tiny (the built-in model), each "
        "optionally named (NAME=MODEL; default: the folder's name)",
    )
    parser.add_argument(
        "--retrained",
        help="the model retrained without the forget set, audited the same way as the yardstick",
    )
    parser.add_argument(
        "--tokenizer", help="the models' tokenizer (default: the first model's own)"
    )
    add_data_options(parser)
    add_scoring_options(parser)
    add_attack_options(parser, config_flags=False)  # --attack, --attack-seed: AuditConfig's
    parser.add_argument("--out", required=True, help="folder of the report")
    add_no_progress(parser)
    parser.set_defaults(run=run, parser=parser, resumes=True)  # stages cached in OUT/cache
    return parser


def run(args: argparse.Namespace) -> int:
    from waterdrum_hf.audits import AuditConfig, AuditQueries, check_audits, run_audits
    from waterdrum_hf.report import write_report

    config = config_from_options(AuditConfig, args)
    models = named_models(args.model, args.retrained)
    # Everything that can be wrong with the input is checked before any model is touched.
    rows = load_rows(args)
    owners = row_owners(rows, args)
    forget_ids = watermark_ids(args.forget_ids, args.forget_ids_file, "forget ids", owners)
    if not forget_ids:
        raise CliError("the audits measure the forget set: give --forget-ids or --forget-ids-file")
    forget_texts = relearning_texts(rows, owners, forget_ids, config, args)
    source = check_attack_inputs(config.attacks, args, has_model=True)
    check_audits(config, forget_texts, source or ())
    # The audits' null by default: the empirical one (100 keys), as the audits' own default.
    scoring = scoring_config(args, len(rows) * config.num_samples, default_null="empirical")
    watermark_tokenizer = load_tokenizer_option(args.watermark_tokenizer, "watermark tokenizer")
    tokenizer = load_tokenizer_option(args.tokenizer or next(iter(models.values())), "tokenizer")
    check_output_folder(args.out, "--out")
    queries = AuditQueries(
        make_queries(rows, tokenizer, args),
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
        cache=stage_cache(Path(args.out) / "cache", models),
        show_progress=getattr(args, "show_progress", None),
    )
    before = {name: entries["before"] for name, entries in results.models.items()}
    settings = {
        k: v
        for k, v in vars(args).items()
        if isinstance(v, (str, int, float, bool, type(None))) and "forget_ids" not in k
    }
    settings["scoring"] = scoring.to_dict()
    write_report(
        {"models": before, "audits": results, "settings": settings},
        args.out,
        title="WaterDrum audit report",
    )
    print_table(results)
    print(f"Report: {Path(args.out) / 'report.md'}")
    return 0


def relearning_texts(
    rows: Any, owners: list[int], forget_ids: list[int], config: Any, args: argparse.Namespace
) -> list[str]:
    """The forget owners' texts that relearning fine-tunes on (none without relearning)."""
    if "relearning" not in config.audits:
        return []
    if args.text_column not in rows.column_names:
        raise CliError(
            f"relearning fine-tunes on the forget owners' texts, but the dataset has no "
            f"{args.text_column!r} column (pass --text-column, or --audits quantization)"
        )
    chosen = set(forget_ids)  # each owns a row (checked when read)
    return [t for t, o in zip(rows[args.text_column], owners, strict=True) if o in chosen]


def print_table(results: Any) -> None:
    """Each model's forget and retain values per audit, and its excess over the retrained."""
    print(f"{'model':>12}  {'audit':>16}  {'forget':>7}  {'retain':>7}  excess over retrained")
    for name, entries in results.models.items():
        for audit, result in entries.items():
            cells = [
                f"{s.value:+7.3f}" if s else f"{'–':>7}" for s in (result.forget, result.retain)
            ]
            excess = results.excess(name, audit) if name != "retrained" else None
            shown = "" if excess is None else f"{excess:+.3f}"
            print(f"{name:>12}  {audit:>16}  {cells[0]}  {cells[1]}  {shown}")


def named_models(specs: list[str], retrained: str | None) -> dict[str, str]:
    """``--model`` (``NAME=MODEL`` or ``MODEL``) and ``--retrained`` as names -> folders or
    Hub ids (``tiny``: the built-in model's folder); names must differ."""
    models: dict[str, str] = {}
    for spec in [*specs, *([f"retrained={retrained}"] if retrained else [])]:
        name, _, model = spec.rpartition("=")
        if not model:
            raise CliError(f"--model {spec!r} names no model")
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
    from waterdrum_hf.stage_cache import StageCache

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
