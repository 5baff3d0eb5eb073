"""``waterdrum demo``: the whole WaterDrum loop on the built-in small model, offline, on a CPU.

1. Owners' passages (:func:`waterdrum_hf.data.toy_corpus`) are watermarked, each owner with a
   private random key, by paraphrasing with the tiny model (:class:`WatermarkedDataset`).
2. The tiny model is fine-tuned on all watermarked passages (the *original* model) and, as the
   gold standard of unlearning, on the retain owners' passages only (the *retrained* model).
3. Both models complete queries made from every owner's passages; the completions are scored
   with the owners' keys (:func:`compute_waterdrum`) against a null reference of random keys.
4. A report (JSON, Markdown and a plot) says what the metric sees: the forget owners' value is
   high on the original model and falls to the null level on the retrained one, while the
   retain owners' value stays.
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._progress import progress_enabled
from ._validation import check_positive_int

logger = logging.getLogger(__name__)


@dataclass
class DemoConfig:
    """Sizes of the demo; the defaults run in a few minutes on 2 CPU cores."""

    output_dir: str = field(default="waterdrum_report", metadata={"help": "Where the report goes."})
    num_owners: int = field(default=6, metadata={"help": "Data owners in the toy corpus."})
    num_forget: int = field(default=2, metadata={"help": "Owners (the last ones) who ask to be forgotten."})
    passages_per_owner: int = field(default=6, metadata={"help": "Passages kept per owner."})
    epochs: int = field(default=12, metadata={"help": "Fine-tuning epochs of both models."})
    learning_rate: float = field(default=2e-3, metadata={"help": "Fine-tuning learning rate."})
    prefix_tokens: int = field(default=24, metadata={"help": "Query length (tokens of each passage)."})
    num_samples: int = field(default=2, metadata={"help": "Completions sampled per query."})
    max_new_tokens: int = field(default=96, metadata={"help": "Tokens generated per completion."})
    null_keys: int = field(default=32, metadata={"help": "Random keys of the null reference."})
    seed: int = field(default=0, metadata={"help": "Seed of keys, training and sampling."})
    show_progress: bool | None = field(default=None, metadata={"help": "Progress bars (default: on a TTY)."})

    def __post_init__(self) -> None:
        for name in ("num_owners", "passages_per_owner", "epochs", "prefix_tokens", "num_samples", "max_new_tokens"):
            check_positive_int(getattr(self, name), name)
        check_positive_int(self.null_keys, "null_keys", minimum=0)
        if not 1 <= self.num_forget < self.num_owners:
            raise ValueError("`num_forget` must be at least 1 and leave at least one retain owner.")


def finetune(model: Any, tokenizer: Any, texts: list[str], config: DemoConfig, output_dir: Path) -> Any:
    """Fine-tune a copy of ``model`` on ``texts`` with a plain ``transformers.Trainer``."""
    from datasets import Dataset
    from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

    model = copy.deepcopy(model)
    model.train()
    dataset = Dataset.from_dict({"text": [t + tokenizer.eos_token for t in texts]}).map(
        lambda batch: tokenizer(batch["text"], truncation=True, max_length=256),
        batched=True,
        remove_columns=["text"],
    )
    args = TrainingArguments(
        output_dir=str(output_dir),
        num_train_epochs=config.epochs,
        per_device_train_batch_size=8,
        learning_rate=config.learning_rate,
        lr_scheduler_type="constant",
        save_strategy="no",
        report_to="none",
        logging_steps=10,
        seed=config.seed,
        use_cpu=True,
        disable_tqdm=not progress_enabled(config.show_progress),
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=dataset,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )
    trainer.train()
    model.eval()
    return model


def run_demo(config: DemoConfig | None = None) -> dict[str, Any]:
    """Run the demo and write the report; returns the report as a dict."""
    from . import tiny
    from ._waterfall import random_keys
    from .data import toy_corpus
    from .generation import generate
    from .metric import compute_waterdrum
    from .prompting import completion_queries
    from .watermarking import WatermarkedDataset

    config = config or DemoConfig()
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)

    logger.info("Loading the built-in small model (built on first use).")
    model, tokenizer = tiny.load(show_progress=config.show_progress)

    corpus = toy_corpus(config.num_owners, max_passages_per_owner=config.passages_per_owner)
    keys = random_keys(config.num_owners, seed=config.seed).tolist()  # private, never shown
    names = {key: f"owner-{owner}" for owner, key in enumerate(keys)}
    corpus = corpus.map(lambda row: {"watermark_key": keys[row["owner_id"]]})
    forget_owners = list(range(config.num_owners - config.num_forget, config.num_owners))

    logger.info("Watermarking %d passages of %d owners.", len(corpus), config.num_owners)
    watermarker = WatermarkedDataset(
        model, tokenizer, id_column="watermark_key", seed=config.seed, show_progress=config.show_progress
    )
    watermarked = corpus.map(watermarker, batched=True, batch_size=16, load_from_cache_file=False)

    texts = watermarked["text"]
    owners = watermarked["owner_id"]
    retain_texts = [t for t, o in zip(texts, owners, strict=True) if o not in forget_owners]
    models = {
        "original": finetune(model, tokenizer, texts, config, out / "runs" / "original"),
        "retrained": finetune(model, tokenizer, retain_texts, config, out / "runs" / "retrained"),
    }

    queries = completion_queries(
        texts, tokenizer, prefix_tokens=config.prefix_tokens, max_fraction=0.5
    )
    references = [keys[o] for o in owners]
    forget_keys = [keys[o] for o in forget_owners]
    results: dict[str, Any] = {}
    for name, trained in models.items():
        completions = generate(
            trained,
            tokenizer,
            queries,
            num_samples=config.num_samples,
            max_new_tokens=config.max_new_tokens,
            seed=config.seed,
            show_progress=config.show_progress,
        )
        results[name] = compute_waterdrum(
            completions,
            references,
            tokenizer,
            forget_ids=forget_keys,
            owner_names=names,
            null_keys=config.null_keys,
            return_details=True,
        )

    report = {
        "config": asdict(config),
        "forget_owners": [names[keys[o]] for o in forget_owners],
        "watermark_self_check": {
            "mean": float(np.nanmean(watermarked["watermark_score"])),
            "num_texts": len(watermarked),
        },
        "models": results,
    }
    (out / "report.json").write_text(json.dumps(report, indent=2))
    (out / "report.md").write_text(_markdown(report))
    _plot(report, out / "waterdrum.png")
    return report


def _markdown(report: dict[str, Any]) -> str:
    lines = [
        "# WaterDrum demo report",
        "",
        f"Forget owners: {report['forget_owners']}. Watermark self-check (mean q of the "
        f"watermarked passages under their own keys): {report['watermark_self_check']['mean']:.3f}.",
        "",
        "| model | forget | retain | null (forget) | AUROC (retain vs forget) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, r in report["models"].items():
        null_text = (
            f"{r['forget_null_mean']:.3f} ± {r['forget_null_std']:.3f}"
            if "forget_null_mean" in r
            else "-"
        )
        lines.append(
            f"| {name} | {r.get('forget', float('nan')):.3f} | {r.get('retain', float('nan')):.3f} "
            f"| {null_text} | {r.get('separability_auroc', float('nan')):.3f} |"
        )
    lines += [
        "",
        "The original model was trained on every owner's watermarked passages, the retrained "
        "model on the retain owners' only (perfect unlearning). WaterDrum should read the "
        "forget owners high on the first and at the null level on the second, and the retain "
        "owners high on both.",
        "",
        "![per-owner WaterDrum values](waterdrum.png)",
        "",
    ]
    return "\n".join(lines)


def _plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = report["models"]
    owners = sorted({o for r in models.values() for o in r["per_owner"]})
    width = 0.8 / len(models)
    fig, ax = plt.subplots(figsize=(1.2 * len(owners) + 3, 4))
    for i, (name, r) in enumerate(models.items()):
        values = [r["per_owner"].get(o, {}).get("value", np.nan) for o in owners]
        ax.bar(np.arange(len(owners)) + i * width, values, width, label=name)
    original = models["original"]
    if "retain_null_mean" in original:
        mean, std = original["retain_null_mean"], original["retain_null_std"]
        ax.axhspan(mean - 2 * std, mean + 2 * std, color="grey", alpha=0.2, label="null ±2σ")
    ax.set_xticks(np.arange(len(owners)) + width * (len(models) - 1) / 2)
    ax.set_xticklabels([f"{o}{' (forget)' if o in report['forget_owners'] else ''}" for o in owners],
                       rotation=30, ha="right")
    ax.set_ylabel("WaterDrum value (mean q)")
    ax.set_title("Per-owner WaterDrum values")
    ax.axhline(0, color="black", linewidth=0.5)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
