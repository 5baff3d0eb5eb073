"""save_model and push_to_hub write a model card, as TRL's trainers do (checked offline)."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from datasets import Dataset
from huggingface_hub import ModelCard
from peft import LoraConfig
from trainer_setup import FORGET_QA, RETAIN_QA, make_config

from waterdrum_hf import trainers

ROWS = Dataset.from_dict(
    {
        "question": [r["question"] for r in FORGET_QA + RETAIN_QA + RETAIN_QA[:2]],
        "answer": [r["answer"] for r in FORGET_QA + RETAIN_QA + RETAIN_QA[:2]],
        "forget": [True] * 4 + [False] * 6,
    }
)


def trainer_for(method, model, tmp_path, **kwargs):
    trainer_class, _ = trainers.get(method)
    return trainer_class(
        model=model, args=make_config(method, tmp_path), train_dataset=ROWS, **kwargs
    )


@pytest.mark.parametrize("method", trainers.available())
def test_the_card_names_method_paper_base_model_data_and_versions(method, tiny_folder, tmp_path):
    trainer = trainer_for(method, str(tiny_folder), tmp_path)
    trainer.save_model(str(tmp_path / "saved"))
    card = ModelCard.load(tmp_path / "saved" / "README.md")
    trainer_class = type(trainer)
    paper = trainer_class.paper
    assert {"unlearning", "waterdrum", method} <= set(card.data.tags)
    assert card.data.library_name == "transformers"
    text = card.text
    assert f"`{trainer_class.__name__}`" in text and trainer_class.description in text
    assert paper.title in text and f"https://huggingface.co/papers/{paper.arxiv_id}" in text
    assert paper.citation in text and "@article{lu2025waterdrum," in text
    assert f"from\n`{tiny_folder}`" in text or f"`{tiny_folder}`" in text
    assert "| forget | 4 |" in text and "| retain | 6 |" in text
    for package in ("transformers", "torch", "peft", "trl", "waterdrum-hf"):
        assert f"- {package}: {version(package)}" in text
    assert "No `WaterDrumCallback` ran" in text


def test_the_card_holds_the_last_waterdrum_values(tiny_folder, tmp_path):
    trainer = trainer_for("npo", str(tiny_folder), tmp_path)
    trainer.state.log_history += [
        {"waterdrum/forget": 0.61, "waterdrum/retain": 0.55, "step": 0},
        {"loss": 1.0, "step": 5},
        {"waterdrum/forget": 0.0312, "waterdrum/retain": 0.52, "step": 10},
        {"waterdrum/separability_auroc": 0.97, "step": 10},
    ]
    trainer.save_model()
    text = (tmp_path / "README.md").read_text()
    assert "(step 10)" in text
    assert "| `waterdrum/forget` | 0.0312 |" in text and "0.61" not in text
    assert "| `waterdrum/retain` | 0.52 |" in text
    assert "| `waterdrum/separability_auroc` | 0.97 |" in text
    assert "No `WaterDrumCallback` ran" not in text


def test_a_peft_card_says_peft_and_pairs_without_counts_say_so(tiny_folder, tmp_path):
    from waterdrum_hf.data import ForgetRetainDataset

    trainer = trainers.KLTrainer(
        model=str(tiny_folder),
        args=make_config("kl", tmp_path),
        train_dataset=ForgetRetainDataset(FORGET_QA, RETAIN_QA),
        peft_config=LoraConfig(r=4, target_modules=["q_proj"]),
    )
    trainer.save_model()
    card = ModelCard.load(tmp_path / "README.md")
    assert card.data.library_name == "peft"
    assert "| forget | 4 |" in card.text  # a ForgetRetainDataset knows its sides
    assert (tmp_path / "adapter_config.json").exists()


def test_push_to_hub_writes_the_card_it_uploads(tiny_folder, tmp_path, monkeypatch):
    import transformers.trainer as hf_trainer

    uploaded = {}

    class FakeApi:
        def upload_folder(self, *, folder_path, **kwargs):
            uploaded["card"] = ModelCard.load(f"{folder_path}/README.md")
            uploaded["repo"] = kwargs["repo_id"]

    monkeypatch.setattr(hf_trainer, "hf_api", FakeApi)
    trainer = trainer_for("simnpo", str(tiny_folder), tmp_path)
    monkeypatch.setattr(trainer, "init_hf_repo", lambda **_: None)
    trainer.hub_model_id = "someone/simnpo-tiny"
    trainer.push_to_hub(dataset_name="local/tofu-forget10", tags=["tofu"])
    card = uploaded["card"]
    assert uploaded["repo"] == "someone/simnpo-tiny"
    assert card.data.datasets == ["local/tofu-forget10"]
    assert {"tofu", "unlearning", "waterdrum", "simnpo"} <= set(card.data.tags)
    assert trainers.SimNPOTrainer.paper.title in card.text


def test_the_card_keeps_the_evaluation_results_a_callback_wrote(tiny_folder, tmp_path):
    """WaterDrumCallback writes model-index into README.md when training ends; saving the
    model afterwards rewrites the card but keeps those results."""
    from waterdrum_hf import HubResultsConfig
    from waterdrum_hf.hub_results.publish import write_hub_results

    trainer = trainer_for("npo", str(tiny_folder), tmp_path)
    result = {"forget": 0.05, "retain": 0.6, "num_queries": 4, "num_scored": 8, "num_skipped": 0}
    write_hub_results(result, tmp_path, HubResultsConfig("local-owners"))
    trainer.save_model()
    card = ModelCard.load(tmp_path / "README.md")
    values = {r.metric_type: r.metric_value for r in card.data.eval_results}
    assert values["waterdrum_forget"] == 0.05 and values["waterdrum_retain"] == 0.6
    assert "unlearning" in card.data.tags and "NPOTrainer" in card.text
