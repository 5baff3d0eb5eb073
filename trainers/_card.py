"""The model card an unlearning trainer writes beside the model it saves, as TRL's trainers do.

The card (``README.md``, written with ``huggingface_hub.ModelCard``) names the method and its
paper with a citation, the base model, the forget and retain row counts, the framework
versions, and, if a ``WaterDrumCallback`` logged during training, the last WaterDrum values
(the ``waterdrum/`` entries of ``trainer.state.log_history``). Its tags include ``unlearning``
and ``waterdrum``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from huggingface_hub import ModelCard, ModelCardData
from transformers import Trainer

from waterdrum_hf.trainers._upstream import installed_version

WATERDRUM_PREFIX = "waterdrum/"
TAGS = ("unlearning", "waterdrum")
FRAMEWORKS = ("waterdrum-hf", "trl", "transformers", "peft", "torch", "datasets", "tokenizers")

WATERDRUM_CITATION = """@article{lu2025waterdrum,
  title  = {WaterDrum: Watermark-based Data-centric Unlearning Metric},
  author = {Lu, Xinyang and Niu, Xinyuan and Lau, Gregory Kang Ruey and Bui, Nhung and
            Sim, Rachael Hwee Ling and Himawan, John Russell and Wen, Fanyu and
            Foo, Chuan-Sheng and Ng, See-Kiong and Low, Bryan Kian Hsiang},
  year   = {2025}
}"""


@dataclass(frozen=True)
class Paper:
    """The paper a method comes from: its title, arXiv id and BibTeX entry."""

    title: str
    arxiv_id: str
    citation: str


@dataclass(frozen=True)
class CardFacts:
    """What the card says about one run."""

    method: str
    trainer: str
    description: str
    paper: Paper | None
    base_model: str | None
    model_name: str | None = None
    forget_rows: int | None = None
    retain_rows: int | None = None
    dataset_name: str | None = None
    is_peft: bool = False
    tags: Sequence[str] = ()


TEMPLATE = """---
{{ card_data }}
---

# {{ facts.model_name or "Unlearned model" }}

This model was unlearned from {% if facts.base_model %}`{{ facts.base_model }}`{% else %}a
model built in memory{% endif %} with waterdrum-hf's `{{ facts.trainer }}` (method
`{{ facts.method }}`). {{ facts.description }}

## Data

| rows | count |
| --- | --- |
| forget | {{ forget_rows }} |
| retain | {{ retain_rows }} |
{% if facts.dataset_name %}
Dataset: `{{ facts.dataset_name }}`.
{% endif %}
## WaterDrum
{% if waterdrum %}
The last values a `WaterDrumCallback` logged (step {{ waterdrum_step }}): the forget value near
0 means the forget owners' watermarks no longer show in the model's text; the retain value
should stay near its value before unlearning.

| value | |
| --- | --- |
{% for name, value in waterdrum %}| `{{ name }}` | {{ value }} |
{% endfor %}{% else %}
No `WaterDrumCallback` ran during training, so no WaterDrum values were logged.
{% endif %}
{% if facts.paper %}## Method

`{{ facts.method }}` comes from
[{{ facts.paper.title }}](https://huggingface.co/papers/{{ facts.paper.arxiv_id }}).
{% endif %}
## Framework versions

{% for name, number in versions %}- {{ name }}: {{ number }}
{% endfor %}
## Citations
{% if facts.paper %}
`{{ facts.method }}`:

```bibtex
{{ facts.paper.citation }}
```
{% endif %}
WaterDrum:

```bibtex
{{ waterdrum_citation }}
```
"""


def last_waterdrum_values(
    log_history: Iterable[Mapping[str, Any]],
) -> tuple[dict[str, Any], int | None]:
    """``({name: value}, step)``: the last value of every ``waterdrum/`` key logged, and the
    step of the last entry that held one."""
    values: dict[str, Any] = {}
    step = None
    for entry in log_history:
        found = {k: v for k, v in entry.items() if k.startswith(WATERDRUM_PREFIX)}
        if found:
            values.update(found)
            step = entry.get("step", step)
    return values, step


def framework_versions() -> list[tuple[str, str]]:
    """``(package, version)`` of the frameworks installed among :data:`FRAMEWORKS`."""
    installed = [(name, installed_version(name)) for name in FRAMEWORKS]
    return [(name, number) for name, number in installed if number is not None]


def model_card(facts: CardFacts, log_history: Iterable[Mapping[str, Any]]) -> ModelCard:
    """The card of one run (see the module)."""
    values, step = last_waterdrum_values(log_history)
    is_hub_id = bool(facts.base_model and not os.path.isdir(facts.base_model))
    card_data = ModelCardData(
        base_model=facts.base_model if is_hub_id else None,
        datasets=[facts.dataset_name] if facts.dataset_name else None,
        library_name="peft" if facts.is_peft else "transformers",
        model_name=facts.model_name,
        tags=sorted({*TAGS, facts.method.lower(), *facts.tags}),
    )
    card: ModelCard = ModelCard.from_template(
        card_data,
        template_str=TEMPLATE,
        facts=facts,
        forget_rows=_count(facts.forget_rows),
        retain_rows=_count(facts.retain_rows),
        waterdrum=[(name, _number(value)) for name, value in sorted(values.items())],
        waterdrum_step=step,
        versions=framework_versions(),
        waterdrum_citation=WATERDRUM_CITATION,
    )
    return card


def write_model_card(card: ModelCard, output_dir: str, model_name: str | None) -> None:
    """Save ``card`` as ``output_dir/README.md``, keeping the evaluation results (model-index)
    that a callback wrote there (the card then names the model, ``model_name``, they are of)."""
    os.makedirs(output_dir, exist_ok=True)
    path = os.path.join(output_dir, "README.md")
    if os.path.isfile(path):
        # A ModelCard's data is ModelCardData; huggingface_hub types it as the base class.
        kept = cast(ModelCardData, ModelCard.load(path).data).eval_results
        if kept:
            data = cast(ModelCardData, card.data)
            data.eval_results = kept
            data.model_name = data.model_name or model_name
    card.save(path)


class ModelCardTrainer(Trainer):
    """A ``Trainer`` whose ``save_model`` and ``push_to_hub`` write a model card, as TRL's
    trainers do; a subclass says what the card holds (:meth:`card_facts`)."""

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        """``Trainer.save_model``, then the model card (``README.md``) beside the model."""
        super().save_model(output_dir, _internal_call)
        self.create_model_card(output_dir=output_dir)

    def create_model_card(  # type: ignore[override]  # TRL's signature, not Trainer's
        self,
        model_name: str | None = None,
        dataset_name: str | None = None,
        tags: str | list[str] | None = None,
        output_dir: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Write the model card (``README.md``) to ``output_dir`` (default ``args.output_dir``)
        on the main process: the method and its paper, the base model, the forget and retain
        row counts, the last WaterDrum values logged, the framework versions. ``push_to_hub``
        calls it with ``model_name`` and its own keyword arguments (``dataset_name``, ``tags``;
        transformers' others, such as ``dataset``, are accepted and not used)."""
        if not self.is_world_process_zero():
            return
        output_dir = self.args.output_dir if output_dir is None else output_dir
        assert output_dir is not None  # TrainingArguments sets a default folder
        tags = [tags] if isinstance(tags, str) else list(tags or [])
        facts = self.card_facts(model_name or os.path.basename(os.path.normpath(output_dir)))
        facts = dataclasses.replace(facts, dataset_name=dataset_name, tags=tags)
        write_model_card(model_card(facts, self.state.log_history), output_dir, facts.model_name)

    def card_facts(self, model_name: str | None = None) -> CardFacts:
        """What the model card says about this run."""
        raise NotImplementedError(f"{type(self).__name__} must define card_facts")


def _count(rows: int | None) -> str:
    return "not known (pairs given as one dataset)" if rows is None else str(rows)


def _number(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
