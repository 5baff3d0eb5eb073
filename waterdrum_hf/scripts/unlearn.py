"""``waterdrum unlearn``: unlearn data owners with a registered method, as TRL's scripts train.

Runs the recipes of ``examples/recipes/`` as they are, the way TRL's ``sft.py`` runs its own:
``waterdrum unlearn npo --config examples/recipes/npo.yaml --model_name_or_path M
--dataset_name D``: the method is the first word, as ``trl sft`` names its trainer. The argument
groups are TRL's ``ScriptArguments`` (the dataset) and ``ModelConfig`` (the model;
``--use_peft`` with the LoRA flags; quantization), the method's config (a ``TrainingArguments``:
``waterdrum_hf.trainers.get(METHOD)[1]``) and ``WaterDrumArguments``: with
``--waterdrum_watermark_tokenizer`` the
``WaterDrumCallback`` logs forget and retain values through ``report_to``, and the model card
gets the last ones.

The dataset (a Hub id, a local folder or a file) is one table whose boolean ``forget`` column
(``--forget_column``) marks the rows to forget. Rows with an owner id column and a list of
forget ids become one with ``waterdrum_hf.data.mark_forget(rows, forget_ids)``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trl.scripts.utils import ScriptArguments
from trl.trainer.model_config import ModelConfig

from waterdrum_hf.callbacks.arguments import WaterDrumArguments
from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.files import check_output_folder, read_table
from waterdrum_hf.scripts.models import model_tokenizer
from waterdrum_hf.scripts.parser import CliError, ScriptParser
from waterdrum_hf.tiny import pretrained_location
from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.files import check_local_location

TRAINING_FLAGS_SHOWN = (
    "output_dir",
    "learning_rate",
    "num_train_epochs",
    "max_steps",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "seed",
    "bf16",
    "report_to",
    "push_to_hub",
)
"""The flags of transformers' ``TrainingArguments`` that ``--help`` shows (``--help-all``
shows the rest; every one is taken)."""

SAVED_MODEL_FILES = ("config.json", "adapter_config.json")
"""A folder holding one of these holds a saved model (or PEFT adapter)."""


@dataclass
class UnlearnArguments:
    """Whether a saved model may be replaced."""

    overwrite: bool = flag(False, "Replace a model already saved in --output_dir.")


def subcommand(argv: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """``METHOD [options]``: the parser's keywords (the method, its first word) and the
    options; without a method (``--help``) the options every method shares."""
    if argv and not argv[0].startswith("-"):
        return {"method": argv[0]}, list(argv[1:])
    return {"method": None}, list(argv)


def make_parser(prog: str | None = None, method: str | None = None) -> ScriptParser:
    """``TrlParser`` over the script's groups, with ``method``'s config (the config every
    method shares when no method is named yet)."""
    from transformers import TrainingArguments

    import waterdrum_hf.trainers as trainers

    config_class = trainers.get(method)[1] if method else trainers.UnlearningConfig
    return ScriptParser(
        (UnlearnArguments, ScriptArguments, config_class, ModelConfig, WaterDrumArguments),
        prog=f"{prog} {trainers.canonical_name(method)}" if prog and method else prog,
        usage="%(prog)s [--config recipe.yaml] [options below]"
        if method
        else "%(prog)s METHOD [--config recipe.yaml] [options below]",
        description=__doc__,
        epilog=f"methods: {', '.join(trainers.available())}",
        brief_help={f.name for f in dataclasses.fields(TrainingArguments)}
        - set(TRAINING_FLAGS_SHOWN),
        brief_help_name="transformers' TrainingArguments",
    )


def main(
    args: UnlearnArguments,
    script_args: ScriptArguments,
    training_args: Any,  # the method's config, an UnlearningConfig
    model_args: ModelConfig,
    waterdrum_args: WaterDrumArguments,
) -> int:
    from trl.trainer.utils import get_peft_config, get_quantization_config

    import waterdrum_hf.trainers as trainers

    if type(training_args) is trainers.UnlearningConfig:
        raise CliError(
            "name the method first: waterdrum unlearn METHOD [options] (methods: "
            f"{', '.join(trainers.available())})"
        )
    trainer_class = trainers.trainer_for(training_args)
    check_output(training_args.output_dir, overwrite=args.overwrite)
    if not model_args.model_name_or_path:
        raise CliError("--model_name_or_path is required (a folder, a Hub id or tiny)")
    model = pretrained_location(model_args.model_name_or_path, "model")
    if waterdrum_args != WaterDrumArguments() and not waterdrum_args.waterdrum_watermark_tokenizer:
        raise CliError(
            "the --waterdrum_* settings configure the WaterDrum callback: give "
            "--waterdrum_watermark_tokenizer (the tokenizer that watermarked the data) too"
        )
    training_args.model_init_kwargs = {
        "revision": model_args.model_revision,
        "attn_implementation": model_args.attn_implementation,
        "dtype": model_args.dtype,
        **(training_args.model_init_kwargs or {}),
    }
    rows = train_rows(script_args)
    if training_args.forget_column not in rows.column_names:
        raise CliError(
            f"dataset {script_args.dataset_name!r} has no {training_args.forget_column!r} column "
            f"(columns: {', '.join(rows.column_names)}): mark each row True (forget) or False "
            "(retain), e.g. with waterdrum_hf.data.mark_forget, or pass --forget_column"
        )
    tokenizer = callbacks = None
    if waterdrum_args.waterdrum_watermark_tokenizer:  # checked before the weights load
        tokenizer = model_tokenizer(model, revision=model_args.model_revision)
        callbacks = [waterdrum_args.callback(rows, tokenizer)]  # the trainer binds it
    trainer = trainer_class(
        model=model,
        args=training_args,
        train_dataset=rows,
        processing_class=tokenizer,
        callbacks=callbacks,
        peft_config=get_peft_config(model_args),
        quantization_config=get_quantization_config(model_args),
    )
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    trainer.save_model(training_args.output_dir)
    print(f"Unlearned with {trainer_class.method_name}; saved to {training_args.output_dir}")
    return 0


def check_output(folder: str, *, overwrite: bool) -> None:
    """Before any work: ``--output_dir`` can be written and holds no saved model (unless
    ``overwrite``)."""
    check_output_folder(folder, "--output_dir")
    if not overwrite and any((Path(folder) / name).is_file() for name in SAVED_MODEL_FILES):
        raise CliError(
            f"--output_dir {folder!r} already holds a saved model; pass --overwrite to replace it"
        )


def train_rows(script_args: ScriptArguments) -> Any:
    """The ``--dataset_train_split`` of ``--dataset_name``: a file or ``save_to_disk`` folder
    (:func:`~waterdrum_hf.scripts.files.read_table`), a folder of data files, or a Hub id
    (``datasets.load_dataset``, with ``--dataset_config``)."""
    from datasets import DatasetDict, load_dataset, load_from_disk

    name = script_args.dataset_name
    if not name:
        raise CliError("--dataset_name is required (a Hub id, a local folder or a file)")
    location = Path(name)
    if location.is_file():
        return read_table(name, what="dataset")
    if (location / "dataset_dict.json").is_file() or (location / "state.json").is_file():
        rows = load_from_disk(name)
    else:
        check_local_location(name, "dataset", file_ok=True)  # a local-looking name not there
        rows = load_dataset(name, name=script_args.dataset_config)
    if not isinstance(rows, DatasetDict):
        return rows
    if script_args.dataset_train_split not in rows:
        raise CliError(
            f"dataset {name!r} has no split {script_args.dataset_train_split!r} (splits: "
            f"{', '.join(rows)}); pass --dataset_train_split"
        )
    return rows[script_args.dataset_train_split]


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum unlearn"))
