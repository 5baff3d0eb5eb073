"""The base of every unlearning trainer: paired batches, the frozen reference, logged loss terms.

Each training step sees one forget batch and one retain batch (:mod:`waterdrum_hf.data.pairing`)
and minimises ``forget_weight * forget_term + retain_weight * retain_term``. A method is a
subclass that defines :meth:`UnlearningTrainer.forget_loss` (and :meth:`~UnlearningTrainer.
retain_loss` where the retain NLL default does not fit) and says whether it needs the frozen
reference model. A weight of 0 skips its term, forward pass included: GD (fine-tuning on the
retain set) is GradDiff with ``forget_weight=0``.

Every loss masks prompt and padding tokens (see :mod:`.losses`) and is a per-batch mean; the
Trainer divides it by the gradient-accumulation steps. Each term and its components are logged
at every logging step as the mean over the logging window and over processes, like ``loss``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any, ClassVar, cast

import torch
from peft import PeftModel
from transformers import TrainerCallback, set_seed

from waterdrum_hf.bound_callback import bind_callbacks
from waterdrum_hf.trainers._card import CardFacts, ModelCardTrainer, Paper
from waterdrum_hf.trainers._data import (
    config_pairs,
    default_collator,
    pair_eval_dataset,
    row_counts,
)
from waterdrum_hf.trainers._model import (
    load_model,
    load_tokenizer,
    model_name,
    prepare_model,
)
from waterdrum_hf.trainers._reference import build_reference, peft_reference
from waterdrum_hf.trainers._upstream import disable_dropout
from waterdrum_hf.trainers.config import UnlearningConfig
from waterdrum_hf.trainers.losses import sequence_log_prob, sequence_nll, token_kl

Batch = Mapping[str, torch.Tensor]


class UnlearningTrainer(ModelCardTrainer):
    """A ``transformers.Trainer`` that unlearns a forget set while keeping a retain set.

    It takes what TRL's trainers take, so it drops into TRL's scripts in place of theirs.

    Args:
        model: the model to unlearn: a model id or local path (loaded with
            ``args.model_init_kwargs`` and ``args.trust_remote_code``), a ``PreTrainedModel``
            or a ``peft.PeftModel``.
        args: the method's config (``config_class``); its defaults when ``None``.
        ref_model: the frozen reference for methods that need one, an id, path or model. By
            default a PEFT model is its own reference with the adapter disabled, and any other
            model is deep-copied.
        train_dataset: one dataset in a TRL standard format (``text``; ``prompt`` and
            ``completion``; ``messages`` or prompt/completion as lists of messages) or QA
            (``question``, ``answer``), with a boolean ``forget`` column (``forget_column``):
            True for a forget row, False for a retain row. Or forget/retain pairs, e.g.
            ``ForgetRetainDataset(forget, retain)``.
        forget_dataset: the forget set, paired here with ``retain_dataset`` instead
            (``train_dataset`` is then left out).
        retain_dataset: the retain set, paired here with ``forget_dataset``.
        data_collator: defaults to one built from ``processing_class`` and the config.
        processing_class: the tokenizer; by default the one saved with the model.
        peft_config: a ``peft.PeftConfig`` (e.g. ``LoraConfig``) that wraps the model.
        quantization_config: applied when ``model`` is loaded here from an id or path (e.g.
            bitsandbytes 4-bit, which needs ``peft_config``: QLoRA).
        **kwargs: passed on to ``transformers.Trainer`` (``eval_dataset``, ``callbacks``, ...);
            an ``eval_dataset`` with a ``forget`` column is paired like ``train_dataset``.

    ``save_model`` and ``push_to_hub`` write a model card (``README.md``) beside the model. A
    callback that logs through its trainer (``WaterDrumCallback``) is bound to this one, given
    in ``callbacks`` or added with :meth:`add_callback`.
    """

    config_class: ClassVar[type[UnlearningConfig]] = UnlearningConfig
    method_name: ClassVar[str] = "unlearning"
    """The method's name in ``waterdrum_hf.trainers.available()``."""
    description: ClassVar[str] = "Unlearning: a forget term and a retain term."
    """What the method does, in one plain sentence (reports, model cards)."""
    paper: ClassVar[Paper | None] = None
    """The method's paper, named and cited in the model card."""
    args: UnlearningConfig  # an instance of config_class (checked in __init__)
    loss_is_scaled_for_ga = False  # per-batch means: the Trainer divides by accumulation steps

    def __init__(
        self,
        model: str | torch.nn.Module,
        args: UnlearningConfig | None = None,
        *,
        ref_model: str | torch.nn.Module | None = None,
        train_dataset: Any = None,
        forget_dataset: Any = None,
        retain_dataset: Any = None,
        data_collator: Any = None,
        processing_class: Any = None,
        peft_config: Any = None,
        quantization_config: Any = None,
        **kwargs: Any,
    ) -> None:
        """TRL's trainer signature (model, args, ref_model, datasets, collator,
        processing_class, peft_config, quantization_config) plus the two sets: 10 parameters,
        the house limit that ruff's PLR0913 checks (``**kwargs`` go on to ``Trainer``)."""
        args = self._checked_args(args)
        train_dataset = self._pairs(train_dataset, forget_dataset, retain_dataset, args)
        self.data_rows = row_counts(train_dataset)  # the data is checked before the model loads
        """``(forget rows, retain rows)`` of the training data (``None`` where not known)."""
        set_seed(args.seed)  # before a PEFT adapter is initialised, as TRL does
        loaded = load_model(model, args, quantization_config)
        self.base_model_name = model_name(loaded) or None
        """The id or path the model was loaded from (the model card's base model)."""
        if processing_class is None and data_collator is None:
            processing_class = load_tokenizer(loaded, self.base_model_name, args)
        model = self.trained_model(prepare_model(loaded, peft_config, args))
        if args.disable_dropout:
            disable_dropout(model)
        if kwargs.get("eval_dataset") is not None:
            kwargs["eval_dataset"] = pair_eval_dataset(
                kwargs["eval_dataset"],
                lambda rows: self._pairs(rows, None, None, args),
                args.forget_column,
            )
        if data_collator is None:
            data_collator = default_collator(processing_class, args)
        super().__init__(
            model=model,
            args=args,
            data_collator=data_collator,
            train_dataset=train_dataset,
            processing_class=processing_class,
            **kwargs,
        )
        self._metrics: dict[str, defaultdict[str, list[torch.Tensor]]] = {
            "train": defaultdict(list),
            "eval": defaultdict(list),
        }
        self._eval_prefix = "eval"
        # transformers < 5.19 reads this instead of `loss_is_scaled_for_ga`.
        self.model_accepts_loss_kwargs = False
        if isinstance(ref_model, torch.nn.Module) and ref_model is model:
            raise ValueError("ref_model is the trained model itself; leave it out (None)")
        self.ref_model, self._ref_adapter = build_reference(
            self, ref_model, quantization_config, needed=self.needs_reference
        )
        bind_callbacks(self)

    def _checked_args(self, args: UnlearningConfig | None) -> UnlearningConfig:
        """``args``, or the method's default config; a config of another method is refused."""
        args = self.config_class() if args is None else args
        if not isinstance(args, self.config_class):
            raise TypeError(
                f"args must be a {self.config_class.__name__} for {type(self).__name__}, got "
                f"{type(args).__name__}"
            )
        return args

    def _pairs(self, rows: Any, forget: Any, retain: Any, args: UnlearningConfig) -> Any:
        """Forget/retain pairs of the data as given (see the class)."""
        return config_pairs(rows, forget, retain, args, self.alternative_answers(args))

    def add_callback(self, callback: type[TrainerCallback] | TrainerCallback) -> None:
        """``Trainer.add_callback``; a callback that acts through its trainer (such as
        ``WaterDrumCallback``) is bound to this one, as those given in ``callbacks=`` are."""
        super().add_callback(callback)
        bind_callbacks(self)

    def trained_model(self, model: torch.nn.Module) -> torch.nn.Module:
        """The model this trainer trains, given the prepared ``model`` (itself by default)."""
        return model

    # ---- what a method defines -------------------------------------------------------------

    def alternative_answers(self, args: UnlearningConfig) -> list[str] | None:
        """Answers paired with forget questions (refusals for the IDK methods); ``None``: none."""
        return None

    def forget_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        """The forget term, a scalar to minimise."""
        raise NotImplementedError(f"{type(self).__name__} must define forget_loss")

    def retain_loss(self, model: torch.nn.Module, inputs: Mapping[str, Batch]) -> torch.Tensor:
        """The retain term, a scalar to minimise: by default NLL on the retain batch."""
        return self.retain_nll(model, inputs)

    @property
    def needs_reference(self) -> bool:
        """Whether the method runs the frozen reference model (a class attribute where it always
        does, a property where settings decide)."""
        return False

    def loss_weights(self) -> tuple[float, float]:
        """``(forget_weight, retain_weight)`` of this step; a weight of 0 skips its term."""
        return self.args.forget_weight, self.args.retain_weight

    # ---- the loss --------------------------------------------------------------------------

    def compute_loss(
        self,
        model: torch.nn.Module,
        inputs: dict[str, Any],
        return_outputs: bool = False,
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """``forget_weight * forget_loss + retain_weight * retain_loss``, each term logged.

        A plain causal-LM batch (no forget/retain) is scored with the model's own loss during
        evaluation and refused during training. ``num_items_in_batch`` is not used: every term is
        a per-batch mean.
        """
        if not _is_paired(inputs):
            if model.training:
                raise ValueError(
                    f"{type(self).__name__} trains on forget/retain pairs, but the batch has keys "
                    f"{sorted(inputs)}; collate ForgetRetainDataset items with "
                    "waterdrum_hf.data.ForgetRetainCollator (the default when processing_class "
                    "is given and data_collator is not)"
                )
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        forget_weight, retain_weight = self.loss_weights()
        terms = {}
        if forget_weight:
            terms["loss/forget"] = forget_weight, self.forget_loss(model, inputs)
        if retain_weight:
            terms["loss/retain"] = retain_weight, self.retain_loss(model, inputs)
        for name, (_, value) in terms.items():
            self.record(name, value)
        # A tensor: the config refuses two zero weights, so at least one term is here.
        loss = cast(torch.Tensor, sum(weight * value for weight, value in terms.values()))
        if return_outputs:
            return loss, {name: value.detach() for name, (_, value) in terms.items()}
        return loss

    # ---- building blocks for the terms -----------------------------------------------------

    def forward(self, model: torch.nn.Module, batch: Batch) -> torch.Tensor:
        """The model's logits on one side of the pairs."""
        logits: torch.Tensor = model(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
        ).logits
        return logits

    def reference_forward(self, model: torch.nn.Module, batch: Batch) -> torch.Tensor:
        """The frozen reference's logits on one side of the pairs (no gradient)."""
        with torch.no_grad():
            if self.ref_model is not None:
                return self.forward(self.ref_model, batch)
            unwrapped = self.accelerator.unwrap_model(model)
            if not isinstance(unwrapped, PeftModel):
                raise RuntimeError(
                    f"{type(self).__name__}.needs_reference is False, so no reference model was "
                    "set up; a method that calls reference_forward must set it to True"
                )
            with peft_reference(unwrapped, self._ref_adapter):
                return self.forward(unwrapped, batch)

    def nll(self, model: torch.nn.Module, batch: Batch) -> torch.Tensor:
        """Mean over sequences of the per-sequence mean NLL of the labelled tokens."""
        return sequence_nll(self.forward(model, batch), batch["labels"]).mean()

    def log_prob(
        self, model: torch.nn.Module, batch: Batch, *, reference: bool = False
    ) -> torch.Tensor:
        """``log pi(y|x)`` per sequence, of the model or (``reference=True``) of the reference."""
        forward = self.reference_forward if reference else self.forward
        return sequence_log_prob(forward(model, batch), batch["labels"])

    def retain_nll(
        self,
        model: torch.nn.Module,
        inputs: Mapping[str, Batch],
        logits: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """NLL on the retain batch, logged as ``loss/retain_nll``."""
        retain = inputs["retain"]
        logits = self.forward(model, retain) if logits is None else logits
        value = sequence_nll(logits, retain["labels"]).mean()
        self.record("loss/retain_nll", value)
        return value

    def retain_kl(
        self,
        model: torch.nn.Module,
        inputs: Mapping[str, Batch],
        logits: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Token-level ``KL(p_ref || p)`` on the retain batch, logged as ``loss/retain_kl``."""
        value = self.kl_from_reference(model, inputs["retain"], logits)
        self.record("loss/retain_kl", value)
        return value

    def kl_from_reference(
        self, model: torch.nn.Module, batch: Batch, logits: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Mean over sequences of the token-level ``KL(p_ref || p)`` on labelled tokens."""
        logits = self.forward(model, batch) if logits is None else logits
        return token_kl(self.reference_forward(model, batch), logits, batch["labels"]).mean()

    # ---- logging ---------------------------------------------------------------------------

    def record(self, name: str, value: torch.Tensor | float) -> None:
        """Add a value to the metric ``name``; the next log reports its mean since the last one."""
        mode = self._mode()
        value = value.detach() if isinstance(value, torch.Tensor) else torch.tensor(value)
        self._metrics[mode][name].append(value.to(self.accelerator.device, torch.float32))

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """Add the recorded metrics, averaged over the window and over processes, to ``logs``.

        Only the trainer's own loss logs (``loss`` in training, ``<prefix>_loss`` in
        evaluation) take them: a callback logging other values through ``trainer.log`` (e.g.
        WaterDrumCallback, maybe on the main process only) neither receives nor consumes them.
        """
        mode = self._mode()
        pending = self._metrics[mode]
        prefix = "" if mode == "train" else f"{self._eval_prefix}_"
        if pending and f"{prefix}loss" in logs:
            names = sorted(pending)
            local = torch.stack([torch.stack(pending[name]).mean() for name in names])
            means = self.accelerator.reduce(local, reduction="mean").tolist()
            logs.update({f"{prefix}{name}": mean for name, mean in zip(names, means, strict=True)})
            pending.clear()
        super().log(logs, start_time)

    def _mode(self) -> str:
        """``"train"`` while the model trains, else ``"eval"``."""
        return "train" if self.model is not None and self.model.training else "eval"

    # ---- evaluation ------------------------------------------------------------------------

    def evaluate(
        self,
        eval_dataset: Any = None,
        ignore_keys: list[str] | None = None,
        metric_key_prefix: str = "eval",
    ) -> dict[str, float]:
        """``Trainer.evaluate``; pair batches report their loss terms as ``{prefix}_loss/...``."""
        self._metrics["eval"].clear()
        self._eval_prefix = metric_key_prefix
        return super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)

    def prediction_step(
        self,
        model: torch.nn.Module,
        inputs: dict[str, Any],
        prediction_loss_only: bool,
        ignore_keys: list[str] | None = None,
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
        """The loss of a pair batch (no logits: there are several forward passes), else as usual."""
        if not _is_paired(inputs):
            return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys)
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss = cast(torch.Tensor, self.compute_loss(model, inputs))  # no return_outputs
        return loss.detach(), None, None

    def end(self) -> None:
        """``Trainer.end`` (transformers >= 5.18; TRL's scripts call it last), after releasing
        the distributed (DDP) wrapper of the model while the process group still exists.

        Left to interpreter exit, the wrapper's reducer frees torch's gloo process group there,
        and its destructor can deadlock waiting for the interpreter lock (seen with torch 2.13
        on CPU processes: the script hangs after saving the model).
        """
        if self.model is not None:
            self.model_wrapped = self.model
        self.accelerator.free_memory()
        super().end()  # type: ignore[no-untyped-call]  # unannotated in transformers

    # ---- the model card --------------------------------------------------------------------

    def card_facts(self, model_name: str | None = None) -> CardFacts:
        """What the model card says about this run: the method, its data and base model."""
        forget_rows, retain_rows = self.data_rows
        return CardFacts(
            method=self.method_name,
            trainer=type(self).__name__,
            description=self.description,
            paper=self.paper,
            base_model=self.base_model_name,
            model_name=model_name,
            forget_rows=forget_rows,
            retain_rows=retain_rows,
            is_peft=isinstance(self.accelerator.unwrap_model(self.model), PeftModel),
        )


def _is_paired(inputs: Mapping[str, Any]) -> bool:
    return "forget" in inputs and "retain" in inputs
