"""``waterdrum score``: the paper's evaluation of any causal LM on a watermarked dataset.

Query a model with prompts made from each owner's data (the first --prefix-tokens tokens of a
text, or a question in the model's chat format), sample --num-samples completions per query,
verify them with the owners' keys and write the report (report.json, report.md, plots) and the
generations (generations.jsonl, re-scorable with --generations).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.attack_options import AttackArguments, check_attack_inputs
from waterdrum_hf.scripts.data_options import DataArguments, load_rows, row_owners
from waterdrum_hf.scripts.engine_options import EngineArguments
from waterdrum_hf.scripts.files import check_output_folder
from waterdrum_hf.scripts.generations import (
    Generations,
    generations_owners,
    read_generations,
    write_generations,
)
from waterdrum_hf.scripts.models import (
    load_model,
    load_tokenizer_option,
    model_tokenizer,
    watermark_ids,
)
from waterdrum_hf.scripts.parser import CliError, ScriptParser, positive
from waterdrum_hf.scripts.scoring_arguments import ScoringArguments, empirical_null_keys
from waterdrum_hf.utils.fields import flag

if TYPE_CHECKING:
    from waterdrum_hf.config import WaterDrumConfig
    from waterdrum_hf.generation.sampling import SamplingConfig
    from waterdrum_hf.scoring import WaterDrumResult


@dataclass
class ScoreArguments:
    """The model (or its saved generations), how it is sampled, and where the report goes."""

    _argument_group_name: ClassVar[str] = "model, sampling and report"

    output_dir: str = flag(help="Folder of the report.")
    model_name_or_path: str | None = flag(
        None,
        "Causal LM: local folder (a PEFT adapter folder too), Hub id, or tiny (the built-in "
        "model).",
    )
    tokenizer: str | None = flag(
        None,
        "The model's tokenizer, where its folder has none (default: the model's own; tiny: the "
        "built-in model's).",
    )
    generations: str | None = flag(
        None,
        "Re-score this generations.jsonl, or the samples_*.jsonl that lm-eval --log_samples "
        "wrote for a WaterDrum task, instead of sampling (no --model-name-or-path needed).",
    )
    num_samples: int = flag(10, "Completions per query.")
    max_new_tokens: int = flag(200, "Tokens per completion.")
    batch_size: str = flag(
        "auto",
        "Sequences per forward pass; 'auto': as many as the device's memory holds (a fixed size "
        "on a CPU).",
    )
    seed: int = flag(0, "Sampling seed.")
    name: str = flag("model", "The model's name in the report.")
    overwrite: bool = flag(False, "Replace a report already in --output-dir.")

    def __post_init__(self) -> None:
        if not self.model_name_or_path and not self.generations:
            raise CliError(
                "give --model-name-or-path to sample completions, or --generations to re-score saved ones"
            )
        positive(self.num_samples, "--num-samples")
        positive(self.max_new_tokens, "--max-new-tokens")
        positive(self.seed, "--seed", minimum=0)
        int_or_auto(self.batch_size, "--batch-size")


@dataclass
class HubArguments:
    """Where the values also go in the Hub's formats (:mod:`waterdrum_hf.hub_results.publish`)."""

    _argument_group_name: ClassVar[str] = (
        "the Hub's formats (model-index in README.md, .eval_results/)"
    )

    model_card: str | None = flag(
        None,
        "Write the values into this folder laid out as a model repository (README.md's "
        "model-index merged into the card there; .eval_results/ for WaterDrum-Ax/TOFU).",
    )
    push_to_hub: str | None = flag(
        None,
        "Upload the same files to this model repository (one commit; HF_TOKEN or "
        "huggingface-cli login).",
    )
    hub_create_pr: bool = flag(False, "Open a pull request instead of committing.")


def int_or_auto(text: str, option: str) -> int | str:
    """``"auto"`` or an integer >= 1 (``generate``'s batch size), from ``option``'s text."""
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise CliError(f"{option}: expected 'auto' or an integer >= 1, got {text!r}")
    return value


GROUPS = (
    ScoreArguments, DataArguments, ScoringArguments, AttackArguments, HubArguments,
    EngineArguments,
)  # fmt: skip
"""The script's argument groups, in the order ``main`` takes them."""


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser(GROUPS, prog=prog, description=__doc__)


def main(
    args: ScoreArguments,
    data: DataArguments,
    scoring: ScoringArguments,
    attack: AttackArguments,
    hub: HubArguments,
    engine: EngineArguments,
) -> int:
    # Everything that can be wrong with the input is checked before the (long) sampling.
    rows = load_rows(data)
    owners = row_owners(rows, data)
    config = scoring.scoring_config(len(owners) * (1 if args.generations else args.num_samples))
    generations = None
    if args.generations:
        if engine.adapters:
            raise CliError("--adapters samples from a server; --generations re-scores saved text")
        generations = read_generations(args.generations)
        owners = generations_owners(generations, owners, args.generations)
    forget_ids = watermark_ids(data.forget_ids, data.forget_ids_file, "forget ids", owners)
    source = check_attack_inputs(
        attack.attacks, attack.attack_source, has_model=bool(args.model_name_or_path)
    )
    if engine.engine != "transformers" and paraphrases(attack):
        raise CliError(
            "--attack paraphrase rewrites with a model loaded here: --engine transformers"
        )
    watermark_tokenizer = load_tokenizer_option(data.watermark_tokenizer, "watermark tokenizer")
    targets = engine.targets(args.name)
    folders = [Path(args.output_dir) / Path(adapter).name if adapter else Path(args.output_dir)
               for _, adapter in targets]  # fmt: skip
    check_output_folder(args.output_dir, "--output-dir")
    for out in folders:
        if (out / "report.json").exists() and not args.overwrite:
            where = "--output-dir " if out == Path(args.output_dir) else ""
            raise CliError(
                f"{where}{str(out)!r} already holds a report; pass --overwrite to replace it"
            )
    sampler = engine.sampler(args.model_name_or_path or "")  # loads nothing yet
    try:
        for (name, adapter), out in zip(targets, folders, strict=True):
            out.mkdir(parents=True, exist_ok=True)
            run = dataclasses.replace(args, output_dir=str(out), name=name)
            completions = verified_completions(
                run, data, attack, rows, owners, generations, watermark_tokenizer, source,
                sampler, adapter,
            )  # fmt: skip
            write_score_report(
                completions, owners, watermark_tokenizer, config, forget_ids, run, data, hub,
                attack, engine,
            )  # fmt: skip
    finally:
        if callable(getattr(sampler, "close", None)):
            sampler.close()  # type: ignore[union-attr]
    return 0


def write_score_report(
    completions: list[list[str]],
    owners: list[int],
    watermark_tokenizer: Any,
    config: WaterDrumConfig,
    forget_ids: list[int] | None,
    args: ScoreArguments,
    data: DataArguments,
    hub: HubArguments,
    attack: AttackArguments,
    engine: EngineArguments,
) -> None:
    """Verify ``completions``, write the report into ``args.output_dir``, print its summary
    and publish it where asked."""
    from waterdrum_hf.report import write_report
    from waterdrum_hf.report.owner_table import owner_table
    from waterdrum_hf.scoring import waterdrum_result

    result = waterdrum_result(
        completions,
        owners,
        watermark_tokenizer,
        config=config,
        forget_ids=forget_ids,
        return_details=True,
    )
    result = dataclasses.replace(result, scores=None)  # per-sample scores stay out of the report
    groups = [args, data, hub, *([attack] if attack.attacks else [])]
    settings = report_settings(
        config, *groups, *([engine] if engine.engine != "transformers" else [])
    )
    if attack.attacks:
        settings["attack_seed"] = attack.seed(args.seed)
    out = Path(args.output_dir)
    write_report(
        {"models": {args.name: result}, "settings": settings}, out, title="WaterDrum report"
    )
    print_summary(result, empirical_null_keys(config))
    for line in owner_table(result, config.null):
        print(line)
    print(f"Report: {out / 'report.md'}")
    publish(result, args, data, config.scheme.name, hub)


def report_settings(config: WaterDrumConfig, *groups: Any) -> dict[str, Any]:
    """report.json's ``settings``: the fields of the command's dataclass ``groups`` (never the
    forget ids), the null's method and keys (what the report's verdicts read) and ``scoring``,
    the scoring config as it was used."""
    settings: dict[str, Any] = {}
    for group in groups:
        settings.update(dataclasses.asdict(group))
    for name in ("forget_ids", "forget_ids_file"):
        settings.pop(name, None)
    settings.update(
        null=config.null.method if config.null else "none",
        null_keys=config.null.keys if config.null else 0,
        scoring=config.to_dict(),
    )
    return settings


def verified_completions(
    args: ScoreArguments,
    data: DataArguments,
    attack: AttackArguments,
    rows: Any,
    owners: list[int],
    generations: Generations | None,
    watermark_tokenizer: Any,
    source: list[str] | None,
    sampler: Callable[..., list[list[str]]] | None = None,
    adapter: str | None = None,
) -> list[list[str]]:
    """What is verified: the saved generations, or the model's (or its ``adapter``'s)
    completions, from ``sampler`` (:meth:`EngineArguments.sampler`) or else transformers
    (saved to ``generations.jsonl`` first), after ``--attack`` (saved to
    ``attacked.jsonl``)."""
    import waterdrum_hf.attacks as attacks

    model = tokenizer = None
    paraphrased = paraphrases(attack)
    if generations is None or paraphrased:  # the model (or the paraphraser)
        tokenizer = model_tokenizer(args.model_name_or_path or "", args.tokenizer)
    if generations is not None:
        completions = generations.completions
    else:
        queries = data.queries(rows, tokenizer)  # checked before the weights load
        if sampler is not None:
            completions = sampler(queries, sampling_config(args), adapter)
        else:
            model = load_model(args.model_name_or_path or "")
            completions = sample(model, tokenizer, queries, args)
        write_generations(Path(args.output_dir) / "generations.jsonl", owners, completions)
    if not attack.attacks:
        return completions
    if model is None and paraphrased:
        model = load_model(args.model_name_or_path or "")  # the paraphraser
    seed = attack.seed(args.seed)
    completions = attacks.chain(
        completions, list(attack.attacks), seed, tokenizer=watermark_tokenizer,
        paraphraser=(model, tokenizer) if model else None, source=source,
    )  # fmt: skip
    write_generations(Path(args.output_dir) / "attacked.jsonl", owners, completions)
    print(f"attacks: {', '.join(attack.attacks)} (seed {seed}), before verification")
    return completions


def paraphrases(attack: AttackArguments) -> bool:
    """Whether one of ``--attack`` rewrites with a model (the one ``score`` loads)."""
    import waterdrum_hf.attacks as attacks

    return any(attacks.parse(spec)[0] == "paraphrase" for spec in attack.attacks)


def sampling_config(args: ScoreArguments) -> SamplingConfig:
    """How ``--num-samples`` completions of each query are sampled."""
    from waterdrum_hf.generation.sampling import SamplingConfig

    return SamplingConfig(
        num_samples=args.num_samples,
        max_new_tokens=args.max_new_tokens,
        batch_size=int_or_auto(args.batch_size, "--batch-size"),
        seed=args.seed,
    )


def sample(model: Any, tokenizer: Any, queries: list[str], args: ScoreArguments) -> list[list[str]]:
    """``--num-samples`` completions of each query, sampled here."""
    from waterdrum_hf.generation.engine import generate

    return generate(model, tokenizer, queries, sampling_config(args))


def publish(
    result: WaterDrumResult,
    args: ScoreArguments,
    data: DataArguments,
    scheme: str,
    hub: HubArguments,
) -> None:
    """``--model-card``/``--push-to-hub``: the values in the Hub's formats
    (:mod:`waterdrum_hf.hub_results.publish`)."""
    if not hub.model_card and not hub.push_to_hub:
        return
    from waterdrum_hf.data.hub import WATERDRUM_AX, WATERDRUM_TOFU
    from waterdrum_hf.hub_results.config import HubResultsConfig
    from waterdrum_hf.hub_results.publish import push_hub_results, write_hub_results

    published = {"waterdrum-ax": WATERDRUM_AX, "waterdrum-tofu": WATERDRUM_TOFU}
    config = HubResultsConfig(
        dataset_id=published.get(data.dataset_name.lower(), Path(data.dataset_name).name),
        dataset_config=data.dataset_config,
        dataset_split=data.split if data.dataset_name.lower() in published else None,
        scheme=scheme,
        notes=f"{args.num_samples} samples of up to {args.max_new_tokens} tokens per query",
    )
    if hub.model_card:
        for path in write_hub_results(result, hub.model_card, config):
            print(f"Hub file: {path}")
    if hub.push_to_hub:
        commit = push_hub_results(result, hub.push_to_hub, config, create_pr=hub.hub_create_pr)
        print(f"Pushed to {hub.push_to_hub}: {getattr(commit, 'commit_url', commit)}")


def print_summary(result: WaterDrumResult, null_keys: int | None) -> None:
    """Each set's value (with its interval), the AUROC, the forget p-value (at its precision,
    bounded by an empirical null's ``null_keys``), the skipped."""
    from waterdrum_hf.report.formatting import p_value_text

    level = f" ({100 * result.confidence:g}% CI)" if result.confidence else ""
    for name, value in result.sets().items():
        print(f"{name}: {value.value:.4f}{interval_text(value.ci_low, value.ci_high, level)}")
    if result.separability_auroc is not None:
        interval = interval_text(
            result.separability_auroc_ci_low, result.separability_auroc_ci_high, level
        )
        print(f"separability_auroc: {result.separability_auroc:.4f}{interval}")
    if result.forget is not None and result.forget.p_value is not None:
        print(f"forget_p_value: {p_value_text(result.forget.p_value, null_keys)}")
    print(f"num_skipped: {result.num_skipped}")


def interval_text(low: float | None, high: float | None, level: str) -> str:
    """`` [low, high] (95% CI)`` after a printed value, or nothing without an interval."""
    return "" if low is None or high is None else f" [{low:.4f}, {high:.4f}]{level}"


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum score"))
