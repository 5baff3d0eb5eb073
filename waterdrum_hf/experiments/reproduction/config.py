"""What the paper reproduction runs: one frozen, validated dataclass (a CLI via its ``help``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal, get_args

from waterdrum_hf.schemes import SCHEMES
from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.validation import check_positive_fields, check_positive_int

SETTINGS = ("no_duplicate", "exact_duplicate", "semantic_duplicate")
"""The paper's similarity settings (desideratum D4)."""

TEXT_METHODS = ("gradascent", "graddiff", "kl", "scrub", "npo", "simnpo", "taskvector")
"""The registered trainers that apply to plain text (IdkDPO and IdkNLL need QA data)."""

Dataset = Literal["toy", "toy-qa", "waterdrum-ax", "waterdrum-tofu"]
DATASETS = get_args(Dataset)
BUILT_IN = ("toy", "toy-qa")
"""The built-in corpora (passages; questions about fictitious authors), watermarked here."""
QA_DATASETS = ("toy-qa", "waterdrum-tofu")
"""The datasets of questions and answers (queried with the question, ROUGE-L on the answer)."""
SCHEME_NAMES = tuple(SCHEMES)
"""The schemes a reproduction can watermark with and compare (the registry's)."""


@dataclass(frozen=True)
class ReproductionConfig:
    """Sizes of the reproduction. Defaults: the built-in corpus and small model, about 47 minutes
    on 2 CPU cores; :meth:`quick` runs in about 5 minutes. Every field is a flag of
    ``waterdrum reproduce`` (its ``help`` is the flag's)."""

    output_dir: str = flag("reproduction", "Where results and the cache go.")
    dataset_name: Dataset = flag(
        "toy",
        "toy (built-in passages), toy-qa (built-in questions about fictitious authors, TOFU's "
        "shape; both watermarked here), waterdrum-ax or waterdrum-tofu (published).",
    )
    dataset_config: str | None = flag(
        None, "Configuration of a published dataset (default forget_01 for Ax, forget_10 for TOFU)."
    )
    dataset_path: str | None = flag(None, "Local copy of the dataset's Hub repository.")
    model_name_or_path: str | None = flag(
        None, "Base model to fine-tune (default: the built-in small model)."
    )
    watermark_tokenizer: str | None = flag(None, "Tokenizer that watermarked a published dataset.")
    owners: int = flag(5, "Data owners (authors in toy-qa) of the built-in corpora.")
    forget: int = flag(1, "Owners (the last ones) to forget, built-in corpora.")
    passages_per_owner: int = flag(
        10, "Training passages (toy-qa: questions, at most 10) per owner, built-in corpora."
    )
    holdout_per_owner: int = flag(
        10, "Held-out passages per forget owner (MIA); toy-qa: questions per held-out author."
    )
    max_rows_per_owner: int | None = flag(None, "Subsample a published dataset per owner.")
    settings: tuple[str, ...] = flag(
        (), "Similarity settings to run (default: all three; with --schemes, no_duplicate)."
    )
    watermarking: Literal["paraphrase", "substitution"] = flag(
        "paraphrase",
        "Toy corpus: 'substitution' (few tokens changed, a faithful-paraphraser stand-in) or 'paraphrase' (the small model's Waterfall paraphrase).",
    )
    scheme: str = flag(
        "waterfall",
        (
            "Watermark scheme of the toy corpus and of verification: waterfall (the "
            "paper's), kgw (adapted KGW), synthid (adapted Synth-ID) or exp_edit (adapted "
            "EXP-edit); other than waterfall, "
            "paraphrase watermarking only."
        ),
        choices=SCHEME_NAMES,
    )
    kappa: float = flag(2.0, "Waterfall's watermark strength on the toy corpus (the paper's 2).")
    delta: float = flag(2.0, "Adapted KGW's green-token bias on the toy corpus (the paper's 2).")
    schemes: tuple[str, ...] = flag(
        (),
        (
            "Compare these watermark schemes (e.g. waterfall kgw synthid) instead of the whole "
            "reproduction: D1 and D2 of each on the same owners and model recipe, and the "
            "verification time per text (the paper's Table 5). With it the defaults become "
            "the scheme comparison's: the no_duplicate setting, k = 0, 20, ..., 100 %, 3 "
            "seeds (about 9 minutes on 2 CPU cores)."
        ),
    )
    copy_bias: float = flag(8.0, "Substitution watermarking: preference for the source token.")
    fractions: tuple[float, ...] = flag(
        (),
        "Shares k/|D_F| of the forget set retrained on (D2) (default: 0, 0.1, ..., 1; with "
        "--schemes 0, 0.2, ..., 1).",
    )
    seeds: tuple[int, ...] = flag(
        (0, 1, 2),
        "Training and sampling seeds (e.g. 0 1 2).",
    )
    epochs: int = flag(30, "Fine-tuning epochs (the model must memorise).")
    batch_size: int = flag(4, "Batch size of fine-tuning and unlearning.")
    learning_rate: float = flag(2e-3, "Fine-tuning learning rate.")
    prefix_tokens: int = flag(24, "Query length in tokens (at most half a text).")
    num_samples: int = flag(2, "Completions sampled per query.")
    max_new_tokens: int = flag(64, "Tokens per sampled completion.")
    rouge_new_tokens: int = flag(32, "Tokens of the greedy continuation scored by ROUGE-L.")
    null_keys: int = flag(100, "Random keys for the null-corrected WaterDrum.")
    methods: tuple[str, ...] = flag(TEXT_METHODS, "Unlearning methods benchmarked.")
    unlearn_steps: int = flag(20, "Optimizer steps of each unlearning method.")
    unlearn_learning_rate: float = flag(2e-4, "Unlearning learning rate.")
    dilution_kappa: float = flag(2.0, "Strength of the model owner's own watermark.")
    mia_k: float = flag(0.4, "Share of least likely tokens in Min-k% Prob.")
    meta_evaluation: bool = flag(
        True,
        "Meta-evaluate every metric on the models (OpenUnlearning's protocol): faithfulness, "
        "and robustness to relearning and 4-bit quantization of each unlearned model.",
    )
    show_progress: bool | None = flag(None, "Progress bars (default: on a terminal).")

    _argument_group_name: ClassVar[str] = (
        "ReproductionConfig options"  # HfArgumentParser's --help section
    )
    QUICK: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {
            "owners": 4,
            "passages_per_owner": 4,
            "holdout_per_owner": 4,
            "seeds": (0,),
            "fractions": (0.0, 0.5, 1.0),
            "methods": ("graddiff", "kl", "npo", "taskvector"),
            "unlearn_steps": 10,
            "null_keys": 50,
        }
    )
    """The settings :meth:`quick` changes."""
    RUN: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"settings": SETTINGS, "fractions": tuple(i / 10 for i in range(11))}
    )
    """What ``settings`` and ``fractions`` left empty become in a reproduction."""
    COMPARISON: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"settings": ("no_duplicate",), "fractions": (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)}
    )
    """What they become in a scheme comparison (``schemes`` given): the paper compares schemes
    in one setting; six calibration points (k = 0, 20, ..., 100 %) and three seeds keep it to
    about 9 minutes on 2 CPU cores."""

    def __post_init__(self) -> None:
        for name, value in (self.COMPARISON if self.schemes else self.RUN).items():
            if getattr(self, name) == ():  # not given: the run's own default
                object.__setattr__(self, name, value)
        self._check_dataset()
        self._check_schemes()
        self._check_published()
        self._check_sizes()
        self._check_runs()
        self._check_training()

    def _check_dataset(self) -> None:
        """The dataset is known, and only the built-in corpus is watermarked here."""
        if self.dataset_name not in DATASETS:
            raise ValueError(
                f"`dataset_name` must be one of {', '.join(DATASETS)}, got {self.dataset_name!r}."
            )
        if self.watermarking not in ("substitution", "paraphrase"):
            raise ValueError(
                f"`watermarking` must be 'substitution' or 'paraphrase', got {self.watermarking!r}."
            )
        if self.dataset_name not in BUILT_IN and self.watermarking != "paraphrase":
            raise ValueError(
                "`watermarking` applies to the built-in corpora: published datasets come watermarked."
            )

    def _check_schemes(self) -> None:
        """Known schemes, at least two distinct ones to compare, each able to watermark this
        corpus this way."""
        for name in (self.scheme, *self.schemes):
            if name not in SCHEME_NAMES:
                raise ValueError(
                    f"a scheme must be one of {', '.join(SCHEME_NAMES)}, got {name!r}."
                )
        if len(set(self.schemes)) != len(self.schemes) or len(self.schemes) == 1:
            raise ValueError("`schemes` must name at least two distinct schemes to compare.")
        others = [s for s in (self.scheme, *self.schemes) if s != "waterfall"]
        if others and self.watermarking != "paraphrase":
            raise ValueError(
                "Substitution watermarking embeds Waterfall's watermark only: use "
                f"watermarking='paraphrase' with the {others[0]} scheme."
            )
        if self.dataset_name not in BUILT_IN and (self.scheme != "waterfall" or self.schemes):
            raise ValueError(
                "Published datasets are watermarked with Waterfall: other schemes (and scheme "
                "comparisons) run on the built-in corpus."
            )

    def _check_published(self) -> None:
        """A published dataset comes with the tokenizer that watermarked it, and gets its
        default configuration."""
        if self.dataset_name not in BUILT_IN and not self.watermark_tokenizer:
            raise ValueError(
                "A published dataset needs `watermark_tokenizer` (Llama-3.1-8B-Instruct's)."
            )
        if self.dataset_config is None and self.dataset_name not in BUILT_IN:
            default = "forget_01" if self.dataset_name == "waterdrum-ax" else "forget_10"
            object.__setattr__(self, "dataset_config", default)

    def _check_sizes(self) -> None:
        """Counts are positive integers; at least one owner forgotten and one retained."""
        check_positive_fields(
            self,
            "owners",
            "passages_per_owner",
            "holdout_per_owner",
            "epochs",
            "batch_size",
            "prefix_tokens",
            "num_samples",
            "max_new_tokens",
            "rouge_new_tokens",
            "unlearn_steps",
        )
        check_positive_int(self.null_keys, "null_keys")
        if self.max_rows_per_owner is not None:
            check_positive_int(self.max_rows_per_owner, "max_rows_per_owner")
        if not 1 <= self.forget < self.owners:
            raise ValueError("`forget` must be at least 1 and leave at least one retain owner.")
        if self.dataset_name == "toy-qa":
            from waterdrum_hf.data.qa_corpus import QUESTIONS

            for name in ("passages_per_owner", "holdout_per_owner"):
                if getattr(self, name) > len(QUESTIONS):
                    raise ValueError(
                        f"`{name}` must be at most {len(QUESTIONS)} with toy-qa: each author "
                        f"is asked {len(QUESTIONS)} questions."
                    )

    def _check_runs(self) -> None:
        """Known settings, distinct seeds, and fractions rising from 0 to 1."""
        unknown = sorted(set(self.settings) - set(SETTINGS))
        if unknown or not self.settings:
            raise ValueError(
                f"`settings` must be a non-empty subset of {', '.join(SETTINGS)}, got {unknown or 'none'}."
            )
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError("`seeds` must be distinct, and at least one.")
        fractions = sorted(set(self.fractions))
        if (
            fractions != list(self.fractions)
            or fractions[0] != 0
            or fractions[-1] != 1
            or len(fractions) < 3
        ):
            raise ValueError("`fractions` must rise from 0 to 1 with at least one point between.")

    def _check_training(self) -> None:
        """Registered unlearning methods, positive rates and strengths, and a share for MIA."""
        import waterdrum_hf.trainers as trainers

        for method in self.methods:
            trainers.get(method)
        for name in ("learning_rate", "unlearn_learning_rate", "dilution_kappa", "kappa", "delta"):
            if not getattr(self, name) > 0:
                raise ValueError(f"`{name}` must be > 0.")
        if not 0 < self.mia_k <= 1:
            raise ValueError("`mia_k` must be in (0, 1].")

    @classmethod
    def quick(cls, **overrides: Any) -> ReproductionConfig:
        """A small setting (about 5 minutes on 2 CPU cores): every experiment, fewer models."""
        return cls(**{**cls.QUICK, **overrides})

    def watermark_settings(self) -> dict[str, Any]:
        """What the toy corpus's watermarking takes: the scheme, its writing strength (kappa,
        delta) and, for a scheme that samples (Synth-ID), ``do_sample``."""
        from waterdrum_hf.watermarking.config import SCHEME_SETTINGS

        own = SCHEME_SETTINGS[self.scheme]
        strength: dict[str, Any] = {n: getattr(self, n) for n in ("kappa", "delta") if n in own}
        sampling = {"do_sample": True} if SCHEMES[self.scheme].requires_sampling else {}
        return {"scheme": self.scheme, **strength, **sampling}
