"""One mapping of the flat scoring settings: the `evaluate` keywords, the scripts' flags and
`WaterDrumArguments`' fields give equal `WaterDrumConfig`s, with one set of defaults and one
null rule (`WaterDrumConfig.from_keywords`)."""

from __future__ import annotations

import pytest
from trl import TrlParser

from waterdrum_hf import WaterDrumArguments
from waterdrum_hf.config import IntervalConfig, NullConfig, WaterDrumConfig
from waterdrum_hf.metrics.waterdrum import waterdrum as metric_module
from waterdrum_hf.schemes import KGWScheme, WaterfallScheme
from waterdrum_hf.scripts.parser import CliError
from waterdrum_hf.scripts.verify import make_parser

CASES = [
    ({}, WaterDrumConfig(null=NullConfig("analytic"))),
    ({"null_keys": 50, "null_seed": 3}, WaterDrumConfig(null=NullConfig("empirical", 50, seed=3))),
    ({"null": "empirical"}, WaterDrumConfig(null=NullConfig("empirical", 100))),
    ({"null": "none", "pooling": "mean"}, WaterDrumConfig(pooling="mean", null=None)),
    (
        {"scheme": "kgw", "gamma": 0.25, "n_gram": 3, "confidence": 0.9,
         "bootstrap_resamples": 200, "bootstrap_seed": 1},
        WaterDrumConfig(
            scheme=KGWScheme(gamma=0.25, n_gram=3),
            null=NullConfig("analytic"),
            interval=IntervalConfig(0.9, resamples=200, seed=1),
        ),
    ),
    ({"k_p": 2, "vocab_size": 1000}, WaterDrumConfig(scheme=WaterfallScheme(k_p=2, vocab_size=1000), null=NullConfig("analytic"))),
]  # fmt: skip


def flags(settings: dict, prefix: str = "") -> list[str]:
    return [item for name, value in settings.items() for item in (f"--{prefix}{name}", str(value))]


def evaluate_keywords(settings: dict, monkeypatch) -> WaterDrumConfig:
    """The config the `evaluate` module hands the computation for these keywords."""
    seen = {}
    monkeypatch.setattr(
        metric_module, "waterdrum_metrics", lambda *a, config, **k: seen.setdefault("c", config)
    )
    metric_module.Waterdrum()._compute(["text"], [1], object(), **settings)
    return seen["c"]


def script_flags(settings: dict) -> WaterDrumConfig:
    argv = ["--file", "f.txt", "--watermark-tokenizer", "tiny", "--id", "1", *flags(settings)]
    *_, scoring = make_parser().parse_args_and_config(argv)
    return scoring.scoring_config()


def trl_group(settings: dict) -> WaterDrumConfig:
    (arguments,) = TrlParser((WaterDrumArguments,)).parse_args_and_config(
        flags(settings, "waterdrum_")
    )
    return arguments.scoring_config()


@pytest.mark.parametrize(("settings", "expected"), CASES)
def test_three_spellings_give_the_same_config(settings, expected, monkeypatch):
    assert WaterDrumConfig.from_keywords(settings) == expected
    assert evaluate_keywords(settings, monkeypatch) == expected
    assert script_flags(settings) == expected
    assert trl_group(settings) == expected


@pytest.mark.parametrize(
    "settings",
    [
        {"null": "analytic", "null_keys": 5},
        {"null": "none", "null_seed": 2},
        {"bootstrap_seed": 4},
        {"scheme": "waterfall", "gamma": 0.3},
    ],
)
def test_three_spellings_refuse_the_same_settings(settings, monkeypatch):
    with pytest.raises((ValueError, TypeError)):
        evaluate_keywords(settings, monkeypatch)
    with pytest.raises(CliError):
        script_flags(settings)
    with pytest.raises((ValueError, TypeError)):
        trl_group(settings)


def test_every_entry_point_without_settings_reads_with_the_same_configuration(
    tiny_model, tiny_folder, texts, monkeypatch
):
    """One default: the dataclass, the flat door (the evaluate module, the commands, the
    training scripts' group), the callback, the lm-eval task, waterdrum_metrics and the audits
    all read with ``WaterDrumConfig()`` (the analytic null, no intervals) when given nothing;
    verify_dataset takes it too."""
    from datasets import Dataset

    from waterdrum_hf import (
        AuditConfig,
        AuditQueries,
        WaterDrumCallback,
        run_audits,
        verify_dataset,
        waterdrum_metrics,
    )
    from waterdrum_hf.lm_eval_tasks import Source

    default = WaterDrumConfig()
    assert default == WaterDrumConfig.from_keywords({})
    assert default.null == NullConfig("analytic") and default.interval is None
    assert evaluate_keywords({}, monkeypatch) == default
    assert script_flags({}) == default
    assert trl_group({}) == default
    callback = WaterDrumCallback(["a query"], [1], ["another"], [2], str(tiny_folder))
    assert callback.config == default
    assert Source().scoring is None  # the aggregation reads None as WaterDrumConfig()

    samples, owners = [[texts[0]], [texts[1]]], [1, 2]
    given = waterdrum_metrics(samples, owners, str(tiny_folder), forget_ids=[1])
    explicit = waterdrum_metrics(samples, owners, str(tiny_folder), forget_ids=[1], config=default)
    assert given == explicit and "forget_p_value" in given

    model, tokenizer = tiny_model
    audited = run_audits(
        {"m": model}, tokenizer, AuditQueries(["a query", "another"], [1, 2], [1]),
        config=AuditConfig(audits=(), attacks=("deletion:0.5",), num_samples=1, max_new_tokens=4),
        show_progress=False,
    )  # fmt: skip
    assert audited.settings["scoring"] == default.to_dict()

    rows = Dataset.from_dict({"text": texts[:2], "owner_id": owners})
    scored = verify_dataset(rows, text_column="text", id_column="owner_id",
                            watermark_tokenizer=str(tiny_folder), config=default)  # fmt: skip
    assert (
        scored["watermark_score"]
        == verify_dataset(
            rows, text_column="text", id_column="owner_id", watermark_tokenizer=str(tiny_folder)
        )["watermark_score"]
    )
