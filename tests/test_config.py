"""WaterDrumConfig: one frozen, validated scoring configuration, its JSON round trip, the
mapping of the flat keywords (the evaluate edge, and the deprecated 0.1 forms), and
WaterDrumArguments in a real TrlParser."""

from __future__ import annotations

import dataclasses
import json
import typing
import warnings
from pathlib import Path

import numpy as np
import pytest
from ascii_locale import run_in_ascii_locale
from tokenizer_builders import word_tokenizer

import waterdrum_hf.config as config_module
from waterdrum_hf import (
    IntervalConfig,
    KGWScheme,
    NullConfig,
    WaterDrumArguments,
    WaterDrumConfig,
    WaterfallScheme,
    waterdrum_metrics,
    waterdrum_result,
)
from waterdrum_hf.bootstrap import DEFAULT_RESAMPLES
from waterdrum_hf.config import (
    KEYWORDS,
    SCHEME_KEYWORDS,
    SCORING_SETTINGS,
    with_scoring_settings,
)
from waterdrum_hf.schemes import SCHEMES

OWNERS = [11, 11, 12, 12, 13, 13]


@pytest.fixture(scope="module")
def texts():
    return [" ".join(f"w{(7 * i + j) % 60}" for j in range(30)) for i in range(6)]


CONFIGS = [
    WaterDrumConfig(),
    WaterDrumConfig(scheme=WaterfallScheme(k_p=3, n_gram=3), pooling="mean"),
    WaterDrumConfig(scheme=KGWScheme(gamma=0.25, vocab_size=64), null=NullConfig("analytic")),
    WaterDrumConfig(
        null=NullConfig("empirical", keys=7, seed=2), interval=IntervalConfig(0.9, 200, seed=5)
    ),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_json_round_trip(config, tmp_path):
    assert WaterDrumConfig.from_dict(config.to_dict()) == config
    assert WaterDrumConfig.from_json(config.to_json()) == config
    config.to_json(tmp_path / "c.json")
    assert WaterDrumConfig.from_json(tmp_path / "c.json") == config
    json.dumps(config.to_dict())  # JSON scalars and dicts only


def test_frozen_and_hashable():
    config = WaterDrumConfig(null=NullConfig("analytic"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.pooling = "mean"  # type: ignore[misc]
    assert hash(config) == hash(WaterDrumConfig(null=NullConfig("analytic")))


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: WaterDrumConfig(scheme="kgw"), TypeError, "must be a WatermarkScheme"),
        (lambda: WaterDrumConfig(pooling="max"), ValueError, "`pooling` must be"),
        (lambda: WaterDrumConfig(null="analytic"), TypeError, "NullConfig or None"),
        (lambda: WaterDrumConfig(interval=0.95), TypeError, "IntervalConfig or None"),
        (lambda: NullConfig("exact"), ValueError, "`null` must be"),
        (lambda: NullConfig("empirical"), ValueError, "needs `null_keys` > 0"),
        (lambda: NullConfig("analytic", keys=5), ValueError, "leave it at 0"),
        (lambda: NullConfig("empirical", keys=-1), ValueError, "`null_keys` must be >= 0"),
        (lambda: IntervalConfig(1.5), ValueError, "strictly between 0 and 1"),
        (lambda: IntervalConfig(0.9, resamples=10), ValueError, "`bootstrap_resamples` must be"),
        (lambda: WaterfallScheme(k_p=0), ValueError, "`k_p` must be"),
        (lambda: WaterfallScheme(n_gram=1), ValueError, "`n_gram` must be >= 2"),
        (lambda: WaterfallScheme(k_p=99, vocab_size=100), ValueError, r"1\.\.98"),
        (lambda: WaterDrumConfig.from_dict({"nul": None}), ValueError, "not parts"),
        (lambda: WaterDrumConfig.from_dict({"null": {"keys": 3}}), ValueError, "leave it at 0"),
        (lambda: WaterDrumConfig.from_dict({"scheme": {"scheme": "x"}}), ValueError, "one of"),
        (lambda: WaterDrumConfig.from_keywords({"kp": 1}), TypeError, "not WaterDrum settings"),
        (lambda: WaterDrumConfig.from_keywords({"null_seed": 3}), ValueError, "empirical null"),
        (
            lambda: WaterDrumConfig.from_keywords({"bootstrap_seed": 3}),
            ValueError,
            "pass `confidence`",
        ),
    ],
)
def test_validated_once_when_built(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_keywords_map_as_the_evaluate_module_documents():
    keywords = {
        "k_p": 2,
        "n_gram": 3,
        "pooling": "mean",
        "null_keys": 9,
        "null_seed": 4,
        "confidence": 0.8,
        "bootstrap_resamples": 300,
        "bootstrap_seed": 1,
    }
    assert WaterDrumConfig.from_keywords(keywords) == WaterDrumConfig(
        scheme=WaterfallScheme(k_p=2, n_gram=3),
        pooling="mean",
        null=NullConfig("empirical", keys=9, seed=4),
        interval=IntervalConfig(0.8, resamples=300, seed=1),
    )
    analytic = WaterDrumConfig.from_keywords({"null": "analytic", "scheme": "kgw", "gamma": 0.3})
    assert analytic == WaterDrumConfig(scheme=KGWScheme(gamma=0.3), null=NullConfig("analytic"))
    assert WaterDrumConfig.from_keywords({}) == WaterDrumConfig(null=NullConfig("analytic"))
    assert WaterDrumConfig.from_keywords({"null": "none"}).null is None  # --null none


def test_a_config_without_a_null_or_interval_goes_to_a_dict_and_back():
    bare = WaterDrumConfig(null=None)
    assert bare.to_dict()["null"] is None and bare.to_dict()["interval"] is None
    assert WaterDrumConfig.from_dict(bare.to_dict()) == bare
    assert set(KEYWORDS) >= {"scheme", "k_p", "null", "confidence"}


def test_flat_keywords_beside_config_are_refused(texts):
    """Nothing was released with flat keywords on the functions: they take ``config=`` only."""
    with pytest.raises(TypeError, match="null_keys"):
        waterdrum_metrics(texts, OWNERS, word_tokenizer(60), null_keys=5, forget_ids=[13])


def test_the_evaluate_module_maps_flat_keywords_without_warning(texts):
    from waterdrum_hf import load_metric

    tokenizer = word_tokenizer(60)
    metric = load_metric()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        flat = metric.compute(
            predictions=texts,
            references=OWNERS,
            watermark_tokenizer=tokenizer,
            forget_ids=[13],
            null="analytic",
            k_p=2,
        )
    config = WaterDrumConfig(scheme=WaterfallScheme(k_p=2), null=NullConfig("analytic"))
    expected = waterdrum_metrics(texts, OWNERS, tokenizer, config=config, forget_ids=[13])
    assert flat == pytest.approx(expected)


def test_settings_reach_the_scores(texts):
    """Each part of the config changes what it should: k_p the values, pooling the query
    values, the null its statistics, the interval its bounds."""
    tokenizer = word_tokenizer(60)
    nested = [texts[i : i + 2] for i in range(0, 6, 2)]
    owners = [11, 12, 13]

    def run(**parts):
        config = WaterDrumConfig(**parts)
        return waterdrum_result(nested, owners, tokenizer, config=config, forget_ids=[13])

    base = run()
    assert run(scheme=WaterfallScheme(k_p=3)).forget.value != base.forget.value
    assert base.forget.null_std > 0 and run(null=None).forget.null_std is None  # analytic default
    mean = run(pooling="mean")
    assert not np.isclose(mean.retain.value, base.retain.value) or mean.retain == base.retain


def test_waterdrum_arguments_in_a_real_trl_parser(tmp_path):
    """A TRL script adds WaterDrumArguments to its parser tuple; flags are prefixed, so nothing
    clashes with the training config, and a --config recipe sets them too."""
    from trl import ModelConfig, SFTConfig, TrlParser

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("waterdrum_null: analytic\nwaterdrum_eval_steps: 7\nlearning_rate: 0.001\n")
    parser = TrlParser((SFTConfig, ModelConfig, WaterDrumArguments))
    training, _, waterdrum = parser.parse_args_and_config(
        [
            "--output_dir", str(tmp_path / "out"), "--config", str(recipe), "--use_cpu", "true",
            "--waterdrum_confidence", "0.9", "--waterdrum_k_p", "2", "--eval_steps", "3",
        ]
    )  # fmt: skip
    assert training.learning_rate == 0.001 and training.eval_steps == 3
    assert waterdrum.waterdrum_eval_steps == 7
    assert waterdrum.scoring_config() == WaterDrumConfig(
        scheme=WaterfallScheme(k_p=2),
        null=NullConfig("analytic"),
        interval=IntervalConfig(0.9),
    )
    assert waterdrum.callback_plan().eval_steps == 7
    with pytest.raises(ValueError, match="the empirical null.s"):
        parser.parse_args_and_config(
            [
                "--output_dir",
                "o",
                "--use_cpu",
                "true",
                "--waterdrum_null",
                "analytic",
                "--waterdrum_null_keys",
                "3",
            ]
        )


def test_waterdrum_arguments_build_the_callback_from_a_forget_column(tiny_model):
    """Forget owners come from the dataset's boolean `forget` column (or an ids file)."""
    from datasets import Dataset

    from waterdrum_hf import tiny

    _, tokenizer = tiny_model
    rows = Dataset.from_dict(
        {
            "text": ["The class statement defines a", "A lambda is a small"] * 3,
            "owner_id": [5, 5, 6, 6, 7, 7],
            "forget": [True, True, False, False, False, False],
        }
    )
    arguments = WaterDrumArguments(waterdrum_null="analytic", waterdrum_prefix_tokens=3)
    with pytest.raises(ValueError, match="--waterdrum_watermark_tokenizer is required"):
        arguments.callback(rows, tokenizer)
    arguments = dataclasses.replace(arguments, waterdrum_watermark_tokenizer=str(tiny.built_path()))
    callback = arguments.callback(rows, tokenizer, owner_names={5: "a", 6: "b", 7: "c"})
    assert callback.config == arguments.scoring_config()
    assert callback.plan.eval_steps == 50 and callback.sampling.num_samples == 2
    assert callback._forget_ids == [5] and len(callback.queries) == 6
    assert callback.tokenizer is tokenizer
    as_ints = rows.remove_columns("forget").add_column("forget", [1, 1, 0, 0, 0, 0])
    with pytest.raises(TypeError, match="must be boolean"):
        arguments.callback(as_ints, tokenizer)
    with pytest.raises(ValueError, match="boolean `forget` column"):
        arguments.callback(rows.remove_columns("forget"), tokenizer)


def test_numbers_given_as_numpy_scalars_are_stored_as_python_numbers():
    """Settings read from arrays (numpy scalars) are converted when built, so the config
    compares, hashes and writes to JSON as one built from Python numbers does."""
    config = WaterDrumConfig(
        scheme=KGWScheme(n_gram=np.int64(3), vocab_size=np.int64(60)),
        null=NullConfig("empirical", keys=np.int64(5), seed=np.int64(2)),
        interval=IntervalConfig(np.float64(0.9), resamples=np.int64(1000), seed=np.int64(3)),
    )
    stored = (
        config.scheme.n_gram,
        config.scheme.vocab_size,
        config.null.keys,
        config.null.seed,
        config.interval.resamples,
        config.interval.seed,
    )
    assert [type(value) for value in stored] == [int] * 6
    assert type(config.interval.confidence) is float
    assert WaterDrumConfig.from_json(config.to_json()) == config


def test_a_two_token_vocabulary_is_the_smallest_a_scheme_takes():
    assert KGWScheme(vocab_size=2).vocab_size == 2
    with pytest.raises(ValueError, match=r"^`vocab_size` must be >= 2, got 1"):
        KGWScheme(vocab_size=1)


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: NullConfig("empirical", 5, seed=-1), ValueError, r"^`null_seed` must be >= 0"),
        (lambda: WaterDrumConfig.from_dict({"null": 5}), TypeError, r"^`null` must be a dict"),
        (
            lambda: WaterDrumConfig.from_dict({"null": {"method": "analytic", "bogus": 1}}),
            ValueError,
            r"^\['bogus'\] are not NullConfig fields",
        ),
        (
            lambda: WaterDrumConfig.from_keywords({"null": "analytic", "null_seed": 3}),
            ValueError,
            "the empirical null.s",
        ),
    ],
)
def test_settings_that_mean_nothing_are_refused(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_a_dict_without_pooling_means_the_default_and_json_may_start_with_blanks():
    written = WaterDrumConfig(null=NullConfig("analytic")).to_dict()
    del written["pooling"]
    assert WaterDrumConfig.from_dict(written) == WaterDrumConfig(null=NullConfig("analytic"))
    config = WaterDrumConfig(interval=IntervalConfig())
    assert WaterDrumConfig.from_json("\n  " + config.to_json()) == config


def test_the_json_file_is_sorted_and_indented_for_stable_diffs(tmp_path):
    path = tmp_path / "config.json"
    WaterDrumConfig(null=NullConfig("empirical", 5), interval=IntervalConfig()).to_json(path)
    text = path.read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert text.splitlines()[1].startswith('  "') and "\n" in text.strip()


def test_a_json_file_is_read_as_utf_8_in_any_locale(tmp_path):
    """A file with non-ASCII bytes gets the refusal's ValueError under a C locale too, not the
    UnicodeDecodeError of the locale's ASCII codec (the bug: ``read_text()`` without
    ``encoding="utf-8"``). The C-locale child runs through ``run_in_ascii_locale``, which
    checks that its locale really is ASCII and, under mutmut, counts this test as reaching
    ``from_json`` (a child's calls are otherwise invisible to mutmut's selection of tests)."""
    path = tmp_path / "config.json"
    path.write_bytes('{"scheme": {"scheme": "w\u00e4terfall"}}'.encode())
    probe = (
        "import codecs, locale, sys\n"
        "from waterdrum_hf import WaterDrumConfig\n"
        "try:\n"
        "    WaterDrumConfig.from_json(sys.argv[1])\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, ascii(str(error)))\n"
        "print(codecs.lookup(locale.getpreferredencoding(False)).name)\n"
    )
    outcome = run_in_ascii_locale(probe, str(path)).stdout.strip().splitlines()[0]
    error, message = outcome.split(" ", 1)
    assert error == "ValueError", outcome
    assert "w\\xe4terfall" in message
    with pytest.raises(ValueError, match="w\u00e4terfall"):  # and in this process's locale
        WaterDrumConfig.from_json(path)


def test_a_json_file_is_read_as_utf_8_when_the_default_encoding_is_ascii(monkeypatch, tmp_path):
    """The same in this process, the locale's default encoding made ASCII for ``read_text``:
    under mutmut a C-locale child cannot switch on a method's mutant (its name holds a
    non-ASCII character, which an ASCII locale's environment cannot carry)."""
    path = tmp_path / "config.json"
    path.write_bytes('{"scheme": {"scheme": "w\u00e4terfall"}}'.encode())
    read_text = Path.read_text

    def ascii_default(self, encoding=None, errors=None):
        return read_text(self, encoding=encoding or "ascii", errors=errors)

    monkeypatch.setattr(Path, "read_text", ascii_default)
    with pytest.raises(ValueError, match="w\u00e4terfall"):
        WaterDrumConfig.from_json(path)


#: The scheme settings in SCHEME_KEYWORDS' order with their types, written out by hand.
SCHEME_SETTING_TYPES = {
    "k_p": int | None,
    "gamma": float | None,
    "depth": int | None,
    "sampling_table_size": int | None,
    "sampling_table_seed": int | None,
    "key_length": int | None,
    "gamma_edit": float | None,
    "block_size": int | None,
}


def _scheme_field_help(name):
    """The help a scheme's own dataclass field carries (read from the schemes directly)."""
    (help_,) = {
        f.metadata["help"]
        for scheme in SCHEMES.values()
        for f in dataclasses.fields(scheme)
        if f.name == name
    }
    return help_


#: Every setting's flag type in KEYWORDS' order, written out by hand.
SETTING_TYPES = {
    "scheme": str,
    **SCHEME_SETTING_TYPES,
    "n_gram": int | None,
    "vocab_size": int | None,
    "pooling": typing.Literal["tokens", "mean"],
    "null": typing.Literal["analytic", "empirical", "none"] | None,
    "null_keys": int,
    "null_seed": int,
    "confidence": float | None,
    "bootstrap_resamples": int,
    "bootstrap_seed": int,
}


def test_scoring_settings_are_added_after_the_own_fields_with_their_types_defaults_and_help():
    """``with_scoring_settings`` applied here (not at import, where no mutant is switched on):
    the class's own fields keep their place, types and defaults; then one field per setting
    of the table, prefixed, in its order, with its type, its default and its help (a scheme
    setting's help is its scheme's field's); the class itself comes back."""
    assert tuple(SCHEME_SETTING_TYPES) == SCHEME_KEYWORDS
    assert tuple(SETTING_TYPES) == KEYWORDS

    class Flags:
        before: int = 1
        after: int = 0

    decorated = with_scoring_settings("p_")(Flags)
    assert decorated is Flags
    Flags = dataclasses.dataclass(Flags)
    added = [f"p_{name}" for name in SETTING_TYPES]
    assert [f.name for f in dataclasses.fields(Flags)] == ["before", "after", *added]
    hints = typing.get_type_hints(Flags)
    assert hints == {"before": int, "after": int, **{f"p_{n}": h for n, h in SETTING_TYPES.items()}}
    spec = {f.name: f for f in dataclasses.fields(Flags)}
    for name in SCHEME_SETTING_TYPES:
        assert spec[f"p_{name}"].default is None
        assert dict(spec[f"p_{name}"].metadata) == {"help": _scheme_field_help(name)}
    flags = Flags()
    assert (flags.before, flags.after, flags.p_scheme, flags.p_null) == (1, 0, "waterfall", None)
    assert (flags.p_pooling, flags.p_null_keys, flags.p_confidence) == ("tokens", 0, None)
    assert flags.p_bootstrap_resamples == DEFAULT_RESAMPLES
    assert spec["p_scheme"].metadata["choices"] == ["waterfall", "kgw", "synthid", "exp_edit"]
    assert spec["p_scheme"].metadata["choices"] == list(SCHEMES)  # the registry's names
    assert spec["p_scheme"].metadata["help"] == SCORING_SETTINGS["scheme"].help
    assert "choices" not in spec["p_null"].metadata
    null_help = spec["p_null"].metadata["help"]
    assert "p_null_keys > 0" in null_help and null_help.count("null_keys") == 1
    assert null_help == SCORING_SETTINGS["null"].help.replace("null_keys", "p_null_keys")
    assert spec["p_null_keys"].metadata["help"] == SCORING_SETTINGS["null_keys"].help


def test_unprefixed_scoring_settings_are_named_as_the_settings():
    """Without a prefix the fields are the settings' own names and the null's help names
    ``null_keys`` itself."""

    @dataclasses.dataclass
    @with_scoring_settings()
    class Flags:
        pass

    assert [f.name for f in dataclasses.fields(Flags)] == list(KEYWORDS)
    assert Flags().scheme == "waterfall" and Flags().null_keys == 0
    (null,) = [f for f in dataclasses.fields(Flags) if f.name == "null"]
    assert null.default is None and null.metadata == {"help": SCORING_SETTINGS["null"].help}
    assert "empirical" in null.metadata["help"] and "0) or none" in null.metadata["help"]


def test_a_settings_help_names_the_prefixed_flags(monkeypatch):
    """A setting whose help refers to ``null_keys`` names the prefixed flag."""
    gamma = config_module.ScoringSetting(float | None, None, "Unlike null_keys.")
    monkeypatch.setitem(config_module.SCORING_SETTINGS, "gamma", gamma)

    @dataclasses.dataclass
    @with_scoring_settings("p_")
    class Flags:
        pass

    (field,) = [f for f in dataclasses.fields(Flags) if f.name == "p_gamma"]
    assert field.metadata["help"] == "Unlike p_null_keys."
