"""``waterdrum demo``: the whole WaterDrum loop and an unlearning benchmark, offline, on a CPU.

1. Owners' passages (:func:`waterdrum_hf.data.toy_corpus`) are watermarked, each owner with a
   private random key, by paraphrasing with the built-in tiny model (:class:`WatermarkedDataset`).
2. The tiny model is fine-tuned on every owner's watermarked passages (the *original* model)
   and, as the gold standard of unlearning, on the retain owners' passages only (*retrained*).
3. Each unlearning method (:mod:`waterdrum_hf.trainers`) unlearns the forget owners from the
   original model while :class:`WaterDrumCallback` logs the forget/retain curves.
4. Every model completes queries made from every owner's passages; the completions are
   scored with the owners' keys against a null reference of random keys, and a report
   (:mod:`waterdrum_hf.report`) says which method came closest to retraining.

Every stage is cached under ``<output_dir>/cache`` (:mod:`waterdrum_hf._cache`): a re-run, or
a run after an interruption, resumes; changed settings build new stages.
"""

from __future__ import annotations

import copy
import json
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ._cache import Stage, StageCache
from ._progress import progress_enabled
from ._validation import check_positive_int

DEFAULT_METHODS = ("kl", "scrub", "graddiff", "npo", "taskvector")


@dataclass(frozen=True)
class DemoConfig:
    """Sizes of the demo. The defaults run in about 4 minutes on 2 CPU cores; ``quick`` in 1."""

    output_dir: str = field(default="waterdrum_report", metadata={"help": "Where the report and the cache go."})
    owners: int = field(default=6, metadata={"help": "Data owners (each a set of documentation topics)."})
    forget: int = field(default=2, metadata={"help": "Owners (the last ones) who ask to be forgotten."})
    passages_per_owner: int = field(default=10, metadata={"help": "Passages per owner."})
    methods: tuple[str, ...] = field(default=DEFAULT_METHODS, metadata={"help": "Unlearning methods to benchmark."})
    epochs: int = field(default=30, metadata={"help": "Fine-tuning epochs (the model must memorise its data)."})
    batch_size: int = field(default=4, metadata={"help": "Batch size of fine-tuning and unlearning."})
    learning_rate: float = field(default=2e-3, metadata={"help": "Fine-tuning learning rate."})
    unlearn_steps: int = field(default=30, metadata={"help": "Optimizer steps of each unlearning method."})
    unlearn_learning_rate: float = field(default=2e-4, metadata={"help": "Unlearning learning rate."})
    curve_points: int = field(default=4, metadata={"help": "WaterDrum evaluations during unlearning (after step 0)."})
    prefix_tokens: int = field(default=24, metadata={"help": "Query length: first tokens of each passage (at most half)."})
    num_samples: int = field(default=4, metadata={"help": "Completions sampled per query (pooled per query)."})
    max_new_tokens: int = field(default=96, metadata={"help": "Tokens generated per completion."})
    null_keys: int = field(default=200, metadata={"help": "Random keys of the null reference."})
    seed: int = field(default=0, metadata={"help": "Seed of keys, training and sampling."})
    show_progress: bool | None = field(default=None, metadata={"help": "Progress bars (default: on a terminal)."})

    def __post_init__(self) -> None:
        for name in ("owners", "passages_per_owner", "epochs", "batch_size", "unlearn_steps",
                     "curve_points", "prefix_tokens", "num_samples", "max_new_tokens"):
            check_positive_int(getattr(self, name), name)
        check_positive_int(self.null_keys, "null_keys", minimum=0)
        check_positive_int(self.seed, "seed", minimum=0)
        if not 1 <= self.forget < self.owners:
            raise ValueError("`forget` must be at least 1 and leave at least one retain owner.")
        for name in ("learning_rate", "unlearn_learning_rate"):
            if not getattr(self, name) > 0:
                raise ValueError(f"`{name}` must be > 0.")
        from . import trainers

        for method in self.methods:
            trainers.get(method)  # an unknown name raises, listing the known ones

    @classmethod
    def quick(cls, **overrides: Any) -> DemoConfig:
        """A smaller setting (about a minute on 2 CPU cores) that still shows the effect."""
        settings = {"owners": 4, "forget": 1, "passages_per_owner": 6, "unlearn_steps": 12,
                    "curve_points": 2, "num_samples": 2, "max_new_tokens": 64, "null_keys": 50}
        return cls(**{**settings, **overrides})


def run_demo(config: DemoConfig | None = None, *, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the demo, write the report into ``config.output_dir``; return the report dict.

    torch runs on one thread meanwhile (restored after): the tiny model's matrices are too
    small to gain from more, and on a busy machine extra threads slow it down many times over.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _Demo(config or DemoConfig(), log).run()
    finally:
        torch.set_num_threads(threads)


class _Demo:
    """The demo's stages, each timed and cached."""

    def __init__(self, config: DemoConfig, log: Callable[[str], None]) -> None:
        self.config = config
        self.log = log
        self.out = Path(config.output_dir)
        self.cache = StageCache(self.out / "cache")
        self.timings: dict[str, float] = {}
        self.stage_count = 4 + len(config.methods)
        self.stage_index = 0

    def run(self) -> dict[str, Any]:
        from . import tiny
        from ._waterfall import random_keys
        from .metric import compute_waterdrum
        from .report import write_report

        config = self.config
        with self.step("load", "Loading the built-in small model (built on first use, about a minute)"):
            self.model, self.tokenizer = tiny.load(show_progress=config.show_progress)
        self.keys = random_keys(config.owners, seed=config.seed).tolist()  # secret: never shown
        self.names = {key: f"owner-{i + 1}" for i, key in enumerate(self.keys)}
        self.forget_owners = list(range(config.owners - config.forget, config.owners))
        texts, owners, self_check = self.watermarked()
        self.texts, self.owners = texts, owners
        retain_texts = [t for t, o in zip(texts, owners, strict=True) if o not in self.forget_owners]
        models: dict[str, Stage] = {}
        with self.step("finetune", f"Fine-tuning the original model ({config.epochs} epochs) and retraining without the forget owners"):
            models["original"] = self.finetuned("original", texts)
            models["retrained"] = self.finetuned("retrained", retain_texts)
        curves = {}
        for method in config.methods:
            with self.step(f"unlearn/{method}", f"Unlearning with {method} ({config.unlearn_steps} steps)"):
                models[method.lower()], curve = self.unlearned(method, models["original"])
                if curve:
                    curves[method.lower()] = curve
        results = {}
        with self.step("sample_and_verify", f"Sampling {config.num_samples} x {config.max_new_tokens} tokens per query from {len(models)} models and verifying"):
            queries = self.queries()
            references = [self.keys[o] for o in owners]
            forget_keys = [self.keys[o] for o in self.forget_owners]
            for name, stage in models.items():
                completions = self.completions(name, stage, queries)
                results[name] = compute_waterdrum(
                    completions, references, self.tokenizer, forget_ids=forget_keys,
                    owner_names=self.names, null_keys=config.null_keys, null_seed=config.seed,
                    return_details=True,
                )
                results[name].pop("scores")
        report = {
            "models": results,
            "curves": curves,
            "timings": self.timings,
            "settings": {
                **asdict(config),
                "forget_owners": [self.names[self.keys[o]] for o in self.forget_owners],
                "watermark_self_check": self_check,
            },
        }
        write_report(report, self.out, title="WaterDrum demo report")
        return report

    # ---- stages ------------------------------------------------------------------------------

    def step(self, key: str, title: str) -> _Step:
        self.stage_index += 1
        return _Step(self, key, f"[{self.stage_index}/{self.stage_count}] {title}")

    def watermarked(self) -> tuple[list[str], list[int], float]:
        """Watermarked passages, their owners, and the mean q of the passages (self-check)."""
        from datasets import load_from_disk

        from .data import toy_corpus
        from .watermarking import WatermarkedDataset

        config = self.config
        corpus = toy_corpus(config.owners, max_passages_per_owner=config.passages_per_owner)
        wm = WatermarkedDataset(  # no n-gram repeats: the tiny paraphraser loops without that
            self.model, self.tokenizer, id_column="key", seed=config.seed, no_repeat_ngram_size=3,
            show_progress=config.show_progress,
        )
        stage = self.watermarked_stage = self.cache.stage(
            "watermarked",
            {"owners": config.owners, "passages": config.passages_per_owner, "seed": config.seed,
             "watermarker": wm.fingerprint},
        )

        def build(folder: Path) -> None:
            keyed = corpus.map(lambda row: {"key": self.keys[row["owner_id"]]})
            out = keyed.map(wm, batched=True, batch_size=64, load_from_cache_file=False)
            out.remove_columns("key").save_to_disk(str(folder))

        estimate = f"about {math.ceil(0.9 * len(corpus))} s" if not stage.done else "cached"
        with self.step("watermark", f"Watermarking {len(corpus)} passages of {config.owners} owners, each under its own key ({estimate})"):
            data = self.cache.load_or_build(stage, build, lambda p: load_from_disk(str(p)))
        scores = [s for s in data["watermark_score"] if s == s]
        return list(data["text"]), list(data["owner_id"]), sum(scores) / max(len(scores), 1)

    def finetuned(self, name: str, texts: list[str]) -> Stage:
        """The tiny model fine-tuned on ``texts`` (cached)."""
        config = self.config
        stage = self.cache.stage(
            f"model-{name}",
            {"texts": texts, "epochs": config.epochs, "batch_size": config.batch_size,
             "learning_rate": config.learning_rate, "seed": config.seed},
            self.watermarked_stage,
        )
        self.cache.build(stage, lambda folder: finetune(
            self.model, self.tokenizer, texts, folder, epochs=config.epochs,
            batch_size=config.batch_size, learning_rate=config.learning_rate, seed=config.seed,
            show_progress=config.show_progress,
        ).save_pretrained(folder))
        return stage

    def unlearned(self, method: str, original: Stage) -> tuple[Stage, list[dict[str, float]]]:
        config = self.config
        stage = self.cache.stage(
            f"model-{method.lower()}",
            {"method": method, "steps": config.unlearn_steps, "lr": config.unlearn_learning_rate,
             "batch_size": config.batch_size, "seed": config.seed, "curve_points": config.curve_points,
             "prefix_tokens": config.prefix_tokens, "forget_owners": self.forget_owners},
            original,
        )

        def build(folder: Path) -> None:
            model, history = self.unlearn(method, self.load(original), folder)
            model.save_pretrained(folder)
            (folder / "curve.json").write_text(json.dumps(history))

        self.cache.build(stage, build)
        return stage, json.loads((stage.path / "curve.json").read_text())

    def unlearn(self, method: str, model: Any, folder: Path) -> tuple[Any, list[dict[str, float]]]:
        """Unlearn the forget owners from ``model``; returns the model and its WaterDrum curve."""
        from datasets import Dataset

        from . import trainers
        from .callbacks import WaterDrumCallback

        config = self.config
        trainer_class, config_class = trainers.get(method)
        forget = [t for t, o in zip(self.texts, self.owners, strict=True) if o in self.forget_owners]
        retain = [t for t, o in zip(self.texts, self.owners, strict=True) if o not in self.forget_owners]
        args = config_class(
            output_dir=str(folder / "run"), max_steps=config.unlearn_steps,
            per_device_train_batch_size=config.batch_size, learning_rate=config.unlearn_learning_rate,
            lr_scheduler_type="constant", logging_steps=max(1, config.unlearn_steps // 4),
            save_strategy="no", report_to="none", use_cpu=True, seed=config.seed,
            disable_tqdm=not progress_enabled(config.show_progress),
        )
        callbacks = []
        if trainer_class is not trainers.TaskVectorTrainer:  # it trains a copy towards the forget set
            sets = {True: ([], []), False: ([], [])}
            for query, owner in zip(self.queries(), self.owners, strict=True):
                queries, keys = sets[owner in self.forget_owners]
                queries.append(query)
                keys.append(self.keys[owner])
            callbacks.append(WaterDrumCallback(
                *sets[True], *sets[False], self.tokenizer, tokenizer=self.tokenizer,
                owner_names=self.names,
                eval_steps=max(1, config.unlearn_steps // config.curve_points), num_samples=1,
                max_new_tokens=min(48, config.max_new_tokens), max_queries_per_owner=3, seed=config.seed,
            ))
        trainer = trainer_class(
            model=model.train(), args=args, processing_class=self.tokenizer, callbacks=callbacks,
            forget_dataset=Dataset.from_dict({"text": forget}),
            retain_dataset=Dataset.from_dict({"text": retain}),
        )
        trainer.train()
        shutil.rmtree(args.output_dir, ignore_errors=True)
        history = callbacks[0].history if callbacks else []
        curve = [{k: v for k, v in h.items() if k in ("step", "forget", "retain")} for h in history]
        return trainer.model.eval(), curve

    def completions(self, name: str, model_stage: Stage, queries: list[str]) -> list[list[str]]:
        from .generation import generate

        config = self.config
        stage = self.cache.stage(
            f"generations-{name}",
            {"queries": queries, "num_samples": config.num_samples,
             "max_new_tokens": config.max_new_tokens, "seed": config.seed},
            model_stage,
        )

        def build(folder: Path) -> None:
            completions = generate(
                self.load(model_stage), self.tokenizer, queries, num_samples=config.num_samples,
                max_new_tokens=config.max_new_tokens, seed=config.seed, batch_size=64,
                show_progress=config.show_progress,
            )
            with open(folder / "generations.jsonl", "w") as handle:
                for query, owner, samples in zip(queries, self.owners, completions, strict=True):
                    record = {"query": query, "owner": self.names[self.keys[owner]], "samples": samples}
                    handle.write(json.dumps(record) + "\n")

        def load(folder: Path) -> list[list[str]]:
            with open(folder / "generations.jsonl") as handle:
                return [json.loads(line)["samples"] for line in handle]

        return self.cache.load_or_build(stage, build, load)

    def queries(self) -> list[str]:
        from .prompting import completion_queries

        return completion_queries(
            self.texts, self.tokenizer, prefix_tokens=self.config.prefix_tokens, max_fraction=0.5
        )

    def load(self, stage: Stage) -> Any:
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM.from_pretrained(stage.path).eval()


class _Step:
    """Prints a stage's title, then its elapsed time; records the time in the report."""

    def __init__(self, demo: _Demo, key: str, title: str) -> None:
        self.demo, self.key, self.title = demo, key, title

    def __enter__(self) -> _Step:
        self.start = time.perf_counter()
        self.demo.log(f"{self.title} ...")
        return self

    def __exit__(self, *exc: Any) -> None:
        seconds = time.perf_counter() - self.start
        if exc[0] is None:
            self.demo.timings[self.key] = round(seconds, 1)
            self.demo.log(f"    done in {seconds:.1f} s")


def finetune(
    model: Any,
    tokenizer: Any,
    texts: list[str],
    output_dir: str | Path,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    show_progress: bool | None = None,
) -> Any:
    """Fine-tune a copy of ``model`` on ``texts`` (each ending in EOS) with a plain ``Trainer``."""
    from datasets import Dataset
    from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

    model = copy.deepcopy(model).train()
    dataset = Dataset.from_dict({"text": [t + tokenizer.eos_token for t in texts]}).map(
        lambda batch: tokenizer(batch["text"], truncation=True, max_length=256),
        batched=True,
        remove_columns=["text"],
    )
    args = TrainingArguments(
        output_dir=str(Path(output_dir) / "run"),
        num_train_epochs=epochs,
        per_device_train_batch_size=batch_size,
        learning_rate=learning_rate,
        lr_scheduler_type="constant",
        save_strategy="no",
        report_to="none",
        logging_steps=max(1, epochs * math.ceil(len(texts) / batch_size) // 5),
        seed=seed,
        use_cpu=True,
        disable_tqdm=not progress_enabled(show_progress),
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=dataset,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )
    trainer.train()
    shutil.rmtree(args.output_dir, ignore_errors=True)
    return model.eval()


