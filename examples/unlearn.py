"""Unlearn data owners with any waterdrum-hf trainer and read WaterDrum before and after.

By default, in a few minutes on a CPU and offline: the built-in tiny model and toy corpus
(4 owners x 3 passages) are watermarked, one key per owner; the tiny model is fitted to every
passage (the *original* model, which must memorise the passages for their watermarks to show);
the chosen method then unlearns the forget owners, and WaterDrum is read on both models from
sampled completions of the passages' openings. With ``--model-name-or-path`` and ``--dataset-name`` it runs on
your own model (already trained on the data) and a watermarked dataset saved by
``examples/watermark_dataset.py --output-dir DIR --forget-ids ...`` (splits ``forget`` and
``retain``, an ``owner_id`` column that holds the watermark keys).

Every field of the method's config is a flag (``HfArgumentParser``), TrainingArguments
included. Retraining and GD need no trainer of their own: GD (fine-tuning on the retain set) is
``graddiff --forget_weight 0``, and retraining is the same run started from the base
model. IdkDPO and IdkNLL need QA data (``question`` and ``answer`` columns).

    python examples/unlearn.py                    # kl, the default method
    python examples/unlearn.py npo --beta 0.1 --num_train_epochs 10 --lora
    python examples/unlearn.py scrub --max_phase_steps 2 --min_phase_steps 2
    python examples/unlearn.py graddiff --forget_weight 0          # GD
    python examples/unlearn.py kl --model-name-or-path ./original --dataset-name ./watermarked \\
        --output_dir ./unlearned --learning_rate 1e-4 --num_train_epochs 5
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field

from datasets import Dataset, concatenate_datasets, load_from_disk
from trl import TrlParser

import waterdrum_hf
from waterdrum_hf import trainers
from waterdrum_hf.data import split_by_owner, toy_corpus


@dataclass
class ScriptArguments:
    """What to unlearn from what; the method's own settings are its config's fields."""

    model: str | None = field(
        default=None, metadata={"help": "Model trained on the data (default: built-in tiny)."}
    )
    dataset: str | None = field(
        default=None,
        metadata={"help": "save_to_disk folder with 'forget' and 'retain' splits (default: toy)."},
    )
    lora: bool = field(
        default=False,
        metadata={
            "help": "Unlearn through a LoRA adapter (r 8, alpha 32, all linear layers); the "
            "adapter is merged into the saved model."
        },
    )
    owners: int = field(default=4, metadata={"help": "Toy corpus: data owners."})
    passages_per_owner: int = field(default=3, metadata={"help": "Toy corpus: passages each."})
    forget_owners: int = field(default=1, metadata={"help": "Toy corpus: owners forgotten (last)."})
    fit_epochs: int = field(default=30, metadata={"help": "Toy corpus: epochs of the original."})
    prefix_tokens: int = field(default=24, metadata={"help": "Query length in tokens."})
    num_samples: int = field(default=2, metadata={"help": "Completions sampled per query."})
    max_new_tokens: int = field(default=64, metadata={"help": "Tokens per completion."})


EXAMPLE_DEFAULTS = {  # a quick run on the toy corpus; every one can be overridden by its flag
    "output_dir": "unlearned",
    "num_train_epochs": 5,
    "learning_rate": 5e-4,
    "per_device_train_batch_size": 4,
    "lr_scheduler_type": "constant",
    "logging_steps": 5,
    "save_strategy": "no",
    "report_to": "none",
}


def parse_args() -> tuple[ScriptArguments, trainers.UnlearningConfig]:
    """The method, the first word as ``waterdrum unlearn METHOD`` takes it (kl without one),
    then one ``TrlParser`` over the script's arguments and that method's config
    (``--config recipe.yaml`` works too)."""
    argv = sys.argv[1:]
    method = argv.pop(0) if argv and not argv[0].startswith("-") else "kl"
    _, config_class = trainers.get(method)
    parser = TrlParser(
        (ScriptArguments, config_class),
        description=__doc__.split("\n\n")[0],
        epilog=f"methods: {', '.join(trainers.available())}",
    )
    parser.set_defaults(**EXAMPLE_DEFAULTS)
    script, config = parser.parse_args_and_config(argv)
    return script, config


def load_model(name: str | None):
    if name is None:
        return waterdrum_hf.tiny.load()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(name), AutoTokenizer.from_pretrained(name)


def toy_data(model, tokenizer, script: ScriptArguments, seed: int) -> tuple[Dataset, Dataset]:
    """Watermark the toy corpus (key = owner id) and split it into forget and retain owners."""
    corpus = toy_corpus(script.owners, max_passages_per_owner=script.passages_per_owner)
    watermarker = waterdrum_hf.WatermarkedDataset(
        model, tokenizer, id_column="owner_id", seed=seed, max_new_tokens=128
    )
    watermarked = corpus.map(watermarker, batched=True, batch_size=16, load_from_cache_file=False)
    forget_ids = list(range(script.owners - script.forget_owners, script.owners))
    return split_by_owner(watermarked, forget_ids)


def fit(model, tokenizer, data: Dataset, script: ScriptArguments, config):
    """The original model: GD (GradDiff with forget_weight=0) on every passage."""
    trainer_class, config_class = trainers.get("graddiff")
    args = config_class(
        output_dir=f"{config.output_dir}/original",
        forget_weight=0.0,
        num_train_epochs=script.fit_epochs,
        learning_rate=2e-3,
        per_device_train_batch_size=8,
        lr_scheduler_type="constant",
        save_strategy="no",
        report_to="none",
        logging_steps=20,
        use_cpu=config.use_cpu,
        seed=config.seed,
    )
    trainer_class(
        model=model, args=args, forget_dataset=data, retain_dataset=data, processing_class=tokenizer
    ).train()
    return model


def read_waterdrum(model, tokenizer, forget: Dataset, retain: Dataset, script, seed: int) -> dict:
    """WaterDrum of ``model``: completions of every passage's opening, verified with its key."""
    texts = list(forget["text"]) + list(retain["text"])
    owners = list(forget["owner_id"]) + list(retain["owner_id"])
    queries = waterdrum_hf.completion_queries(
        texts, tokenizer, prefix_tokens=script.prefix_tokens, max_fraction=0.5
    )
    sampling = waterdrum_hf.SamplingConfig(
        num_samples=script.num_samples, max_new_tokens=script.max_new_tokens, seed=seed
    )
    completions = waterdrum_hf.generate(model, tokenizer, queries, sampling)
    return waterdrum_hf.waterdrum_metrics(
        completions, owners, tokenizer, forget_ids=sorted(set(forget["owner_id"]))
    )


def run(script: ScriptArguments, config: trainers.UnlearningConfig) -> dict:
    """Unlearn, save the unlearned model (with ``--lora``, the adapter merged into the model
    it was trained on, so the saved folder is the model that was scored) and its tokenizer to
    ``config.output_dir``; returns WaterDrum before and after, and the forget/retain data."""
    trainer_class = trainers.trainer_for(config)
    model, tokenizer = load_model(script.model)
    if script.dataset is None:
        forget, retain = toy_data(model, tokenizer, script, config.seed)
        model = fit(model, tokenizer, concatenate_datasets([forget, retain]), script, config)
    else:
        splits = load_from_disk(script.dataset)
        forget, retain = splits["forget"], splits["retain"]
    before = read_waterdrum(model, tokenizer, forget, retain, script, config.seed)

    if script.lora:
        model = with_lora(model)
    trainer = trainer_class(
        model=model,
        args=config,
        forget_dataset=forget,
        retain_dataset=retain,
        processing_class=tokenizer,
    )
    trainer.train()
    unlearned = trainer.model
    if script.lora:  # the adapter's base is the model fitted above, not the one on disk
        unlearned = unlearned.merge_and_unload()
    unlearned.save_pretrained(config.output_dir)
    tokenizer.save_pretrained(config.output_dir)
    after = read_waterdrum(unlearned, tokenizer, forget, retain, script, config.seed)
    return {"before": before, "after": after, "forget": forget, "retain": retain}


def with_lora(model):
    """``model`` with a LoRA adapter (r 8, alpha 32, every linear layer) to train."""
    import warnings

    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(r=8, lora_alpha=32, lora_dropout=0.05, target_modules="all-linear")
    with warnings.catch_warnings():  # peft reads transformers' deprecated checkpointing flag
        warnings.filterwarnings("ignore", "`is_gradient_checkpointing` is deprecated")
        return get_peft_model(model, lora)


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    script, config = parse_args()
    outcome = run(script, config)
    before, after = outcome["before"], outcome["after"]
    print(f"\n{'WaterDrum':24s} {'forget':>7s} {'retain':>7s} {'AUROC':>7s}")
    method = trainers.trainer_for(config).method_name
    for name, result in (("original", before), (f"unlearned ({method})", after)):
        values = [result.get(key, float("nan")) for key in ("forget", "retain")]
        auroc = result.get("separability_auroc", float("nan"))
        print(f"{name:24s} {values[0]:7.3f} {values[1]:7.3f} {auroc:7.3f}")
    print(f"saved the unlearned model to {config.output_dir}")


if __name__ == "__main__":
    main()
