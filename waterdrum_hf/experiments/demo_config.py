"""The demo's settings (:class:`DemoConfig`, every field a flag of ``waterdrum demo``) and the
commands it prints to go on from its results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from waterdrum_hf.audits.config import AUDITS
from waterdrum_hf.bootstrap import check_confidence
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.experiments.pipeline import COMPLETION_BATCH_SIZE
from waterdrum_hf.experiments.training import TrainingSettings
from waterdrum_hf.schemes import SCHEMES
from waterdrum_hf.utils.fields import flag, shortest_command
from waterdrum_hf.utils.validation import check_positive_fields, check_positive_int

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

    output_dir: str = flag("waterdrum_report", "Where the report and the cache go.")
    owners: int = flag(
        6,
        (
            "Data owners (each a set of documentation topics); at least 2, at most the "
            "number of topics (79 on Python 3.11)."
        ),
    )
    forget: int = flag(2, "Owners (the last ones) who ask to be forgotten.")
    passages_per_owner: int = flag(10, "Passages per owner.")
    scheme: str = flag(
        "waterfall",
        (
            "Watermark scheme of the owners' passages, of verification and of the "
            "curves: waterfall (the paper's), kgw (adapted KGW), synthid (adapted Synth-ID) or "
            "exp_edit (adapted EXP-edit)."
        ),
        choices=tuple(SCHEMES),
    )
    methods: tuple[str, ...] = flag(DEFAULT_METHODS, "Unlearning methods to benchmark.")
    epochs: int = flag(30, "Fine-tuning epochs (the model must memorise its data).")
    batch_size: int = flag(4, "Batch size of fine-tuning and unlearning.")
    learning_rate: float = flag(2e-3, "Fine-tuning learning rate.")
    unlearn_steps: int = flag(30, "Optimizer steps of each unlearning method.")
    unlearn_learning_rate: float = flag(2e-4, "Unlearning learning rate.")
    curve_points: int = flag(4, "WaterDrum evaluations during unlearning (after step 0).")
    prefix_tokens: int = flag(24, "Query length: first tokens of each passage (at most half).")
    num_samples: int = flag(4, "Completions sampled per query (pooled per query).")
    max_new_tokens: int = flag(96, "Tokens generated per completion.")
    null_keys: int = flag(
        200,
        "Random keys of the empirical null (what keys that own nothing read on the same "
        "texts); its p-values are at least 1/(1 + null_keys). 0: no null (no p-values).",
    )
    audits: tuple[str, ...] = flag(
        AUDITS,
        (
            "Audits run on every model after scoring (relearning on a slice of the "
            "forget set, 8- and 4-bit quantization; see waterdrum audit); none with --quick."
        ),
    )
    confidence: float | None = flag(
        0.95,
        (
            "Level of the confidence intervals in the report (a bootstrap over queries, "
            "resampled within each owner); none for no intervals."
        ),
    )
    seed: int = flag(
        0,
        (
            "Seed of the owners' keys and watermarking, the null keys and the bootstrap, and "
            "of the first training run (run i trains and samples with seed + i)."
        ),
    )
    num_seeds: int = flag(
        3,
        (
            "Training runs, each with its own seed: fine-tuning, retraining, every unlearning "
            "method and sampling run again, the owners' data and keys stay. Values are means "
            "over the runs with intervals that cover a rerun; the verdict names a method only "
            "when the runs separate it. The curves, the audits and the plots are the first run's."
        ),
    )
    write_keys: bool = flag(
        False,
        (
            "Also write the owners' secret watermark keys beside the report (keys.json, "
            "forget_ids.txt and the owner_id column of watermarked.jsonl), which `waterdrum "
            "score` needs to score the demo's models; anyone with them can read or forge the "
            "owners' watermarks, so keep them private."
        ),
    )
    show_progress: bool | None = flag(None, "Progress bars (default: on a terminal).")

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
            "num_seeds": 2,
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
        check_positive_fields(
            self,
            "passages_per_owner",
            "epochs",
            "batch_size",
            "unlearn_steps",
            "curve_points",
            "prefix_tokens",
            "num_samples",
            "max_new_tokens",
            "num_seeds",
        )
        check_positive_int(self.null_keys, "null_keys", minimum=0)
        if self.confidence is not None:
            check_confidence(self.confidence)
        check_positive_int(self.seed, "seed", minimum=0)
        if not 1 <= self.forget < self.owners:
            raise ValueError("`forget` must be at least 1 and leave at least one retain owner.")
        if self.scheme not in SCHEMES:
            raise ValueError(f"`scheme` must be one of {', '.join(SCHEMES)}, got {self.scheme!r}.")
        for name in ("learning_rate", "unlearn_learning_rate"):
            if not getattr(self, name) > 0:
                raise ValueError(f"`{name}` must be > 0.")
        import waterdrum_hf.trainers as trainers

        if not self.methods:
            raise ValueError(
                f"`methods` must name at least one unlearning method, e.g. {','.join(DEFAULT_METHODS)}."
            )
        for method in self.methods:
            trainers.get(method)  # an unknown name raises, listing the known ones
        if self.audits:
            self.audit_config()  # bad audit names raise here, not after training

    def audit_config(self) -> Any:
        """The :class:`~waterdrum_hf.audits.AuditConfig` of the demo's audits: its sampling, so
        that the values before and after each audit compare (they are scored alike:
        :meth:`scoring_config`)."""
        from waterdrum_hf.audits import AuditConfig

        return AuditConfig(
            audits=self.audits,
            num_samples=self.num_samples,
            max_new_tokens=self.max_new_tokens,
            batch_size=COMPLETION_BATCH_SIZE,
            seed=self.seed,
        )

    def scoring_settings(self) -> dict[str, Any]:
        """How the demo scores every model (and its audits), as the flat settings of every
        entry point (:data:`~waterdrum_hf.config.SCORING_SETTINGS`), where it differs from
        their defaults: its scheme, an empirical null of ``null_keys`` keys and intervals at
        ``confidence``, both seeded with ``seed``."""
        settings: dict[str, Any] = {"scheme": self.scheme} if self.scheme != "waterfall" else {}
        if self.null_keys:
            settings |= {"null": "empirical", "null_keys": self.null_keys, "null_seed": self.seed}
        else:
            settings["null"] = "none"
        if self.confidence is not None:
            settings |= {"confidence": self.confidence, "bootstrap_seed": self.seed}
        return settings

    def scoring_config(self) -> WaterDrumConfig:
        """:meth:`scoring_settings` as a configuration, through the one door of every entry
        point (:meth:`WaterDrumConfig.from_keywords`)."""
        return WaterDrumConfig.from_keywords(self.scoring_settings())

    @property
    def run_seeds(self) -> tuple[int, ...]:
        """The training runs' seeds: ``seed``, ``seed + 1``, ... (``num_seeds`` of them)."""
        return tuple(range(self.seed, self.seed + self.num_seeds))

    def finetuning(self, seed: int | None = None) -> TrainingSettings:
        """How the original and the retrained model are fine-tuned (for ``epochs``) in the run
        of ``seed`` (default: the first run's)."""
        return TrainingSettings(
            self.batch_size, self.learning_rate, self.seed if seed is None else seed
        )

    def unlearning(self, seed: int | None = None) -> TrainingSettings:
        """How every method unlearns (for ``unlearn_steps``) in the run of ``seed`` (default:
        the first run's)."""
        return TrainingSettings(
            self.batch_size, self.unlearn_learning_rate, self.seed if seed is None else seed
        )

    @classmethod
    def quick(cls, **overrides: Any) -> DemoConfig:
        """A smaller setting (about a minute on 2 CPU cores) that still shows the effect."""
        return cls(**{**cls.QUICK, **overrides})


DATA_FILE = "watermarked.jsonl"
KEYS_FILE = "keys.json"
FORGET_IDS_FILE = "forget_ids.txt"


def score_command(config: DemoConfig, name: str, model: str | Path) -> str:
    """The ``waterdrum score`` command that scores the demo's model ``name`` (saved in
    ``model``) as the demo did: the same queries, samples, null keys and seed, so it prints the
    demo's values (it needs the files of ``write_keys``)."""
    import shlex

    out = Path(config.output_dir)
    arguments = {
        "--model-name-or-path": model,
        "--dataset-name": out / DATA_FILE,
        "--watermark-tokenizer": "tiny",
        "--forget-ids-file": out / FORGET_IDS_FILE,
        "--prefix-tokens": config.prefix_tokens,
        "--num-samples": config.num_samples,
        "--max-new-tokens": config.max_new_tokens,
        "--batch-size": COMPLETION_BATCH_SIZE,  # sampling depends on the batches
        "--seed": config.seed,  # sampling's; the demo seeds its null and bootstrap alike
        **{
            "--" + name.replace("_", "-"): value
            for name, value in config.scoring_settings().items()
        },
        "--name": name,
        "--output-dir": out / f"score-{name}",
    }
    words = [*waterdrum_program(), "score"]
    for option, value in arguments.items():
        words += [option, str(value)]
    return shlex.join(words)


def demo_command(config: DemoConfig) -> str:
    """The ``waterdrum demo`` command that runs ``config`` (``--quick`` where that is shorter;
    progress bars as the terminal decides)."""
    return shortest_command([*waterdrum_program(), "demo"], config)


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
