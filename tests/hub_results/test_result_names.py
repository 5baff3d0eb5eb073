"""Every value the Hub formats publish sits under its own name.

A result whose every scalar is distinct is written the way a user publishes it
(``write_hub_results``) and read back with ``huggingface_hub``'s own parsers; each row's
display name is then read back into the quantity it claims (set and statistic, from its words
alone) and that quantity's value must be the row's value. A swap of two names (forget shown as
retain, the null mean as the null sd) gives some row a name whose quantity holds another value,
and fails here. The same holds for the ``.eval_results/`` entries (task id and notes) and for
the table an unlearning trainer writes into its own model card.
"""

from __future__ import annotations

import math
import re

import pytest
import yaml
from huggingface_hub import ModelCard, parse_eval_result_entries

from waterdrum_hf import WaterDrumResult
from waterdrum_hf.data.hub import WATERDRUM_TOFU
from waterdrum_hf.hub_results.publish import HubResultsConfig, write_hub_results
from waterdrum_hf.trainers._card import CardFacts, model_card

CONFIG = HubResultsConfig(WATERDRUM_TOFU, dataset_config="forget_10", dataset_split="full")
LEVEL = 0.9


def distinct_result() -> dict[str, float | int]:
    """A flat result holding every scalar, each value distinct at 4 decimals and 3 digits."""
    names = [n for n in WaterDrumResult.scalar_names() if not n.startswith("num_")]
    names.remove("confidence")
    flat: dict[str, float | int] = {n: round(0.0123 + 0.0371 * i, 4) for i, n in enumerate(names)}
    return {**flat, "confidence": LEVEL, "num_queries": 12, "num_scored": 24, "num_skipped": 0}


# The words of a name, mapped to the quantity they claim (written here, not taken from the code).
SET_WORDS = {"forget set": "forget", "retain set": "retain", "all owners": "overall"}


def statistic_of(words: str) -> str:
    """The key suffix a name's statistic words claim."""
    words = words.lower()
    claims = {
        "_ci_low": f"{LEVEL:.0%} interval low" in words,
        "_ci_high": f"{LEVEL:.0%} interval high" in words,
        "_null_mean": "mean" in words and "null" in words,
        "_null_std": ("sd" in words.split() or "spread" in words) and "null" in words,
        "_p_value": "p-value" in words,
    }
    claimed = [suffix for suffix, said in claims.items() if said]
    assert len(claimed) <= 1, f"{words!r} claims {claimed}"
    if not claimed:
        assert words == "value", f"{words!r} names no statistic"
        return ""
    return claimed[0]


def quantity_of(name: str) -> str:
    """The result key that a model-index display name claims, read from its words."""
    if name == "WaterDrum separability (AUROC, retain vs forget)":
        return "separability_auroc"
    found = re.fullmatch(r"WaterDrum (?P<set>[^:]+): (?P<what>.+)", name)
    assert found, f"unexpected metric name {name!r}"
    if found["set"] == "separability":
        return "separability_auroc" + statistic_of(found["what"])
    assert found["set"] in SET_WORDS, f"{name!r} names no set"
    return SET_WORDS[found["set"]] + statistic_of(found["what"])


PUBLISHED = [
    k
    for k in WaterDrumResult.scalar_names()
    if not k.startswith("num_") and k != "confidence" and not k.endswith("_z")
]


def test_every_model_index_row_pairs_its_name_and_type_with_its_own_value(tmp_path):
    """Each row's display name and metric type both name the quantity whose value the row
    holds, for every scalar a card can hold (the three sets' six statistics, the AUROC and its
    interval)."""
    result = distinct_result()
    written = write_hub_results(result, tmp_path, CONFIG)
    rows = ModelCard.load(written[0]).data.eval_results
    by_type = {row.metric_type: row for row in rows}
    assert sorted(by_type) == sorted(f"waterdrum_{k}" for k in PUBLISHED)
    for key in PUBLISHED:
        row = by_type[f"waterdrum_{key}"]
        assert row.metric_value == pytest.approx(result[key]), key
        assert quantity_of(row.metric_name) == key, (key, row.metric_name)
    names = [row.metric_name for row in rows]
    assert len(set(names)) == len(names)  # no two quantities under one name


def test_every_eval_results_entry_holds_its_own_value_interval_null_and_p_value(tmp_path):
    """``.eval_results/``: each headline entry's task id names its value, and its notes give
    its own interval, null level (mean ± sd, in that order) and p-value, no other's."""
    result = distinct_result()
    written = write_hub_results(result, tmp_path, CONFIG)
    entries = parse_eval_result_entries(yaml.safe_load(written[1].read_text()))
    assert [e.task_id for e in entries] == [
        "forget_10/forget", "forget_10/retain", "forget_10/separability_auroc",
    ]  # fmt: skip
    others = {k: v for k, v in result.items() if k not in ("confidence", "num_queries")}
    for entry in entries:
        key = entry.task_id.split("/")[1]
        assert entry.value == pytest.approx(result[key]), key
        notes = entry.notes
        expected = [f"90% interval {result[f'{key}_ci_low']:.4f} to {result[f'{key}_ci_high']:.4f}"]
        if key != "separability_auroc":
            expected += [
                f"null level {result[f'{key}_null_mean']:.4f} ± {result[f'{key}_null_std']:.4f}",
                f'p-value of "no watermark" {result[f"{key}_p_value"]:.3g}',
            ]
        assert notes == "; ".join(expected), (key, notes)
        # No other quantity's number is in this entry's notes.
        mine = {f"{key}_ci_low", f"{key}_ci_high", f"{key}_null_mean", f"{key}_null_std"}
        for other, value in others.items():
            if other not in mine and isinstance(value, float):
                assert f"{value:.4f}" not in notes, (key, other)


def card_rows(text: str) -> dict[str, str]:
    """The trainer card's WaterDrum table: ``{logged name: value as written}``."""
    return dict(re.findall(r"^\| `(waterdrum/[^`]+)` \| ([^|]+?) \|$", text, flags=re.M))


def test_the_trainers_card_table_pairs_every_logged_name_with_its_last_value():
    """The unlearning trainer's card lists every ``waterdrum/`` value last logged, each under
    its own name (values distinct; an earlier evaluation's values are not shown)."""
    result = distinct_result()
    earlier = {f"waterdrum/{k}": 0.9 + 0.001 * i for i, k in enumerate(PUBLISHED)}
    last = {f"waterdrum/{k}": result[k] for k in PUBLISHED}
    facts = CardFacts("npo", "NPOTrainer", "Negative preference optimisation.", None, None)
    card = model_card(
        facts, [{**earlier, "step": 5}, {"loss": 1.0, "step": 8}, {**last, "step": 10}]
    )
    rows = card_rows(card.text)
    assert set(rows) == set(last)
    for name, value in last.items():
        assert math.isclose(float(rows[name]), value, rel_tol=5e-4), (name, rows[name], value)
    assert "(step 10)" in card.text
