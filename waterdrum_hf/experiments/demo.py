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
5. The audits (:mod:`waterdrum_hf.audits`; not with ``--quick``): every model is relearned for
   a few steps on a slice of the forget set, and quantized to 8 and 4 bits, then scored again;
   the retrained model through the same audits is the line to beat.

Every stage is cached under ``<output_dir>/cache`` (:mod:`waterdrum_hf.experiments.pipeline`): a re-run,
or a run after an interruption, resumes; changed settings build new stages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from waterdrum_hf._progress import logged_stage
from waterdrum_hf._validation import check_positive_int
from waterdrum_hf.audits.config import AUDITS
from waterdrum_hf.bootstrap import check_confidence
from waterdrum_hf.experiments.pipeline import COMPLETION_BATCH_SIZE

DEFAULT_METHODS = ("kl", "scrub", "graddiff", "npo", "taskvector")
NO_CURVE: Mapping[str, str] = MappingProxyType(
    {
        "taskvector": "it fine-tunes a copy towards the forget set and subtracts the change "
        "only at the end, so the models in between are not unlearned ones"
    }
)
"""Methods the demo logs no WaterDrum curve for, and why (the report says it)."""


@dataclass(frozen=True)
class DemoConfig:
    """Sizes of the demo. The defaults run in about 5 minutes on 2 CPU cores (2 of them the
    audits); ``quick`` (no audits) in 1.
    Every field is a flag of ``waterdrum demo`` (its ``help`` is the flag's)."""

    output_dir: str = field(
        default="waterdrum_report",
        metadata={"help": "Where the report and the cache go.", "aliases": ["--out"]},
    )
    owners: int = field(
        default=6,
        metadata={
            "help": "Data owners (each a set of documentation topics); at least 2, at most the "
            "number of topics (79 on Python 3.11)."
        },
    )
    forget: int = field(
        default=2, metadata={"help": "Owners (the last ones) who ask to be forgotten."}
    )
    passages_per_owner: int = field(default=10, metadata={"help": "Passages per owner."})
    scheme: Literal["waterfall", "kgw"] = field(
        default="waterfall",
        metadata={
            "help": "Watermark scheme of the owners' passages, of verification and of the "
            "curves: waterfall (the paper's) or kgw (adapted KGW)."
        },
    )
    methods: tuple[str, ...] = field(
        default=DEFAULT_METHODS, metadata={"help": "Unlearning methods to benchmark."}
    )
    epochs: int = field(
        default=30, metadata={"help": "Fine-tuning epochs (the model must memorise its data)."}
    )
    batch_size: int = field(
        default=4, metadata={"help": "Batch size of fine-tuning and unlearning."}
    )
    learning_rate: float = field(default=2e-3, metadata={"help": "Fine-tuning learning rate."})
    unlearn_steps: int = field(
        default=30, metadata={"help": "Optimizer steps of each unlearning method."}
    )
    unlearn_learning_rate: float = field(
        default=2e-4, metadata={"help": "Unlearning learning rate."}
    )
    curve_points: int = field(
        default=4, metadata={"help": "WaterDrum evaluations during unlearning (after step 0)."}
    )
    prefix_tokens: int = field(
        default=24, metadata={"help": "Query length: first tokens of each passage (at most half)."}
    )
    num_samples: int = field(
        default=4, metadata={"help": "Completions sampled per query (pooled per query)."}
    )
    max_new_tokens: int = field(default=96, metadata={"help": "Tokens generated per completion."})
    null_keys: int = field(default=200, metadata={"help": "Random keys of the null reference."})
    audits: tuple[str, ...] = field(
        default=AUDITS,
        metadata={
            "help": "Audits run on every model after scoring (relearning on a slice of the "
            "forget set, 8- and 4-bit quantization; see waterdrum audit); none with --quick."
        },
    )
    confidence: float | None = field(
        default=0.95,
        metadata={
            "help": "Level of the confidence intervals in the report (a bootstrap over queries, "
            "resampled within each owner); none for no intervals."
        },
    )
    seed: int = field(default=0, metadata={"help": "Seed of keys, training and sampling."})
    write_keys: bool = field(
        default=False,
        metadata={
            "help": "Also write the owners' secret watermark keys beside the report (keys.json, "
            "forget_ids.txt and the owner_id column of watermarked.jsonl), which `waterdrum "
            "score` needs to score the demo's models; anyone with them can read or forge the "
            "owners' watermarks, so keep them private."
        },
    )
    show_progress: bool | None = field(
        default=None, metadata={"help": "Progress bars (default: on a terminal)."}
    )

    _argument_group_name: ClassVar[str] = "DemoConfig options"  # HfArgumentParser's --help section
    QUICK: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {
            "owners": 4,
            "forget": 1,
            "passages_per_owner": 6,
            "unlearn_steps": 12,
            "curve_points": 2,
            "num_samples": 2,
            "max_new_tokens": 64,
            "null_keys": 50,
            "audits": (),
        }
    )
    """The settings :meth:`quick` changes."""

    def __post_init__(self) -> None:
        from waterdrum_hf.data.corpus import topic_texts

        check_positive_int(self.owners, "owners", minimum=2)  # a forget and a retain owner
        if self.owners > len(topic_texts()):
            raise ValueError(
                f"`owners` must be at most {len(topic_texts())}, the toy corpus's number of "
                f"topics (each owner gets at least one), got {self.owners}."
            )
        for name in (
            "passages_per_owner",
            "epochs",
            "batch_size",
            "unlearn_steps",
            "curve_points",
            "prefix_tokens",
            "num_samples",
            "max_new_tokens",
        ):
            check_positive_int(getattr(self, name), name)
        check_positive_int(self.null_keys, "null_keys", minimum=0)
        if self.confidence is not None:
            check_confidence(self.confidence)
        check_positive_int(self.seed, "seed", minimum=0)
        if not 1 <= self.forget < self.owners:
            raise ValueError("`forget` must be at least 1 and leave at least one retain owner.")
        from waterdrum_hf.schemes import SCHEMES

        if self.scheme not in SCHEMES:
            raise ValueError(f"`scheme` must be one of {', '.join(SCHEMES)}, got {self.scheme!r}.")
        for name in ("learning_rate", "unlearn_learning_rate"):
            if not getattr(self, name) > 0:
                raise ValueError(f"`{name}` must be > 0.")
        from waterdrum_hf import trainers

        if not self.methods:
            raise ValueError(
                f"`methods` must name at least one unlearning method, e.g. {','.join(DEFAULT_METHODS)}."
            )
        for method in self.methods:
            trainers.get(method)  # an unknown name raises, listing the known ones
        if self.audits:
            self.audit_config()  # bad audit names raise here, not after training

    def audit_config(self) -> Any:
        """The :class:`~waterdrum_hf.audits.AuditConfig` of the demo's audits: its sampling
        and null keys, so that the values before and after each audit compare."""
        from waterdrum_hf.audits import AuditConfig

        return AuditConfig(
            audits=self.audits,
            num_samples=self.num_samples,
            max_new_tokens=self.max_new_tokens,
            batch_size=COMPLETION_BATCH_SIZE,
            null_keys=self.null_keys,
            confidence=self.confidence,
            seed=self.seed,
        )

    @classmethod
    def quick(cls, **overrides: Any) -> DemoConfig:
        """A smaller setting (about a minute on 2 CPU cores) that still shows the effect."""
        return cls(**{**cls.QUICK, **overrides})


@dataclass(frozen=True)
class DemoData:
    """The demo's owners and their passages, watermarked (:func:`watermark_corpus`).

    Owner ``i`` (0-based) is shown as ``owner-{i + 1}``; the last ``config.forget`` owners ask
    to be forgotten. ``keys`` are the owners' secret watermark ids: never shown.
    """

    keys: list[int] = field(repr=False)
    owners: list[int]
    """Each passage's owner (an index into ``keys``)."""
    originals: list[str] = field(repr=False)
    """The passages before watermarking (unwatermarked text of the same domain)."""
    texts: list[str] = field(repr=False)
    scores: list[float] = field(repr=False)
    """Each watermarked passage's score under its owner's key (the self-check)."""
    forget_owners: frozenset[int]

    @property
    def names(self) -> dict[int, str]:
        """Each owner's display name by key: ``owner-1``, ``owner-2``, ..."""
        return {key: f"owner-{i + 1}" for i, key in enumerate(self.keys)}

    @property
    def references(self) -> list[int]:
        """Each passage's owner key (what the metric takes as references)."""
        return [self.keys[o] for o in self.owners]

    @property
    def forget_ids(self) -> list[int]:
        """The forget owners' keys."""
        return [self.keys[o] for o in sorted(self.forget_owners)]

    @property
    def forget(self) -> list[str]:
        """The forget owners' watermarked passages."""
        return self._partition()[0]

    @property
    def retain(self) -> list[str]:
        """The retain owners' watermarked passages."""
        return self._partition()[1]

    def _partition(self) -> tuple[list[str], list[str]]:
        from waterdrum_hf.data import partition_by_owner

        return partition_by_owner(self.texts, self.owners, self.forget_owners)

    def queries(self, config: DemoConfig, tokenizer: Any) -> list[str]:
        """The demo's query of every passage: its first ``config.prefix_tokens`` tokens, at
        most half of it."""
        from waterdrum_hf.prompting import completion_queries

        return completion_queries(
            self.texts, tokenizer, prefix_tokens=config.prefix_tokens, max_fraction=0.5
        )


def demo_corpus(config: DemoConfig) -> Any:
    """The toy corpus passages the demo's owners hold (a ``datasets.Dataset``)."""
    from waterdrum_hf.data import toy_corpus

    return toy_corpus(config.owners, max_passages_per_owner=config.passages_per_owner)


def watermark_corpus(config: DemoConfig, pipeline: Any, corpus: Any = None) -> DemoData:
    """The demo's owners (keys from ``config.seed``) and their passages of ``corpus``
    (default :func:`demo_corpus`) watermarked through ``pipeline`` (a cached stage)."""
    from waterdrum_hf.keys import random_keys

    corpus = demo_corpus(config) if corpus is None else corpus
    keys = random_keys(config.owners, seed=config.seed).tolist()  # secret: never shown
    owners = list(corpus["owner_id"])
    # No n-gram repeats: the tiny paraphraser falls into loops without that.
    texts, scores = pipeline.watermark(
        "corpus",
        list(corpus["text"]),
        [keys[o] for o in owners],
        seed=config.seed,
        no_repeat_ngram_size=3,
        scheme=config.scheme,
    )
    return DemoData(
        keys=keys,
        owners=owners,
        originals=list(corpus["text"]),
        texts=texts,
        scores=scores,
        forget_owners=frozenset(range(config.owners - config.forget, config.owners)),
    )


def train_models(config: DemoConfig, pipeline: Any, data: DemoData) -> dict[str, Any]:
    """The original model (fine-tuned on every owner's passages) and the retrained one (on
    the retain owners' only), as cached pipeline stages by name."""
    training = {
        "epochs": config.epochs,
        "batch_size": config.batch_size,
        "learning_rate": config.learning_rate,
        "seed": config.seed,
    }
    return {
        "original": pipeline.finetune("original", data.texts, **training),
        "retrained": pipeline.finetune("retrained", data.retain, **training),
    }


DATA_FILE = "watermarked.jsonl"
KEYS_FILE = "keys.json"
FORGET_IDS_FILE = "forget_ids.txt"


def score_command(config: DemoConfig, name: str, model: str | Path) -> str:
    """The ``waterdrum score`` command that scores the demo's model ``name`` (saved in
    ``model``) as the demo did: the same queries, samples, null keys and seed, so it prints the
    demo's values (it needs the files of ``write_keys``)."""
    out = Path(config.output_dir)
    arguments = {
        "--model": model,
        "--dataset": out / DATA_FILE,
        "--watermark-tokenizer": "tiny",
        "--forget-ids-file": out / FORGET_IDS_FILE,
        "--prefix-tokens": config.prefix_tokens,
        "--num-samples": config.num_samples,
        "--max-new-tokens": config.max_new_tokens,
        "--batch-size": COMPLETION_BATCH_SIZE,  # sampling depends on the batches
        "--null-keys": config.null_keys,
        **({"--confidence": config.confidence} if config.confidence is not None else {}),
        "--seed": config.seed,
        **({"--scheme": config.scheme} if config.scheme != "waterfall" else {}),
        "--name": name,
        "--out": out / f"score-{name}",
    }
    return _command([*waterdrum_program(), "score"], arguments)


def demo_command(config: DemoConfig) -> str:
    """The ``waterdrum demo`` command that runs ``config`` (``--quick`` where that is shorter;
    progress bars as the terminal decides)."""
    candidates = []
    for flags, base in (([], DemoConfig()), (["--quick"], DemoConfig.quick())):
        arguments = {}
        for spec in fields(DemoConfig):
            value = getattr(config, spec.name)
            if spec.name == "show_progress" or value == getattr(base, spec.name):
                continue
            if isinstance(value, tuple):
                value = ",".join(value)
            elif isinstance(value, bool):
                value = str(value).lower()
            flag = spec.metadata.get("aliases", ["--" + spec.name.replace("_", "-")])[0]
            arguments[flag] = value
        candidates.append(_command([*waterdrum_program(), "demo", *flags], arguments))
    return min(candidates, key=len)


def waterdrum_program() -> list[str]:
    """How to run the ``waterdrum`` command from here, so printed commands run as printed:
    ``waterdrum`` when it is on PATH (or when the library is used from Python), else the entry
    point that is running (``.venv/bin/waterdrum`` under ``bash dev.sh demo``, with the
    ``HF_HOME`` it ran with, so the built model and every cached stage are found again), or
    ``<python> -m waterdrum_hf``."""
    import os
    import shutil
    import sys

    running = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    on_path = shutil.which("waterdrum")
    if running is not None and running.name == "waterdrum" and running.exists():
        if on_path and Path(on_path).resolve() == running.resolve():
            return ["waterdrum"]
        home = os.environ.get("HF_HOME")
        return [*([f"HF_HOME={home}"] if home else []), os.path.relpath(running)]
    if (
        running is not None
        and running.name == "__main__.py"
        and running.parent.name == "waterdrum_hf"
    ):
        return [os.path.relpath(sys.executable), "-m", "waterdrum_hf"]
    return ["waterdrum"]


def _command(words: list[str], arguments: Mapping[str, Any]) -> str:
    import shlex

    for flag, value in arguments.items():
        words += [flag, str(value)]
    return shlex.join(words)


def _write_private(path: Path, text: str) -> None:
    """``text`` into ``path``, readable by its owner only (it may hold keys)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)


def run_demo(
    config: DemoConfig | None = None, *, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Run the demo, write the report into ``config.output_dir``; return the report dict, with
    ``next``: the commands that go on from here (:meth:`_Demo.write_data`), which ``waterdrum
    demo`` prints last.

    torch runs on one thread meanwhile (restored after): the tiny model's matrices are too
    small to gain from more, and on a busy machine extra threads slow it down many times over.
    """
    from waterdrum_hf._torch_plumbing import torch_threads

    with torch_threads(1):
        return _Demo(config or DemoConfig(), log).run()


class _Demo:
    """The demo's stages (:class:`~waterdrum_hf.experiments.pipeline.CachedPipeline`), each timed."""

    def __init__(self, config: DemoConfig, log: Callable[[str], None]) -> None:
        self.config = config
        self.log = log
        self.out = Path(config.output_dir)
        self.timings: dict[str, float] = {}
        self.stage_count = 4 + len(config.methods) + bool(config.audits)
        self.stage_index = 0

    def run(self) -> dict[str, Any]:
        from waterdrum_hf import tiny, trainers
        from waterdrum_hf.experiments.pipeline import CachedPipeline
        from waterdrum_hf.metric import waterdrum_result
        from waterdrum_hf.report import write_report

        config = self.config
        with self.step(
            "load", "Loading the built-in small model (built on first use, about a minute)"
        ):
            model, tokenizer = tiny.load(show_progress=config.show_progress)
        pipeline = CachedPipeline(
            model, tokenizer, self.out / "cache", show_progress=config.show_progress
        )
        corpus = demo_corpus(config)
        with self.step(
            "watermark",
            f"Watermarking {len(corpus)} passages of {config.owners} owners, each under its own key (about {math.ceil(1.2 * len(corpus))} s unless cached)",
        ):
            data = watermark_corpus(config, pipeline, corpus)
        keys, owners, texts, scores = data.keys, data.owners, data.texts, data.scores
        names = data.names
        forget_owners = set(data.forget_owners)
        forget, retain = data.forget, data.retain
        with self.step(
            "finetune",
            f"Fine-tuning the original model ({config.epochs} epochs) and retraining without the forget owners",
        ):
            models = train_models(config, pipeline, data)

        queries = data.queries(config, tokenizer)
        references = data.references
        curves = {}
        curve_sampling = None
        for method in config.methods:
            with self.step(
                f"unlearn/{method}", f"Unlearning with {method} ({config.unlearn_steps} steps)"
            ):
                callback = (
                    None
                    if method.lower() in NO_CURVE
                    else self.callback(queries, references, forget_owners, owners, names, tokenizer)
                )
                models[method.lower()], curve = pipeline.unlearn(
                    method,
                    models["original"],
                    forget,
                    retain,
                    steps=config.unlearn_steps,
                    learning_rate=config.unlearn_learning_rate,
                    batch_size=config.batch_size,
                    seed=config.seed,
                    callback=callback,
                    callback_settings=callback.settings() if callback else None,
                )
                if curve:
                    curves[method.lower()] = curve
                    curve_sampling = {
                        "queries": len(callback.queries),
                        "num_samples": callback.num_samples,
                        "max_new_tokens": callback.max_new_tokens,
                        "no_curve": {
                            m: NO_CURVE[m] for m in map(str.lower, config.methods) if m in NO_CURVE
                        },
                    }

        results = {}
        with self.step(
            "sample_and_verify",
            f"Sampling {config.num_samples} x {config.max_new_tokens} tokens per query from {len(models)} models and verifying",
        ):
            for name, stage in models.items():
                completions = pipeline.completions(
                    name,
                    stage,
                    queries,
                    num_samples=config.num_samples,
                    max_new_tokens=config.max_new_tokens,
                    seed=config.seed,
                )
                result = waterdrum_result(
                    completions,
                    references,
                    tokenizer,
                    forget_ids=[keys[o] for o in sorted(forget_owners)],
                    owner_names=names,
                    null_keys=config.null_keys,
                    null_seed=config.seed,
                    return_details=True,
                    confidence=config.confidence,
                    bootstrap_seed=config.seed,
                    scheme=config.scheme,
                )
                results[name] = replace(result, scores=None)  # no per-sample scores in the report
        audits = None
        if config.audits:
            with self.step(
                "audits",
                f"Auditing {len(models)} models: {', '.join(config.audits)} (each perturbed model "
                "sampled and scored again)",
            ):
                audits = self.audits(
                    pipeline, models, tokenizer, queries, references, forget, results, keys,
                    forget_owners, names,
                )  # fmt: skip
        finite = [s for s in scores if s == s]
        report = {
            "models": results,
            "curves": curves,
            "timings": self.timings,
            "methods": {
                m.lower(): trainers.DESCRIPTIONS[trainers.canonical_name(m)] for m in config.methods
            },
            "curve_sampling": curve_sampling,
            **({"audits": audits} if audits is not None else {}),
            "setting_help": {
                **{f.name: f.metadata["help"] for f in fields(DemoConfig)},
                "forget_owners": "The owners who asked to be forgotten.",
                "watermark_self_check": "Mean q of the watermarked passages under their owners' keys.",
            },
            "settings": {
                **asdict(config),
                "forget_owners": [names[keys[o]] for o in sorted(forget_owners)],
                "watermark_self_check": sum(finite) / max(len(finite), 1),
            },
        }
        write_report(report, self.out, title="WaterDrum demo report")
        report["next"] = self.write_data(texts, owners, keys, names, forget_owners, models)
        return report

    def write_data(
        self,
        texts: list[str],
        owners: list[int],
        keys: list[int],
        names: dict[int, str],
        forget_owners: set[int],
        models: dict[str, Any],
    ) -> list[str]:
        """Write the watermarked passages beside the report (``watermarked.jsonl``: owner name
        and text) and, with ``write_keys``, what ``waterdrum score`` needs besides: the keys
        (``keys.json``, the ``owner_id`` column) and the forget owners' keys
        (``forget_ids.txt``). Returns the commands that go on from here: scoring the original
        and the retrained model, or (without the keys) the re-run that writes them."""
        import json

        config = self.config
        data, keys_file, forget_file = (
            self.out / name for name in (DATA_FILE, KEYS_FILE, FORGET_IDS_FILE)
        )
        rows = [
            {
                "owner": names[keys[o]],
                "text": text,
                **({"owner_id": keys[o]} if config.write_keys else {}),
            }
            for text, o in zip(texts, owners, strict=True)
        ]
        _write_private(data, "".join(json.dumps(row) + "\n" for row in rows))
        if not config.write_keys:
            for stale in (keys_file, forget_file):  # an earlier run's keys go with the option
                stale.unlink(missing_ok=True)
            return [
                "next: to score these models with `waterdrum score`, write the owners' secret "
                "keys (quick: every stage is cached):",
                "  " + demo_command(replace(config, write_keys=True)),
            ]
        _write_private(keys_file, json.dumps({names[key]: key for key in keys}, indent=1))
        _write_private(forget_file, "".join(f"{keys[o]}\n" for o in sorted(forget_owners)))
        self.log(
            f"WARNING: {keys_file}, {forget_file} and the owner_id column of {data} hold the "
            "owners' secret watermark keys: keep them private"
        )
        return [
            f"next: {score_command(config, name, models[name].path)}"
            for name in ("original", "retrained")
        ]

    def audits(
        self, pipeline, models, tokenizer, queries, references, forget, results, keys,
        forget_owners, names,
    ) -> Any:  # fmt: skip
        """Every model relearned and quantized, sampled and scored again; each perturbed model's
        completions are a cached stage of its model, so a killed audit resumes."""
        from waterdrum_hf.audits import run_audits

        return run_audits(
            {name: stage.path for name, stage in models.items()},
            tokenizer,
            queries,
            references,
            forget_ids=[keys[o] for o in sorted(forget_owners)],
            forget_texts=forget,
            config=self.config.audit_config(),
            owner_names=names,
            before=results,
            cache=pipeline.audit_cache(models),
            show_progress=self.config.show_progress,
            scheme=self.config.scheme,
        )

    def callback(self, queries, references, forget_owners, owners, names, tokenizer) -> Any:
        """The WaterDrum curve logger: a few queries per owner, one short sample each."""
        from waterdrum_hf.callbacks import WaterDrumCallback

        config = self.config
        forget_ids = {
            key for key, owner in zip(references, owners, strict=True) if owner in forget_owners
        }
        return WaterDrumCallback.from_queries(
            queries,
            references,
            sorted(forget_ids),
            tokenizer,
            tokenizer=tokenizer,
            owner_names=names,
            eval_steps=max(1, config.unlearn_steps // config.curve_points),
            num_samples=1,
            max_new_tokens=min(48, config.max_new_tokens),
            max_queries_per_owner=3,
            seed=config.seed,
            scheme=config.scheme,
        )

    def step(self, key: str, title: str) -> Any:
        """A numbered, timed stage (its seconds go into the report)."""
        self.stage_index += 1
        return logged_stage(
            self.log, self.timings, key, f"[{self.stage_index}/{self.stage_count}] {title}"
        )
