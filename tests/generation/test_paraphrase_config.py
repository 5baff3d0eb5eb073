"""ParaphraseConfig: the generation settings the writer and the paraphrase attack share."""

from __future__ import annotations

import dataclasses

import pytest

from waterdrum_hf import WatermarkingConfig
from waterdrum_hf.generation.paraphrase_config import ParaphraseConfig


def test_the_watermarking_config_is_a_paraphrase_config_with_the_scheme_and_columns():
    shared = {f.name for f in dataclasses.fields(ParaphraseConfig)}
    own = {f.name for f in dataclasses.fields(WatermarkingConfig)} - shared
    assert issubclass(WatermarkingConfig, ParaphraseConfig)
    assert {"num_beam_groups", "do_sample", "prompt", "seed", "batch_size"} <= shared
    assert {"text_column", "id_column", "scheme", "kappa", "n_gram", "sts_weight"} <= own
    assert not shared & {"scheme", "kappa", "text_column"}  # the attack cannot set a watermark


def test_updated_keeps_the_class_and_validates():
    config = WatermarkingConfig().updated(num_beam_groups=2, kappa=1.0)
    assert type(config) is WatermarkingConfig
    assert (config.num_beam_groups, config.kappa, config.num_candidates) == (2, 1.0, 4)
    with pytest.raises(TypeError, match=r"Unknown ParaphraseConfig field\(s\) \['kappa'\]"):
        ParaphraseConfig().updated(kappa=1.0)
    with pytest.raises(ValueError, match="`temperature` must be a positive number"):
        WatermarkingConfig().updated(temperature=0.0)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"diversity_penalty": -0.5}, "`diversity_penalty` must be a finite number >= 0"),
        ({"diversity_penalty": float("nan")}, "`diversity_penalty` must be a finite number"),
        ({"top_p": 1.5}, r"`top_p` must be in \(0, 1\]"),
        ({"repetition_penalty": 0.0}, "`repetition_penalty` must be a positive number"),
        ({"seed": -1}, "seed"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"num_beam_groups": 0}, "num_beam_groups"),
        ({"prompt": ""}, "`prompt` must be a non-empty string"),
    ],
)
def test_bad_paraphrase_settings_are_refused_by_both_configs(changes, message):
    for config_class in (ParaphraseConfig, WatermarkingConfig):
        with pytest.raises((TypeError, ValueError), match=message):
            config_class(**changes)


def test_the_watermarking_settings_stay_checked_in_the_subclass():
    with pytest.raises(ValueError, match="`sts_weight` must be a finite number, got inf"):
        WatermarkingConfig(sts_weight=float("inf"))
    with pytest.raises(ValueError, match="`kappa` must be a finite number >= 0"):
        WatermarkingConfig(kappa=-1.0)
    with pytest.raises(TypeError, match="`text_column` must be a non-empty string"):
        WatermarkingConfig(text_column="")
