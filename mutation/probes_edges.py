"""Probes of the uncounted mutants of the Hub results (``hub_results/publish.py``,
``hub_results/config.py``) and of the training data formats (``data/formats.py``): see
``probes.py``.

The Hub is a mocked ``HfApi`` whose ``upload_folder`` records the staged files; the cards and
``.eval_results/`` files carry non-ASCII names and notes, so an encoding shows under ``LC_ALL=C``.
The formats run through :class:`~waterdrum_hf.data.formats.ExampleEncoder` with a word
tokenizer that has an EOS and a chat template, on every format and every refusal.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from probe_kit import each, use_test_helpers

_HUB = "waterdrum_hf.hub_results.publish."
_FORMATS = "waterdrum_hf.data.formats."
_ENCODER = _FORMATS + "xǁExampleEncoderǁ"
_CHAT = (
    "{% for m in messages %}{{ m['role'] }} {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}w9 {% endif %}"
)


def _result() -> Any:
    """A real result with null statistics and intervals (two owners, eight queries)."""
    use_test_helpers()
    from tokenizer_builders import word_texts, word_tokenizer

    from waterdrum_hf import waterdrum_metrics
    from waterdrum_hf.config import IntervalConfig, NullConfig, WaterDrumConfig

    keys = [3_000_000_017, 3_999_999_929]
    config = WaterDrumConfig(null=NullConfig("analytic"), interval=IntervalConfig(0.9, 100))
    return waterdrum_metrics(
        word_texts(512, 8, 30, seed=7), [keys[i % 2] for i in range(8)], word_tokenizer(512),
        config=config, forget_ids=[keys[1]],
    )  # fmt: skip


def _config(**kwargs: Any) -> Any:
    from waterdrum_hf.data.hub import WATERDRUM_TOFU
    from waterdrum_hf.hub_results.publish import HubResultsConfig

    settings = {
        "dataset_config": "forget_10",
        "dataset_split": "full",
        "scheme": "waterfall",
        "model_name": "mod\u00e8le d'\u00e9t\u00e9",
        "notes": "10 samples \u00b7 caf\u00e9 \u2615",
        **kwargs,
    }
    return HubResultsConfig(settings.pop("dataset_id", WATERDRUM_TOFU), **settings)


def write_hub_results(tmp: Path) -> Any:
    """The files written (read back by the runner) for the benchmark by its id and lowercased,
    a local dataset, and a result with nothing to publish."""
    from waterdrum_hf import WaterDrumResult
    from waterdrum_hf.data.hub import WATERDRUM_AX, WATERDRUM_TOFU
    from waterdrum_hf.hub_results.publish import write_hub_results as write

    result = _result()
    nothing = WaterDrumResult(num_queries=2, num_scored=0, num_skipped=4)

    def written(folder: str, **kwargs: Any) -> list[str]:
        paths = write(result, tmp / folder, _config(**kwargs))
        return [p.relative_to(tmp).as_posix() for p in paths]

    return each(
        lambda: written("tofu"),
        lambda: written("ax", dataset_id=WATERDRUM_AX.lower(), dataset_config="forget_01"),
        lambda: written("local", dataset_id="queries.jsonl", model_name=None),
        lambda: written("tofu-again", dataset_id=WATERDRUM_TOFU.upper()),
        lambda: write(nothing, tmp / "nothing", _config()),
    )


def push_hub_results(tmp: Path) -> Any:
    """A push to a repository without a card, one with a card, one that does not exist: the
    staged files, the upload's arguments (not the temporary folder's name) and the result."""
    from unittest import mock

    from huggingface_hub import HfApi
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError

    from waterdrum_hf.hub_results.publish import push_hub_results as push

    result = _result()
    card = tmp / "hub" / "README.md"
    card.parent.mkdir()
    card.write_text(
        "---\nlicense: mit\n---\n# Caf\u00e9 model\n\nWritten by its authors.\n", "utf-8"
    )

    def api_with(download: Any) -> tuple[Any, dict[str, Any]]:
        api = mock.create_autospec(HfApi, instance=True)
        if isinstance(download, BaseException):
            api.hf_hub_download.side_effect = download
        else:
            api.hf_hub_download.return_value = download
        uploaded: dict[str, Any] = {}

        def upload_folder(**kwargs: Any) -> str:
            folder = Path(kwargs.pop("folder_path"))
            uploaded["folder"] = folder.name
            uploaded["files"] = {
                p.relative_to(folder).as_posix(): p.read_bytes().decode("utf-8")
                for p in sorted(folder.rglob("*"))
                if p.is_file()
            }
            uploaded["kwargs"] = kwargs
            return "commit-info"

        api.upload_folder.side_effect = upload_folder
        return api, uploaded

    def pushed(repo: str, download: Any, **kwargs: Any) -> Any:
        api, uploaded = api_with(download)
        commit = push(result, repo, _config(model_name=None), api=api, **kwargs)
        return [commit, uploaded, [c.args for c in api.hf_hub_download.call_args_list]]

    response = mock.Mock(headers={}, request=None, status_code=404)
    return each(
        lambda: pushed("someone/bare-model", EntryNotFoundError("no README.md")),
        lambda: pushed("someone/caf\u00e9-model/", str(card), create_pr=True, commit_message="m"),
        lambda: pushed("someone/missing", RepositoryNotFoundError("gone", response=response)),
    )


def hub_results_config_post_init(tmp: Path) -> Any:
    from waterdrum_hf.data.hub import WATERDRUM_TOFU
    from waterdrum_hf.hub_results.publish import HubResultsConfig

    return each(
        lambda: HubResultsConfig(""),
        lambda: HubResultsConfig("  "),
        lambda: HubResultsConfig(3),  # type: ignore[arg-type]
        lambda: HubResultsConfig(WATERDRUM_TOFU, dataset_config=""),
        lambda: HubResultsConfig(WATERDRUM_TOFU, dataset_split=3),  # type: ignore[arg-type]
        lambda: HubResultsConfig(WATERDRUM_TOFU, dataset_revision=""),
        lambda: HubResultsConfig(WATERDRUM_TOFU, model_name=""),
        lambda: HubResultsConfig(WATERDRUM_TOFU, dataset_config="forget_10").benchmark,
    )


# -- data formats ---------------------------------------------------------------------------


def _encoder(chat: bool = True, **kwargs: Any) -> Any:
    """An encoder over a word tokenizer (``w<i>`` is token i) with an EOS and, with ``chat``,
    a chat template."""
    use_test_helpers()
    from tokenizer_builders import word_tokenizer

    from waterdrum_hf.data.formats import ExampleEncoder

    tokenizer = copy.deepcopy(word_tokenizer(64))
    tokenizer.eos_token = "<eos>"
    tokenizer.chat_template = _CHAT if chat else None
    return ExampleEncoder(tokenizer, **kwargs)


def _message(role: str, content: Any) -> dict[str, Any]:
    return {"role": role, "content": content}


def common_prefix_length(tmp: Path) -> Any:
    """Strings whose prompt is a prefix, and conversations whose rendered prompt is not."""
    encoder = _encoder()
    prompt = [_message("user", "w1 w2")]
    return each(
        lambda: encoder({"prompt": "w1 w2", "completion": " w3 w4"}),
        lambda: encoder({"prompt": "w1 w2 w3", "completion": ""}),
        lambda: encoder({"prompt": prompt, "completion": [_message("assistant", "w5")]}),
        lambda: encoder({"messages": [*prompt, _message("assistant", "w6 w7")]}),
        lambda: encoder({"prompt": prompt, "completion": []}),
    )


def check_str(tmp: Path) -> Any:
    encoder = _encoder()
    return each(
        lambda: encoder({"text": 5}),
        lambda: encoder({"question": None, "answer": "w1"}),
        lambda: encoder({"question": "w1", "answer": ["w2"]}),
        lambda: encoder({"text": "w1 \ud800"}),
        lambda: encoder({"text": "w1 caf\u00e9 w2"}),
    )


def split_conversation(tmp: Path) -> Any:
    encoder = _encoder()
    return each(
        lambda: encoder({"messages": []}),
        lambda: encoder({"messages": "w1"}),
        lambda: encoder({"messages": [_message("user", "w1")]}),
        lambda: encoder({"messages": [{"content": "w1"}]}),
        lambda: encoder({"messages": [_message("assistant", "w1"), _message("user", "w2")]}),
        lambda: encoder({"messages": [_message("user", "w1"), _message("assistant", "w2")]}),
    )


def encoder_call(tmp: Path) -> Any:
    """Unknown formats, a refusal after a text, and every format with and without an answer."""
    encoder = _encoder(text_column="body", question_column="q", answer_column="a")
    conversation = [_message("user", "w1"), _message("assistant", "w2")]
    return each(
        lambda: encoder({"foo": 1}),
        lambda: encoder({"text": "w1", "question": "w2"}),
        lambda: encoder({"body": "w1"}, answer="w2"),
        lambda: encoder({"foo": 1}, answer="w2"),
        lambda: encoder({"q": "w1 w2", "a": "w3"}),
        lambda: encoder({"q": "w1 w2", "a": "w3"}, answer="w4"),
        lambda: encoder({"body": "w1 w2"}),
        lambda: encoder({"messages": conversation}, answer="w5"),
        lambda: encoder({"prompt": "w1", "completion": " w2"}, answer=" w3"),
    )


def prompt_completion(tmp: Path) -> Any:
    encoder = _encoder()
    return each(
        lambda: encoder({"prompt": "w1", "completion": [_message("assistant", "w2")]}),
        lambda: encoder({"prompt": 3, "completion": 4}),
        lambda: encoder({"prompt": [_message("user", "w1")], "completion": "w2"}),
        lambda: encoder({"prompt": "w1 w2", "completion": " w3"}),
    )


def render(tmp: Path) -> Any:
    plain, chat = _encoder(chat=False), _encoder()
    conversation = [_message("system", "w3"), _message("user", "w1"), _message("assistant", "w2")]
    return each(
        lambda: plain({"messages": conversation}),
        lambda: chat({"messages": [_message("user", None), _message("assistant", "w2")]}),
        lambda: chat({"messages": conversation}),
        lambda: chat({"prompt": conversation[:2], "completion": conversation[2:]}),
        lambda: chat({"q": "w1"}),
        lambda: chat({"question": "w1 w2", "answer": "w3"}),
    )


PROBES = {
    _HUB + "x_write_hub_results": write_hub_results,
    _HUB + "x_push_hub_results": push_hub_results,
    "waterdrum_hf.hub_results.config.xǁHubResultsConfigǁ__post_init__": (
        hub_results_config_post_init
    ),
    _FORMATS + "x__common_prefix_length": common_prefix_length,
    _FORMATS + "x_check_str": check_str,
    _FORMATS + "x_split_conversation": split_conversation,
    _ENCODER + "__call__": encoder_call,
    _ENCODER + "_prompt_completion": prompt_completion,
    _ENCODER + "_render": render,
}
