"""``waterdrum verify``: scores, owners with their Holm-adjusted verdicts, schemes."""

from __future__ import annotations

import json

import pytest

from tests.scripts.cli_cases import (
    KEYS,
    run,
)
from waterdrum_hf import waterdrum_metrics
from waterdrum_hf.config import NullConfig, WaterDrumConfig
from waterdrum_hf.schemes import KGWScheme, WaterfallScheme


@pytest.mark.parametrize("null", ["analytic", "none"])
def test_verify_takes_the_analytic_null_or_none(scored_file, capsys, null):
    tmp_path, texts, owners, tok = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    argv += ["--id-column", "owner_id", "--forget-ids-file", tmp_path / "forget.txt"]
    code, out, _ = run([*argv, "--null", null, "--output-file", tmp_path / f"{null}.json"], capsys)
    assert code == 0
    written = json.loads((tmp_path / f"{null}.json").read_text())
    config = WaterDrumConfig(null=NullConfig("analytic") if null == "analytic" else None)
    expected = waterdrum_metrics(texts, owners, tok, config=config, forget_ids=[KEYS[1]])
    assert {k: v for k, v in written.items() if k in expected} == pytest.approx(expected)
    assert ("retain_p_value" in written) == (null == "analytic")


def test_verify_prints_scores_summary_and_p_values(scored_file, capsys):
    tmp_path, texts, owners, tok = scored_file
    code, out, _ = run(
        [
            "verify",
            "--file",
            tmp_path / "outputs.jsonl",
            "--watermark-tokenizer",
            tmp_path / "tok",
            "--id-column",
            "owner_id",
            "--forget-ids-file",
            tmp_path / "forget.txt",
            "--null-keys",
            9,
            "--output-file",
            tmp_path / "r.json",
        ],
        capsys,
    )
    expected = waterdrum_metrics(
        texts,
        owners,
        tok,
        config=WaterDrumConfig.from_keywords(dict(null_keys=9)),
        forget_ids=[KEYS[1]],
    )
    assert code == 0
    assert f"forget: {expected['forget']:.4f}" in out and "num_skipped: 0" in out
    # p-values at their precision: 9 null keys give none below 1/10, said as such
    p_value = expected["retain_p_value"]
    shown = "<= 0.1 (the smallest 9 null keys can give)" if p_value <= 0.1 else f"{p_value:.2g}"
    assert f"retain_p_value: {shown}" in out
    assert f"(p {'' if p_value <= 0.1 else '= '}{shown})" in out
    assert not [line for line in out.splitlines() if "p_value: 0.0000" in line]
    assert "retain: watermark" in out and "None" not in out
    assert all(str(k) not in out for k in KEYS)
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["retain"] == pytest.approx(expected["retain"]) and len(written["scores"]) == 10
    assert set(written["per_owner"]) == {"owner-1", "owner-2"}
    # Rows not printed are said to be in --output-file only where there is one.
    for output, where in (
        ([], "--output-file saves them all"),
        (["--output-file", tmp_path / "s.json"], "all in --output-file"),
    ):
        argv = ["verify", "--file", tmp_path / "outputs.jsonl", "--watermark-tokenizer"]
        argv += [tmp_path / "tok", "--id-column", "owner_id", "--max-rows", 3, *output]
        code, out, _ = run(argv, capsys)
        assert code == 0 and f"   ... 7 more rows ({where})" in out


@pytest.mark.parametrize("forget_ids", [None, KEYS[1]])
def test_verify_lists_each_owner_with_its_holm_adjusted_verdict(scored_file, capsys, forget_ids):
    """Holm over the owners of each set: one family of two owners without forget ids (39 null
    keys at least), two families of one (19) with; with fewer, no verdict and the keys needed."""
    tmp_path, texts, owners, tok = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    argv += ["--id-column", "owner_id"] + (["--forget-ids", forget_ids] if forget_ids else [])
    code, out, _ = run([*argv, "--null-keys", 39], capsys)
    expected = waterdrum_metrics(
        texts,
        owners,
        tok,
        config=WaterDrumConfig.from_keywords(dict(null_keys=39)),
        forget_ids=[forget_ids] if forget_ids else None,
        return_details=True,
    )["per_owner"]
    assert code == 0 and "owner        set        value       p  Holm p  verdict" in out
    for name, owner in expected.items():
        (row,) = [line for line in out.splitlines() if line.startswith(name)]
        assert f"{owner['p_value']:.4f}  {owner['adjusted_p_value']:.4f}" in row
        found = owner["adjusted_p_value"] <= 0.05
        assert row.endswith("  detected" if found else "  not detected")
    sets = {"overall": list(expected.values())}
    if forget_ids:
        sets = {
            name: [o for o in expected.values() if o["forget"] == (name == "forget")]
            for name in ("forget", "retain")
        }
    for label, family in sets.items():
        found = sum(o["adjusted_p_value"] <= 0.05 for o in family)
        assert f"{label} owners detected: {found} of {len(family)} (Holm-adjusted p" in out
    keys = 38 if forget_ids is None else 18
    code, out, _ = run([*argv, "--null-keys", keys], capsys)
    assert out.count("cannot tell: too few null keys") == 2
    for label, family in sets.items():
        m = len(family)
        assert (
            f"{label} owners: none can read detected with {keys} null keys (Holm over {m} "
            f"owners needs p <= 0.05 / {m}, below 1 / (1 + {keys})): use --null-keys {keys + 1} "
            "or more" in out
        )


def test_verify_lists_at_most_max_owners(scored_file, capsys, monkeypatch):
    from waterdrum_hf.report import owner_table as owners

    monkeypatch.setattr(owners, "MAX_OWNERS", 1)
    tmp_path, *_ = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    code, out, _ = run([*argv, "--id-column", "owner_id", "--null", "analytic"], capsys)
    assert code == 0 and "owner-1 " in out and "owner-2 " not in out
    assert "... 1 more owner (all in the full result)" in out


def test_verify_a_plain_text_file_with_one_id(scored_file, capsys):
    tmp_path, texts, _, tok = scored_file
    (tmp_path / "texts.txt").write_text("\n".join(texts[:3]) + "\n\n")
    (tmp_path / "key.txt").write_text("7\n")
    code, out, _ = run(
        [
            "verify",
            "--file",
            tmp_path / "texts.txt",
            "--watermark-tokenizer",
            tmp_path / "tok",
            "--id-file",
            tmp_path / "key.txt",
            "--null",
            "none",
        ],
        capsys,
    )
    expected = waterdrum_metrics(texts[:3], [7] * 3, tok)
    assert code == 0 and f"overall: {expected['overall']:.4f}" in out and "num_queries: 3" in out


@pytest.mark.parametrize(
    ("flags", "scheme"),
    [
        (["--scheme", "kgw"], "kgw"),
        (["--scheme", "kgw", "--gamma", "0.25"], KGWScheme(gamma=0.25)),
        (["--k-p", "3"], WaterfallScheme(k_p=3)),
    ],
)
def test_verify_reads_the_scheme_the_data_was_watermarked_with(scored_file, flags, scheme, capsys):
    tmp_path, texts, owners, tok = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    code, out, _ = run([*argv, "--id-column", "owner_id", "--null-keys", 0, *flags], capsys)
    expected = waterdrum_metrics(
        texts, owners, tok, config=WaterDrumConfig.from_keywords(dict(scheme=scheme))
    )
    assert code == 0 and f"overall: {expected['overall']:.4f}" in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [(["--scheme", "kgw", "--k-p", "2"], "--k-p is a setting of the Waterfall scheme, not of 'kgw'"),
     (["--gamma", "0.3"], "--gamma is a setting of the KGW scheme, not of 'waterfall'"),
     (["--scheme", "kgw", "--gamma", "1.5"], "--gamma must be in (0, 1)")],
)  # fmt: skip
def test_a_setting_of_another_scheme_is_refused(scored_file, flags, message, capsys):
    tmp_path, *_ = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    code, _, err = run([*argv, "--id-column", "owner_id", *flags], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
