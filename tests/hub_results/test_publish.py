"""WaterDrum results in the Hub's formats (``waterdrum_hf.hub_results.publish``): the card's
``model-index`` read back with ``huggingface_hub.ModelCard.load``, the ``.eval_results/``
files read back with ``parse_eval_result_entries``, a card that already exists merged, and the
upload checked up to ``HfApi.upload_folder`` (mocked: no network)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from unittest import mock

import pytest
import yaml
from ascii_locale import run_in_ascii_locale
from huggingface_hub import HfApi, ModelCard, parse_eval_result_entries
from huggingface_hub.errors import (
    EntryNotFoundError,
    HFValidationError,
    RepositoryNotFoundError,
)
from tokenizer_builders import word_texts, word_tokenizer

from waterdrum_hf import WaterDrumResult, waterdrum_metrics
from waterdrum_hf.config import IntervalConfig, NullConfig, WaterDrumConfig
from waterdrum_hf.data.hub import WATERDRUM_AX, WATERDRUM_TOFU
from waterdrum_hf.hub_results.publish import (
    HubResultsConfig,
    eval_result_entries,
    model_index_results,
    push_hub_results,
    write_hub_results,
)

KEYS = [3_000_000_017, 3_999_999_929]
TOFU = HubResultsConfig(
    WATERDRUM_TOFU, dataset_config="forget_10", dataset_split="full", scheme="waterfall"
)


@pytest.fixture(scope="module")
def result() -> dict:
    """A real flat result with null statistics and intervals (two owners, 12 queries)."""
    texts = word_texts(4096, 12, 40, seed=7)
    owners = [KEYS[i % 2] for i in range(12)]
    config = WaterDrumConfig(null=NullConfig("analytic"), interval=IntervalConfig(0.9, 200))
    return waterdrum_metrics(
        texts, owners, word_tokenizer(4096), config=config, forget_ids=[KEYS[1]]
    )


def card_values(card: ModelCard) -> dict[str, float]:
    return {r.metric_type: r.metric_value for r in card.data.eval_results}


def test_the_card_holds_every_scalar_as_an_eval_result(result, tmp_path):
    written = write_hub_results(result, tmp_path / "my-model", TOFU)
    assert written[0] == tmp_path / "my-model" / "README.md"
    card = ModelCard.load(written[0])
    assert card.data.model_name == "my-model"
    values = card_values(card)
    expected = {
        f"waterdrum_{k}": v
        for k, v in result.items()
        if k not in ("num_queries", "num_scored", "num_skipped", "confidence")
        and not k.endswith("_z")
    }
    assert values == pytest.approx(expected)
    assert {"waterdrum_forget", "waterdrum_forget_ci_low", "waterdrum_retain_p_value"} <= set(
        values
    )
    for row in card.data.eval_results:
        assert (row.task_type, row.dataset_type, row.dataset_name) == (
            "text-generation", WATERDRUM_TOFU, "WaterDrum-TOFU",
        )  # fmt: skip
        assert (row.dataset_config, row.dataset_split, row.metric_config) == (
            "forget_10", "full", "waterfall",
        )  # fmt: skip
    names = {r.metric_type: r.metric_name for r in card.data.eval_results}
    assert "90% interval low" in names["waterdrum_forget_ci_low"]
    assert "metadata" in card.text and "ICLR 2026" in card.text


def test_a_flat_dict_and_the_typed_result_give_the_same_rows(result):
    typed = WaterDrumResult.from_dict(result)
    assert model_index_results(typed, TOFU) == model_index_results(result, TOFU)
    assert eval_result_entries(typed, TOFU) == eval_result_entries(result, TOFU)


def test_eval_results_file_reads_back_with_huggingface_hubs_parser(result, tmp_path):
    written = write_hub_results(result, tmp_path, TOFU)
    assert [p.relative_to(tmp_path).as_posix() for p in written] == [
        "README.md",
        ".eval_results/waterdrum-tofu_forget_10.yaml",
    ]
    entries = parse_eval_result_entries(yaml.safe_load(written[1].read_text()))
    assert [e.task_id for e in entries] == [
        "forget_10/forget", "forget_10/retain", "forget_10/separability_auroc",
    ]  # fmt: skip
    assert {e.dataset_id for e in entries} == {WATERDRUM_TOFU}
    assert [e.value for e in entries] == pytest.approx(
        [result["forget"], result["retain"], result["separability_auroc"]]
    )
    forget = entries[0].notes
    assert f"{result['forget_ci_low']:.4f} to {result['forget_ci_high']:.4f}" in forget
    assert f"{result['forget_p_value']:.3g}" in forget


@pytest.mark.parametrize(
    "config",
    [
        HubResultsConfig("someone/my-own-queries", dataset_config="forget_10"),
        HubResultsConfig(WATERDRUM_AX),  # no config: no task to name
        HubResultsConfig("local-queries.jsonl"),
    ],
)
def test_only_a_published_benchmark_and_config_get_an_eval_results_file(result, tmp_path, config):
    written = write_hub_results(result, tmp_path, config)
    assert written == [tmp_path / "README.md"] and not (tmp_path / ".eval_results").exists()
    assert eval_result_entries(result, config) == []


def test_the_benchmark_id_is_matched_whatever_its_case(result):
    config = HubResultsConfig(WATERDRUM_AX.lower(), dataset_config="forget_01")
    assert [e.task_id for e in eval_result_entries(result, config)][0] == "forget_01/forget"


EXISTING_CARD = """---
license: apache-2.0
tags:
- unlearning
model-index:
- name: kept-name
  results:
  - task:
      type: text-generation
    dataset:
      name: Other
      type: org/other-benchmark
    metrics:
    - type: accuracy
      value: 0.5
  - task:
      type: text-generation
      name: Machine unlearning (WaterDrum)
    dataset:
      name: WaterDrum-TOFU
      type: Glow-AI/WaterDrum-TOFU
      config: forget_10
      split: full
    metrics:
    - type: waterdrum_forget
      value: 0.9
    - type: waterdrum_forget_ci_low
      value: 0.8
---

# A model

Written by its authors.
"""


def test_an_existing_card_keeps_its_text_and_other_results_and_loses_stale_values(result, tmp_path):
    (tmp_path / "README.md").write_text(EXISTING_CARD)
    without_intervals = {k: v for k, v in result.items() if "_ci_" not in k and k != "confidence"}
    write_hub_results(without_intervals, tmp_path, TOFU)
    card = ModelCard.load(tmp_path / "README.md")
    assert card.text.strip() == "# A model\n\nWritten by its authors."
    assert card.data.license == "apache-2.0" and card.data.tags == ["unlearning"]
    assert card.data.model_name == "kept-name"
    values = card_values(card)
    assert values["accuracy"] == 0.5  # another benchmark's result stays
    assert values["waterdrum_forget"] == pytest.approx(result["forget"])  # replaced
    assert "waterdrum_forget_ci_low" not in values  # no stale interval from the last run
    assert sum(t.startswith("waterdrum_forget") for t in values) == 4  # value, null x2, p
    again = write_hub_results(without_intervals, tmp_path, TOFU)  # idempotent
    assert card_values(ModelCard.load(again[0])) == values


def test_another_split_is_another_evaluation(result, tmp_path):
    write_hub_results(result, tmp_path, TOFU)
    other = HubResultsConfig(WATERDRUM_TOFU, dataset_config="forget_10", dataset_split="retain")
    write_hub_results(result, tmp_path, other)
    splits = {r.dataset_split for r in ModelCard.load(tmp_path / "README.md").data.eval_results}
    assert splits == {"full", "retain"}


def hub_error(kind, message="404"):
    """A ``huggingface_hub`` HTTP error as a 404 response raises it."""
    return kind(message, response=mock.Mock(headers={}, request=None, status_code=404))


def staged_upload(api):
    """Record the files ``upload_folder`` was given (the staging folder is removed after)."""
    uploaded = {}

    def upload_folder(**kwargs):
        folder = Path(kwargs["folder_path"])
        uploaded.update(
            {
                p.relative_to(folder).as_posix(): p.read_text()
                for p in folder.rglob("*")
                if p.is_file()
            }
        )
        uploaded["__kwargs__"] = kwargs
        return "commit-info"

    api.upload_folder.side_effect = upload_folder
    return uploaded


def test_push_merges_the_repositorys_card_and_uploads_one_folder(result, tmp_path):
    repo = tmp_path / "hub" / "someone" / "unlearned-model"  # the Hub's layout of the repo
    repo.mkdir(parents=True)
    (repo / "README.md").write_text(EXISTING_CARD)
    api = mock.create_autospec(HfApi, instance=True)
    api.hf_hub_download.return_value = str(repo / "README.md")
    uploaded = staged_upload(api)
    commit = push_hub_results(result, "someone/unlearned-model", TOFU, api=api, create_pr=True)
    assert commit == "commit-info"
    api.hf_hub_download.assert_called_once_with(
        "someone/unlearned-model", "README.md", repo_type="model"
    )
    kwargs = uploaded.pop("__kwargs__")
    assert kwargs["repo_id"] == "someone/unlearned-model" and kwargs["repo_type"] == "model"
    assert kwargs["create_pr"] is True and "WaterDrum" in kwargs["commit_message"]
    assert set(uploaded) == {"README.md", ".eval_results/waterdrum-tofu_forget_10.yaml"}
    assert kwargs["allow_patterns"] == ["README.md", ".eval_results/*.yaml"]
    card = ModelCard(uploaded["README.md"])
    assert card.data.model_name == "kept-name" and "Written by its authors." in card.text
    assert card_values(card)["waterdrum_forget"] == pytest.approx(result["forget"])
    entries = parse_eval_result_entries(
        yaml.safe_load(uploaded[".eval_results/waterdrum-tofu_forget_10.yaml"])
    )
    assert entries[0].value == pytest.approx(result["forget"])
    assert (repo / "README.md").read_text() == EXISTING_CARD  # the downloaded copy is untouched


def test_push_to_a_repository_without_a_card_writes_a_new_one(result):
    api = mock.create_autospec(HfApi, instance=True)
    api.hf_hub_download.side_effect = EntryNotFoundError("no README.md")
    uploaded = staged_upload(api)
    push_hub_results(result, "someone/bare-model", TOFU, api=api)
    assert uploaded.pop("__kwargs__")["create_pr"] is False
    card = ModelCard(uploaded["README.md"])
    assert card.data.model_name == "bare-model"
    assert card_values(card)["waterdrum_retain"] == pytest.approx(result["retain"])


def test_push_to_a_missing_repository_says_what_to_do(result):
    api = mock.create_autospec(HfApi, instance=True)
    api.hf_hub_download.side_effect = hub_error(RepositoryNotFoundError)
    with pytest.raises(ValueError, match="does not exist.*push the model first"):
        push_hub_results(result, "someone/missing", TOFU, api=api)
    api.upload_folder.assert_not_called()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: HubResultsConfig(""), "`dataset_id` must name"),
        (lambda: HubResultsConfig(WATERDRUM_TOFU, dataset_config=""), "`dataset_config`"),
        (lambda: HubResultsConfig(WATERDRUM_TOFU, dataset_split=3), "`dataset_split`"),
    ],
)
def test_bad_settings_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_result_with_nothing_to_publish_is_refused(tmp_path):
    empty = {"num_queries": 2, "num_scored": 0, "num_skipped": 2}
    with pytest.raises(ValueError, match="no finite value"):
        write_hub_results(empty, tmp_path, TOFU)
    with pytest.raises(ValueError, match="not keys of a WaterDrum result"):
        write_hub_results({**empty, "forget": 0.1, "accuracy": 1.0}, tmp_path, TOFU)


def test_the_hub_guides_snippet_runs_as_printed(result, tmp_path, monkeypatch):
    guide = Path(__file__).resolve().parents[2] / "docs" / "guides" / "hub-results.md"
    section = guide.read_text().split("## How to report the values")[1].split("\n## ")[0]
    snippet = section.split("```python\n")[1].split("```")[0]
    api = mock.create_autospec(HfApi, instance=True)
    api.hf_hub_download.side_effect = EntryNotFoundError("no README.md")
    uploaded = staged_upload(api)
    monkeypatch.chdir(tmp_path)
    with mock.patch("huggingface_hub.HfApi", return_value=api):
        exec(snippet, {"results": result})
    assert (tmp_path / "my-unlearned-model" / ".eval_results").is_dir()
    local = ModelCard.load(tmp_path / "my-unlearned-model" / "README.md")
    assert uploaded.pop("__kwargs__")["repo_id"] == "me/my-unlearned-model"
    assert card_values(ModelCard(uploaded["README.md"])) == card_values(local)


# A hand-made flat result: the forget set with every statistic, numbers easy to read back.
SMALL = {
    "forget": 0.1,
    "forget_null_mean": 0.01,
    "forget_null_std": 0.02,
    "forget_p_value": 0.001,
    "forget_ci_low": 0.05,
    "forget_ci_high": 0.15,
    "confidence": 0.9,
    "num_queries": 2,
    "num_scored": 2,
    "num_skipped": 0,
}
COUNTS = {"num_queries": 4, "num_scored": 4, "num_skipped": 0}
TRACED = HubResultsConfig(
    WATERDRUM_TOFU,
    dataset_config="forget_10",
    dataset_revision="abc123",
    source_url="https://example.org/logs",
    notes="8 samples",
)


def test_a_new_card_names_the_model_and_where_it_was_measured(result, tmp_path):
    """A card written from scratch is headed by the model's name (the folder's) and says
    in its text which dataset, config and split the values were measured on."""
    written = write_hub_results(result, tmp_path / "my-model", TOFU)
    text = ModelCard.load(written[0]).text
    assert text.lstrip("\n").startswith("# my-model\n\n")
    assert "Measured on `Glow-AI/WaterDrum-TOFU`, config `forget_10`, split `full`." in text


def test_the_folder_is_created_with_its_parents(tmp_path):
    """``write_hub_results`` makes the folder, and any missing folder above it."""
    folder = tmp_path / "runs" / "npo" / "my-model"
    written = write_hub_results(SMALL, folder, TOFU)
    assert written[0] == folder / "README.md" and written[0].is_file()


def test_the_eval_results_file_is_the_hubs_yaml_in_its_key_order(tmp_path):
    """The ``.eval_results/`` file, byte for byte: each entry's dataset (id, task id,
    revision), value, source and notes (interval, null level, p-value, then the setup), in
    the order the Hub documents them, not sorted."""
    written = write_hub_results(SMALL, tmp_path, TRACED)
    assert written[1].read_bytes().decode("utf-8") == (
        "- dataset:\n"
        "    id: Glow-AI/WaterDrum-TOFU\n"
        "    task_id: forget_10/forget\n"
        "    revision: abc123\n"
        "  value: 0.1\n"
        "  source:\n"
        "    url: https://example.org/logs\n"
        '  notes: 90% interval 0.0500 to 0.1500; null level 0.0100 ± 0.0200; p-value of "no\n'
        '    watermark" 0.001; 8 samples\n'
    )


def test_model_index_rows_record_the_task_name_revision_and_source():
    """Every ``model-index`` row names WaterDrum's task and carries the dataset's revision
    and the link to the evaluation's logs from the config."""
    rows = model_index_results(SMALL, TRACED)
    assert len(rows) == 6
    for row in rows:
        assert row.task_name == "Machine unlearning (WaterDrum)"
        assert row.dataset_revision == "abc123"
        assert row.source_url == "https://example.org/logs"


@pytest.mark.parametrize(
    ("dataset_id", "name"),
    [
        ("data/my-queries/", "my-queries"),  # a local folder, written with its slash
        ("someone/ArXiv-LaTeX", "ArXiv-LaTeX"),
        ("local-queries.jsonl", "local-queries.jsonl"),
    ],
)
def test_the_dataset_name_is_the_last_part_of_the_dataset_id(dataset_id, name):
    """``model-index``'s dataset name is the id's last part, a trailing slash left out and
    nothing else taken off."""
    rows = model_index_results(SMALL, HubResultsConfig(dataset_id))
    assert {row.dataset_name for row in rows} == {name}
    assert {row.dataset_type for row in rows} == {dataset_id}


@pytest.mark.parametrize("forget", [None, float("nan")], ids=["forget-not-scored", "forget-nan"])
def test_a_headline_without_a_value_gets_no_entry_and_the_rest_still_do(forget):
    """A set with no value (no scored query: absent, or NaN as a saved report may hold it)
    gets no ``.eval_results/`` entry; the headline values after it still get theirs."""
    flat = {"forget": forget, "retain": 0.3, "retain_p_value": 0.04, **COUNTS}
    entries = eval_result_entries(flat, TOFU)
    assert [(e.task_id, e.value) for e in entries] == [("forget_10/retain", 0.3)]
    assert entries[0].notes == 'p-value of "no watermark" 0.04'


def test_an_entrys_notes_leave_out_a_statistic_whose_partner_is_missing():
    """An interval without its high end, or a null level without its spread (e.g. lost as
    ``null`` in a saved report), is left out of the notes rather than half written."""
    flat = {
        "forget": 0.1,
        "forget_ci_low": 0.05,
        "forget_null_mean": 0.01,
        "forget_p_value": 0.02,
        "confidence": 0.9,
        **COUNTS,
    }
    assert [e.notes for e in eval_result_entries(flat, TOFU)] == ['p-value of "no watermark" 0.02']
    flat = {"forget": 0.1, "forget_ci_high": 0.15, "forget_null_std": 0.02, "confidence": 0.9}
    assert [e.notes for e in eval_result_entries({**flat, **COUNTS}, TOFU)] == [None]


def test_an_interval_of_unknown_level_is_named_without_one():
    """Interval rows of a result that does not say its confidence level are named
    "interval low/high", with no level in front."""
    flat = {"forget": 0.1, "forget_ci_low": 0.05, "forget_ci_high": 0.15, **COUNTS}
    names = {r.metric_type: r.metric_name for r in model_index_results(flat, HubResultsConfig("q"))}
    assert names == {
        "waterdrum_forget": "WaterDrum forget set: value",
        "waterdrum_forget_ci_low": "WaterDrum forget set: interval low",
        "waterdrum_forget_ci_high": "WaterDrum forget set: interval high",
    }
    notes = [e.notes for e in eval_result_entries(flat, TOFU)]  # and no level in its notes
    assert notes == ["interval 0.0500 to 0.1500"]
    flat["confidence"] = 0.9
    assert [e.notes for e in eval_result_entries(flat, TOFU)] == ["90% interval 0.0500 to 0.1500"]


def test_push_without_an_api_logs_in_with_the_token(result):
    """Without ``api``, ``push_hub_results`` makes ``HfApi(token=token)`` with the token given."""
    api = mock.create_autospec(HfApi, instance=True)
    api.hf_hub_download.side_effect = EntryNotFoundError("no README.md")
    staged_upload(api)
    with mock.patch("huggingface_hub.HfApi", return_value=api) as make_api:
        push_hub_results(result, "someone/bare-model", TOFU, token="hf_example")
    make_api.assert_called_once_with(token="hf_example")
    api.upload_folder.assert_called_once()


@pytest.mark.parametrize("repo_id", ["bare-model", "someone/ArXiv-LaTeX"])
def test_push_names_a_new_card_after_the_repository(result, repo_id):
    """A new card's model name is the repository's name: the whole id without a namespace,
    else the part after it, unchanged."""
    api = mock.create_autospec(HfApi, instance=True)
    api.hf_hub_download.side_effect = EntryNotFoundError("no README.md")
    uploaded = staged_upload(api)
    push_hub_results(result, repo_id, TOFU, api=api)
    assert ModelCard(uploaded["README.md"]).data.model_name == repo_id.split("/")[-1]


@pytest.mark.parametrize("repo_id", ["someone/model/", "/model", "someone/model "])
def test_push_to_an_invalid_repository_id_gets_the_hubs_own_error(result, repo_id):
    """A repository id the Hub does not accept (a slash at either end, a space) is refused
    by ``huggingface_hub``'s validation, before anything is uploaded."""
    api = HfApi(token=False)
    upload = mock.patch.object(api, "upload_folder")
    with upload as upload_folder, pytest.raises(HFValidationError, match="Repo id must"):
        push_hub_results(result, repo_id, TOFU, api=api)
    upload_folder.assert_not_called()


@pytest.mark.parametrize(
    ("given", "sent"),
    [(None, "Add WaterDrum evaluation results"), ("NPO, step 400", "NPO, step 400")],
)
def test_push_commits_with_the_message_given_or_the_default(result, given, sent):
    """The commit message is the one given, or "Add WaterDrum evaluation results"."""
    api = mock.create_autospec(HfApi, instance=True)
    api.hf_hub_download.side_effect = EntryNotFoundError("no README.md")
    uploaded = staged_upload(api)
    push_hub_results(result, "someone/bare-model", TOFU, api=api, commit_message=given)
    assert uploaded["__kwargs__"]["commit_message"] == sent


# Writes SMALL with TRACED in a folder, then prints the locale's encoding.
ASCII_LOCALE_WRITE = """
import json, locale, sys
from waterdrum_hf.hub_results.publish import HubResultsConfig, write_hub_results
config = HubResultsConfig(**json.loads(sys.argv[3]))
write_hub_results(json.loads(sys.argv[1]), sys.argv[2], config)
print(locale.getpreferredencoding(False))
"""


def test_the_files_are_utf8_whatever_the_locale(tmp_path):
    """Under a C locale with UTF-8 mode off (the locale's encoding is ASCII) the files are
    written, and are the same bytes as here: UTF-8, the notes' "±" included."""
    here = tmp_path / "here" / "model"
    written = write_hub_results(SMALL, here, TRACED)
    assert "±" in written[1].read_text(encoding="utf-8")
    there = tmp_path / "c-locale" / "model"
    arguments = [json.dumps(SMALL), str(there), json.dumps(dataclasses.asdict(TRACED))]
    run_in_ascii_locale(ASCII_LOCALE_WRITE, *arguments)
    for path in written:
        assert (there / path.relative_to(here)).read_bytes() == path.read_bytes()
