"""WaterDrum's flags for a training script's own parser (``HfArgumentParser``, ``TrlParser``).

Add :class:`WaterDrumArguments` to the script's dataclass tuple; every field is prefixed
``waterdrum_`` so none clashes with ``TrainingArguments`` or TRL's configs, and the parsed object
builds the callback in one line::

    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig, WaterDrumArguments))
    script_args, training_args, model_args, waterdrum_args = parser.parse_args_and_config()
    ...
    trainer.add_callback(waterdrum_args.callback(eval_dataset, tokenizer, trainer=trainer))

``trainer=`` binds the callback to the trainer it logs through (transformers hands callbacks
none); the unlearning trainers of :mod:`waterdrum_hf.trainers` bind it themselves.

The flags (and a ``--config recipe.yaml``'s keys) are the fields' names:
``--waterdrum_null empirical --waterdrum_confidence 0.95 --waterdrum_eval_steps 20``. The
scoring fields become one :class:`~waterdrum_hf.WaterDrumConfig` (:meth:`scoring_config`),
validated when the arguments are parsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from waterdrum_hf.config import KEYWORDS, WaterDrumConfig, with_scoring_settings
from waterdrum_hf.utils.fields import flag

if TYPE_CHECKING:
    from waterdrum_hf.callbacks.callback import WaterDrumCallback
    from waterdrum_hf.callbacks.plan import CallbackPlan
    from waterdrum_hf.generation.sampling import SamplingConfig


@dataclass
@with_scoring_settings("waterdrum_")
class WaterDrumArguments:
    """WaterDrum's settings as parser flags: the data, the callback's schedule and sampling,
    then the scoring (one field per setting of :data:`~waterdrum_hf.config.SCORING_SETTINGS`;
    see the module docstring)."""

    waterdrum_watermark_tokenizer: str | None = flag(
        None, "Tokenizer that watermarked the data (name or path); needed for the callback."
    )
    waterdrum_id_column: str = flag("owner_id", "Column of each row's owner watermark id.")
    waterdrum_forget_ids_file: str | None = flag(
        None,
        "File with one forget owner id per line; default: the owners of the rows whose "
        "boolean `forget` column is true.",
    )
    waterdrum_text_column: str = flag("text", "Column of texts (completion queries).")
    waterdrum_question_column: str = flag(
        "question", "Column of questions (QA queries), used without a text column."
    )
    waterdrum_prefix_tokens: int = flag(50, "Query length: the first tokens of each text.")
    waterdrum_eval_steps: int = flag(50, "Evaluate every this many optimizer steps.")
    waterdrum_max_queries_per_owner: int | None = flag(
        None, "Evaluate at most this many queries per owner."
    )
    waterdrum_num_samples: int = flag(2, "Completions sampled per query.")
    waterdrum_max_new_tokens: int = flag(64, "Tokens per completion.")
    waterdrum_seed: int = flag(0, "Sampling seed (the same at every evaluation).")

    def __post_init__(self) -> None:
        self.scoring_config()  # every setting checked when the flags are parsed
        self.sampling_config()
        self.callback_plan()

    def scoring_config(self) -> WaterDrumConfig:
        """The scoring fields as one :class:`~waterdrum_hf.WaterDrumConfig`, read by
        :meth:`~waterdrum_hf.WaterDrumConfig.from_keywords` (as the ``evaluate`` keywords and the
        scripts' flags are)."""
        return WaterDrumConfig.from_keywords(
            {name: getattr(self, f"waterdrum_{name}") for name in KEYWORDS}
        )

    def sampling_config(self) -> SamplingConfig:
        """The callback's sampling: samples, length and seed."""
        from waterdrum_hf.generation.sampling import SamplingConfig

        return SamplingConfig(
            num_samples=self.waterdrum_num_samples,
            max_new_tokens=self.waterdrum_max_new_tokens,
            seed=self.waterdrum_seed,
        )

    def callback_plan(self) -> CallbackPlan:
        """When the callback evaluates, and on how many queries per owner."""
        from waterdrum_hf.callbacks.plan import CallbackPlan

        return CallbackPlan(
            eval_steps=self.waterdrum_eval_steps,
            max_queries_per_owner=self.waterdrum_max_queries_per_owner,
        )

    def callback(self, dataset: Any, tokenizer: Any, **kwargs: Any) -> WaterDrumCallback:
        """A :class:`~waterdrum_hf.WaterDrumCallback` on ``dataset``'s rows (queries made with
        the trained model's ``tokenizer``); ``kwargs`` (``trainer``, which binds it,
        ``owner_names``, ``plan``...) go to the callback."""
        from waterdrum_hf.callbacks.callback import WaterDrumCallback

        if self.waterdrum_watermark_tokenizer is None:
            raise ValueError(
                "--waterdrum_watermark_tokenizer is required: the tokenizer that watermarked "
                "the data."
            )
        kwargs.setdefault("plan", self.callback_plan())
        return WaterDrumCallback.from_dataset(
            dataset,
            self._forget_ids(dataset),
            tokenizer,
            self.waterdrum_watermark_tokenizer,
            text_column=self.waterdrum_text_column,
            question_column=self.waterdrum_question_column,
            id_column=self.waterdrum_id_column,
            prefix_tokens=self.waterdrum_prefix_tokens,
            config=self.scoring_config(),
            sampling=self.sampling_config(),
            **kwargs,
        )

    def _forget_ids(self, dataset: Any) -> list[int]:
        """The forget owners: from the ids file, else the owners of ``forget`` rows."""
        from waterdrum_hf.keys import check_watermark_ids, read_watermark_ids

        if self.waterdrum_forget_ids_file is not None:
            return read_watermark_ids(self.waterdrum_forget_ids_file, "forget ids")
        if "forget" not in dataset.column_names:
            raise ValueError(
                "Give --waterdrum_forget_ids_file, or a boolean `forget` column in the dataset "
                f"(columns: {dataset.column_names})."
            )
        flags = list(dataset["forget"])
        if not all(isinstance(flag, bool) for flag in flags):
            raise TypeError("The dataset's `forget` column must be boolean (True: forget row).")
        owners = check_watermark_ids(list(dataset[self.waterdrum_id_column]), len(flags), "ids")
        return sorted({int(o) for o, flag in zip(owners, flags, strict=True) if flag})
