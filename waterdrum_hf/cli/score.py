"""``waterdrum score``: the paper's evaluation of any causal LM on a watermarked dataset."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from waterdrum_hf.scripts.attack_options import (
    add_attack_options,
    attack_seed,
    attack_specs,
    attacked,
    check_attack_inputs,
)
from waterdrum_hf.scripts.files import check_output_folder, read_table, require_columns
from waterdrum_hf.scripts.generations import (
    Generations,
    generations_owners,
    read_generations,
    write_generations,
)
from waterdrum_hf.scripts.models import load_model, load_tokenizer_option, watermark_ids
from waterdrum_hf.cli.parsing import CliError, positive, positive_or_auto
from waterdrum_hf.cli.scoring_options import (
    add_scoring_options,
    scoring_config,
)
from waterdrum_hf.keys import watermark_id_from_text
from waterdrum_hf.prompting import DEFAULT_MAX_FRACTION

DESCRIPTION = (
    "Query a model with prompts made from each owner's data (the first --prefix-tokens tokens "
    "of a text, or a question in the model's chat format), sample --num-samples completions per "
    "query, verify them with the owners' keys and write the report (report.json, report.md, "
    "plots) and the generations (generations.jsonl, re-scorable with --generations)."
)
BENCHMARKS = {"waterdrum-ax": "load_waterdrum_ax", "waterdrum-tofu": "load_waterdrum_tofu"}


def fraction_or_none(text: str) -> float | None:
    """``--max-fraction``'s value: a number in (0, 1], or ``none``."""
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number in (0, 1] or 'none', got {text!r}"
        ) from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1] or 'none', got {text!r}")
    return value


def add_data_options(parser: argparse.ArgumentParser) -> None:
    """The options that say which owners' data to query and who is forgotten (``waterdrum
    score`` and ``waterdrum audit``; read with :func:`load_rows`)."""
    parser.add_argument(
        "--dataset",
        required=True,
        help="waterdrum-ax, waterdrum-tofu, or a local file/folder with an owner id column",
    )
    parser.add_argument(
        "--dataset-config", help="configuration of a published benchmark (e.g. forget_01)"
    )
    parser.add_argument("--split", default="full", help="split of a published benchmark")
    parser.add_argument("--dataset-path", help="local copy of the benchmark's Hub repository")
    parser.add_argument(
        "--watermark-tokenizer",
        required=True,
        help="tokenizer that watermarked the data (Llama-3.1-8B-Instruct's for the published "
        "benchmarks; tiny: the built-in model's, which watermarked the demo's data)",
    )
    parser.add_argument(
        "--id-column", default="owner_id", help="column with each row's watermark id"
    )
    parser.add_argument(
        "--text-column", default="text", help="column of texts (completion queries)"
    )
    parser.add_argument(
        "--question-column",
        default="question",
        help="column of questions (QA queries), used without a text column",
    )
    parser.add_argument(
        "--forget-ids", nargs="+", metavar="ID", help="owners who asked to be forgotten"
    )
    parser.add_argument("--forget-ids-file", help="file with one forget id per line")
    parser.add_argument(
        "--max-rows-per-owner",
        type=positive(),
        help="use only each owner's first rows (a quick look)",
    )
    parser.add_argument(
        "--prefix-tokens", type=positive(), default=50, help="query length in tokens"
    )
    parser.add_argument(
        "--max-fraction",
        type=fraction_or_none,
        default=DEFAULT_MAX_FRACTION,
        help="largest share of a text a query takes, so every text leaves something to complete "
        "(texts of 2 x --prefix-tokens tokens or more get the full prefix); 'none': the paper's "
        "rule, a short text is used whole",
    )


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "score", help="evaluate a model end to end", description=DESCRIPTION
    )
    parser.add_argument(
        "--model",
        help="causal LM: local folder (a PEFT adapter folder too), Hub id, or tiny (the built-in "
        "model)",
    )
    parser.add_argument(
        "--tokenizer",
        help="the model's tokenizer, where its folder has none (default: the model's own; tiny: "
        "the built-in model's)",
    )
    add_data_options(parser)
    parser.add_argument("--num-samples", type=positive(), default=10, help="completions per query")
    parser.add_argument(
        "--max-new-tokens", type=positive(), default=200, help="tokens per completion"
    )
    parser.add_argument(
        "--batch-size",
        type=positive_or_auto,
        default="auto",
        help="sequences per forward pass; 'auto': as many as the device's memory holds (a fixed "
        "size on a CPU)",
    )
    parser.add_argument("--seed", type=positive(0), default=0, help="sampling seed")
    add_scoring_options(parser)
    add_attack_options(parser)
    parser.add_argument("--name", default="model", help="the model's name in the report")
    parser.add_argument(
        "--generations",
        help="re-score this generations.jsonl, or the samples_*.jsonl that lm-eval --log_samples "
        "wrote for a WaterDrum task, instead of sampling (no --model needed)",
    )
    parser.add_argument("--out", required=True, help="folder of the report")
    hub = parser.add_argument_group("the Hub's formats (model-index in README.md, .eval_results/)")
    hub.add_argument(
        "--model-card",
        metavar="DIR",
        help="write the values into DIR laid out as a model repository (README.md's model-index "
        "merged into the card there; .eval_results/ for WaterDrum-Ax/TOFU)",
    )
    hub.add_argument(
        "--push-to-hub",
        metavar="REPO",
        help="upload the same files to the model repository REPO (one commit; HF_TOKEN or "
        "huggingface-cli login)",
    )
    hub.add_argument(
        "--hub-create-pr", action="store_true", help="open a pull request instead of committing"
    )
    parser.set_defaults(run=run, parser=parser)
    return parser


def row_owners(rows: Any, args: argparse.Namespace) -> list[int]:
    """Each row's owner id, read from ``--id-column`` (one clear error for a bad id)."""
    return [
        watermark_id_from_text(str(v), f"column {args.id_column!r}") for v in rows[args.id_column]
    ]


def run(args: argparse.Namespace) -> int:
    from waterdrum_hf.scripts.owners import print_owners
    from waterdrum_hf.metric import waterdrum_result
    from waterdrum_hf.report import write_report

    if not args.model and not args.generations:
        raise CliError(
            "give --model to sample completions, or --generations to re-score saved ones"
        )
    # Everything that can be wrong with the input is checked before the (long) sampling.
    data = load_rows(args)
    owners = row_owners(data, args)
    generations = read_generations(args.generations) if args.generations else None
    if generations is not None:
        owners = generations_owners(generations, owners, args.generations)
    forget_ids = watermark_ids(args.forget_ids, args.forget_ids_file, "forget ids", owners)
    config = scoring_config(args, len(owners) * (1 if args.generations else args.num_samples))
    source = check_attack_inputs(attack_specs(args), args, has_model=bool(args.model))
    watermark_tokenizer = load_tokenizer_option(args.watermark_tokenizer, "watermark tokenizer")
    check_output_folder(args.out, "--out")  # an existing folder is fine: its files are replaced
    out = Path(args.out)
    completions = verified_completions(args, data, owners, generations, watermark_tokenizer, source)
    result = waterdrum_result(
        completions,
        owners,
        watermark_tokenizer,
        config=config,
        forget_ids=forget_ids,
        return_details=True,
    )
    result = replace(result, scores=None)  # per-sample scores stay out of the report
    settings: dict[str, Any] = {
        k: v
        for k, v in vars(args).items()
        if isinstance(v, (str, int, float, bool, type(None))) and "forget_ids" not in k
    }
    settings.update(
        null=config.null.method if config.null else "none",
        null_keys=config.null.keys if config.null else 0,
        scoring=config.to_dict(),
    )
    if attack_specs(args):
        settings.update(attacks=attack_specs(args), attack_seed=attack_seed(args))
    write_report(
        {"models": {args.name: result}, "settings": settings}, out, title="WaterDrum report"
    )
    print_summary(result)
    print_owners(result, config.null)
    print(f"Report: {out / 'report.md'}")
    publish(result, args)
    return 0


def verified_completions(
    args: argparse.Namespace,
    data: Any,
    owners: list[int],
    generations: Generations | None,
    watermark_tokenizer: Any,
    source: list[str] | None,
) -> list[list[str]]:
    """What is verified: the saved generations, or the model's completions (saved to
    ``generations.jsonl`` first), after ``--attack`` (saved to ``attacked.jsonl``)."""
    from waterdrum_hf import attacks

    model = tokenizer = None
    if generations is not None:
        completions = generations.completions
    else:
        model, tokenizer = load_model(args.model, args.tokenizer)
        completions = sample(model, tokenizer, data, args)
        write_generations(Path(args.out) / "generations.jsonl", owners, completions)
    specs = attack_specs(args)
    if not specs:
        return completions
    if model is None and any(attacks.parse(s)[0] == "paraphrase" for s in specs):
        model, tokenizer = load_model(args.model, args.tokenizer)  # the paraphraser
    completions = attacked(
        completions, args, watermark_tokenizer, (model, tokenizer) if model else None, source
    )
    write_generations(Path(args.out) / "attacked.jsonl", owners, completions)
    print(f"attacks: {', '.join(specs)} (seed {attack_seed(args)}), before verification")
    return completions


def publish(result: Any, args: argparse.Namespace) -> None:
    """``--model-card``/``--push-to-hub``: the values in the Hub's formats
    (:mod:`waterdrum_hf.hub_results`)."""
    if not args.model_card and not args.push_to_hub:
        return
    from waterdrum_hf.data.hub import WATERDRUM_AX, WATERDRUM_TOFU
    from waterdrum_hf.hub_results import push_hub_results, write_hub_results
    from waterdrum_hf.hub_results_config import HubResultsConfig

    published = {"waterdrum-ax": WATERDRUM_AX, "waterdrum-tofu": WATERDRUM_TOFU}
    config = HubResultsConfig(
        dataset_id=published.get(args.dataset.lower(), Path(args.dataset).name),
        dataset_config=args.dataset_config,
        dataset_split=args.split if args.dataset.lower() in published else None,
        scheme=args.scheme,
        notes=f"{args.num_samples} samples of up to {args.max_new_tokens} tokens per query",
    )
    if args.model_card:
        for path in write_hub_results(result, args.model_card, config):
            print(f"Hub file: {path}")
    if args.push_to_hub:
        commit = push_hub_results(result, args.push_to_hub, config, create_pr=args.hub_create_pr)
        print(f"Pushed to {args.push_to_hub}: {getattr(commit, 'commit_url', commit)}")


def print_summary(result: Any) -> None:
    """Each set's value (with its interval), the AUROC, the forget p-value, the skipped."""
    level = f" ({100 * result.confidence:g}% CI)" if result.confidence else ""
    for name, value in result.sets().items():
        print(f"{name}: {value.value:.4f}{_interval(value.ci_low, value.ci_high, level)}")
    if result.separability_auroc is not None:
        interval = _interval(
            result.separability_auroc_ci_low, result.separability_auroc_ci_high, level
        )
        print(f"separability_auroc: {result.separability_auroc:.4f}{interval}")
    if result.forget is not None and result.forget.p_value is not None:
        print(f"forget_p_value: {result.forget.p_value:.4f}")
    print(f"num_skipped: {result.num_skipped}")


def _interval(low: float | None, high: float | None, level: str) -> str:
    """`` [low, high] (95% CI)`` after a printed value, or nothing without an interval."""
    return "" if low is None or high is None else f" [{low:.4f}, {high:.4f}]{level}"


def load_rows(args: argparse.Namespace) -> Any:
    """The dataset's rows (each owner's first ``--max-rows-per-owner``), with an owner id column."""
    import waterdrum_hf.data as loaders

    name = args.dataset.lower()
    if name in BENCHMARKS:
        loader = getattr(loaders, BENCHMARKS[name])
        kwargs = {"path": args.dataset_path} if args.dataset_path else {}
        config = [args.dataset_config] if args.dataset_config else []
        rows = loader(*config, split=args.split, **kwargs)
    else:
        if args.dataset_config or args.dataset_path:
            raise CliError(
                "--dataset-config and --dataset-path apply to the published benchmarks only"
            )
        rows = read_table(args.dataset, what="dataset")
    require_columns(rows, [args.id_column], f"dataset {args.dataset!r} (pass --id-column)")
    if args.text_column not in rows.column_names:
        require_columns(
            rows,
            [args.question_column],
            f"dataset {args.dataset!r} (no {args.text_column!r} either)",
        )
    return loaders.first_rows_per_owner(rows, args.max_rows_per_owner, id_column=args.id_column)


def make_queries(rows: Any, tokenizer: Any, args: argparse.Namespace) -> list[str]:
    """One query per row: the text's first ``--prefix-tokens`` tokens, or the question in the
    model's chat format where there is no text column."""
    from waterdrum_hf.prompting import completion_queries, qa_queries

    if args.text_column in rows.column_names:
        return completion_queries(
            rows[args.text_column], tokenizer, args.prefix_tokens, max_fraction=args.max_fraction
        )
    return qa_queries(rows[args.question_column], tokenizer)


def sample(model: Any, tokenizer: Any, rows: Any, args: argparse.Namespace) -> list[list[str]]:
    from waterdrum_hf.generation import generate
    from waterdrum_hf.sampling import SamplingConfig

    return generate(
        model,
        tokenizer,
        make_queries(rows, tokenizer, args),
        SamplingConfig(
            num_samples=args.num_samples,
            max_new_tokens=args.max_new_tokens,
            batch_size=args.batch_size,
            seed=args.seed,
        ),
    )
