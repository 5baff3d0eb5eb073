"""``--attack NAME:STRENGTH`` of ``waterdrum score`` and ``waterdrum audit``: the texts verified
are the attacked ones (as ``waterdrum_hf.attacks`` edits them), the output records the attacks
(never a key), and bad input is one line."""

from __future__ import annotations

import json

import pytest
from tokenizer_builders import word_texts, word_tokenizer

from tests.scripts.cli_cases import KEYS, audit_argv
from waterdrum_hf import attacks, waterdrum_metrics
from waterdrum_hf.config import NullConfig, WaterDrumConfig
from waterdrum_hf.scripts import audit, main


@pytest.fixture
def saved(tmp_path):
    """A dataset of ten rows (two owners), a word tokenizer that reads them, and saved
    generations: two samples per row."""
    tok = word_tokenizer(4096)
    tok.save_pretrained(tmp_path / "tok")
    texts = word_texts(4096, 20, 30, seed=7)
    owners = [KEYS[i % 2] for i in range(10)]
    rows = [json.dumps({"text": texts[i], "owner_id": o}) for i, o in enumerate(owners)]
    (tmp_path / "rows.jsonl").write_text("\n".join(rows))
    samples = [[texts[i], texts[10 + i]] for i in range(10)]
    lines = [
        json.dumps({"owner": f"owner-{i % 2 + 1}", "samples": s}) for i, s in enumerate(samples)
    ]
    (tmp_path / "generations.jsonl").write_text("\n".join(lines))
    (tmp_path / "forget.txt").write_text(f"{KEYS[1]}\n")
    (tmp_path / "originals.txt").write_text("the plain unwatermarked passage\nanother one here\n")
    common = [
        "score", "--dataset-name", tmp_path / "rows.jsonl", "--watermark-tokenizer", tmp_path / "tok",
        "--forget-ids-file", tmp_path / "forget.txt", "--null", "analytic",
        "--generations", tmp_path / "generations.jsonl",
    ]  # fmt: skip
    return tmp_path, samples, owners, tok, common


def run(argv, capsys):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:  # argparse's errors
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def report(folder):
    return json.loads((folder / "report.json").read_text())


def read_samples(path):
    return [json.loads(line)["samples"] for line in path.read_text().splitlines()]


def test_score_verifies_the_attacked_texts_and_records_the_attacks(saved, capsys):
    tmp_path, samples, owners, tok, common = saved
    code, _, err = run([*common, "--output-dir", tmp_path / "plain"], capsys)
    assert code == 0, err
    plain = report(tmp_path / "plain")["models"]["model"]
    # deletion:0 edits nothing: the same values as no attack at all.
    code, _, err = run([*common, "--attack", "deletion:0", "--output-dir", tmp_path / "d0"], capsys)
    assert code == 0, err
    assert read_samples(tmp_path / "d0" / "attacked.jsonl") == samples
    unchanged = report(tmp_path / "d0")["models"]["model"]
    assert {k: unchanged[k] for k in ("forget", "retain", "separability_auroc")} == {
        k: plain[k] for k in ("forget", "retain", "separability_auroc")
    }
    # truncation:0.5 verifies the first half of each text: fewer tokens, other values.
    code, out, err = run(
        [*common, "--attack", "truncation:0.5", "--output-dir", tmp_path / "t"], capsys
    )
    assert code == 0, err
    cut = read_samples(tmp_path / "t" / "attacked.jsonl")
    tokens = [len(tok(s)["input_ids"]) for query in samples for s in query]
    kept = [len(tok(s)["input_ids"]) for query in cut for s in query]
    assert kept == [n // 2 for n in tokens]  # 30 words, 30 tokens: 15 left
    assert all(
        c == s[: len(c)]
        for q, p in zip(cut, samples, strict=True)
        for c, s in zip(q, p, strict=True)
    )
    truncated = report(tmp_path / "t")
    value = truncated["models"]["model"]
    assert value["forget"] != plain["forget"] and value["retain"] != plain["retain"]
    config = WaterDrumConfig(null=NullConfig("analytic"))
    expected = waterdrum_metrics(cut, owners, tok, config=config, forget_ids=[KEYS[1]])
    assert value["forget"] == pytest.approx(expected["forget"])
    # The output records the attacks and their seed; the attacked texts re-score alike.
    assert truncated["settings"]["attacks"] == ["truncation:0.5"]
    assert truncated["settings"]["attack_seed"] == 0
    assert "truncation:0.5" in (tmp_path / "t" / "report.md").read_text()
    assert "attacks: truncation:0.5 (seed 0)" in out
    again = [*common[:-1], tmp_path / "t" / "attacked.jsonl", "--output-dir", tmp_path / "again"]
    code, _, err = run(again, capsys)
    assert code == 0, err
    assert report(tmp_path / "again")["models"]["model"]["forget"] == value["forget"]
    shown = out + err + (tmp_path / "t" / "report.json").read_text()
    shown += (tmp_path / "t" / "report.md").read_text()
    assert all(str(k) not in shown for k in KEYS)


def test_score_applies_several_attacks_in_order_with_their_seed(saved, capsys):
    tmp_path, samples, _, _, common = saved
    specs = ["deletion:0.2", "copy_paste:0.3", "truncation:0.1"]
    flags = ["--attack", specs[0], "--attack", *specs[1:]]  # repeated, or several at once
    flags += ["--attack-source", tmp_path / "originals.txt", "--attack-seed", 3]
    code, _, err = run([*common, *flags, "--output-dir", tmp_path / "a"], capsys)
    assert code == 0, err
    source = ["the plain unwatermarked passage", "another one here"]
    expected = attacks.chain(samples, specs, 3, source=source)
    assert read_samples(tmp_path / "a" / "attacked.jsonl") == expected
    assert expected != attacks.chain(samples, specs, 0, source=source)  # the seed matters
    settings = report(tmp_path / "a")["settings"]
    assert settings["attacks"] == specs and settings["attack_seed"] == 3
    # 30 words: 6 deleted, then 7 of the 24 pasted over, then 2 of the 24 cut.
    assert {len(s.split()) for q in expected for s in q} == {22}
    assert any("unwatermarked" in s for q in expected for s in q)
    # The same from a YAML recipe (--config): a list of attacks.
    (tmp_path / "recipe.yaml").write_text(
        f"attacks: [{', '.join(specs)}]\nattack_seed: 3\nattack_source: {tmp_path}/originals.txt\n"
    )
    argv = [*common, "--config", tmp_path / "recipe.yaml", "--output-dir", tmp_path / "yaml"]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert read_samples(tmp_path / "yaml" / "attacked.jsonl") == expected
    # The command line's --attack replaces the file's list (as every flag overrides the file).
    argv = [*argv[:-1], tmp_path / "override", "--attack", specs[2]]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert report(tmp_path / "override")["settings"]["attacks"] == [specs[2]]
    assert read_samples(tmp_path / "override" / "attacked.jsonl") == attacks.chain(
        samples, [specs[2]], 3
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--attack", "synonym:0.2"], "unknown attack 'synonym' in 'synonym:0.2': the names are "
         "deletion, substitution, insertion, copy_paste, truncation, paraphrase"),
        (["--attack", "deletion:1.5"], "`strength` must be in [0, 1]"),
        (["--attack", "deletion:-0.1"], "`strength` must be in [0, 1]"),
        (["--attack", "deletion"], "an attack is written NAME:STRENGTH, e.g. deletion:0.2"),
        (["--attack", "deletion:lots"], "the strength in 'deletion:lots' must be a number"),
        (["--attack", "paraphrase:0.5"], "--attack paraphrase rewrites with the model the "
         "command loads: give --model-name-or-path"),
        (["--attack", "copy_paste:0.5"], "give --attack-source FILE"),
        (["--attack", "copy_paste:0.5", "--attack-source", "{tmp}/none.txt"],
         "--attack-source '{tmp}/none.txt' does not exist"),
        (["--attack-seed", "-1"], "--attack-seed must be >= 0, got -1"),
    ],
)  # fmt: skip
def test_score_bad_attacks_are_one_line_before_any_work(saved, flags, message, capsys):
    tmp_path, *_, common = saved
    flags = [str(f).format(tmp=tmp_path) for f in flags]
    code, _, err = run([*common, *flags, "--output-dir", tmp_path / "o"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert message.format(tmp=tmp_path) in err
    assert not (tmp_path / "o").exists()


def test_score_paraphrases_and_substitutes_with_the_models_it_has(
    tiny_folder, owner_rows, tmp_path, capsys
):
    """Sampling, then paraphrase by the scored model itself; substitution draws words of the
    watermark tokenizer's vocabulary; with --generations, --model-name-or-path is the paraphraser."""
    common = [
        "score", "--dataset-name", owner_rows, "--watermark-tokenizer", tiny_folder, "--forget-ids",
        KEYS[1], "--null", "analytic", "--prefix-tokens", 8, "--num-samples", 1,
        "--max-new-tokens", 16,
    ]  # fmt: skip
    flags = ["--attack", "substitution:0.5", "paraphrase:1"]
    code, _, err = run(
        [*common, "--model-name-or-path", tiny_folder, *flags, "--output-dir", tmp_path / "a"],
        capsys,
    )
    assert code == 0, err
    sampled = read_samples(tmp_path / "a" / "generations.jsonl")
    edited = read_samples(tmp_path / "a" / "attacked.jsonl")
    assert len(edited) == len(sampled) == 6 and edited != sampled
    assert report(tmp_path / "a")["settings"]["attacks"] == ["substitution:0.5", "paraphrase:1.0"]
    # Re-scoring the saved generations with the same attacks and model edits them alike.
    saved = [
        "--generations",
        tmp_path / "a" / "generations.jsonl",
        "--model-name-or-path",
        tiny_folder,
    ]
    code, _, err = run([*common, *saved, *flags, "--output-dir", tmp_path / "b"], capsys)
    assert code == 0, err
    assert read_samples(tmp_path / "b" / "attacked.jsonl") == edited
    value = report(tmp_path / "b")["models"]["model"]["forget"]
    assert value == report(tmp_path / "a")["models"]["model"]["forget"]


def test_audit_scores_each_attack_beside_the_unattacked_texts(
    tiny_folder, owner_rows, tmp_path, capsys
):
    flags = ["--audits", "--attack", "deletion:0", "--attack", "truncation:0.5"]  # no others
    code, out, err = run(audit_argv(tiny_folder, owner_rows, tmp_path / "a", *flags), capsys)
    assert code == 0, err
    saved = json.loads((tmp_path / "a" / "audits.json").read_text())
    assert saved["settings"]["attacks"] == ["deletion:0.0", "truncation:0.5"]
    assert saved["settings"]["attack_seed"] == 0
    for entries in saved["models"].values():
        assert list(entries) == ["before", "deletion:0.0", "truncation:0.5"]
        before, untouched, cut = (entries[a] for a in entries)
        assert untouched == before  # deletion:0 edits nothing
        assert cut["forget"] != before["forget"] and cut["retain"] != before["retain"]
        assert "separability_auroc" in cut
    # The same model on both sides: each attack reads the same on the yardstick.
    assert "truncation:0.5" in out and "+0.000" in out
    report = (tmp_path / "a" / "report.md").read_text()
    assert "forget under truncation:0.5" in report and "Text attacks (seed 0)" in report
    assert "| AUROC before | AUROC under deletion:0.0 | AUROC under truncation:0.5 |" in report
    assert (tmp_path / "a" / "audits.png").is_file()
    shown = out + err + report + (tmp_path / "a" / "audits.json").read_text()
    assert all(str(k) not in shown for k in KEYS)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--attack", "synonym:0.2"], "unknown attack 'synonym'"),
        (["--attack", "deletion:2"], "`strength` must be in [0, 1]"),
        (["--attack", "deletion:0.2", "--attack", "deletion:0.20"], "given twice"),
        (["--audits"], "or --attacks one text attack"),
        (["--attack", "copy_paste:0.2"], "give --attack-source FILE"),
    ],
)
def test_audit_bad_attacks_are_one_line_before_any_work(
    tiny_folder, owner_rows, tmp_path, flags, message, capsys
):
    code, _, err = run(audit_argv(tiny_folder, owner_rows, tmp_path / "a", *flags), capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "a").exists()


def test_audit_reads_its_attacks_from_a_recipe_and_the_command_line_replaces_them(tmp_path):
    """`--attack` adds to the attacks each time it is given; the first replaces a `--config`
    file's list (every flag overrides the file), and with neither there are none."""
    (tmp_path / "recipe.yaml").write_text(
        "attacks: [deletion:0.2]\naudits: [quantization]\nquantization_bits: [8]\n"
    )
    required = [
        "--model-name-or-path",
        "m",
        "--dataset-name",
        "d",
        "--watermark-tokenizer",
        "t",
        "--output-dir",
        "o",
    ]

    def parsed(*flags):
        groups = audit.make_parser(prog="waterdrum audit").parse_args_and_config(
            [*required, *flags]
        )
        return next(g for g in groups if isinstance(g, audit.AuditConfig))

    recipe = ["--config", str(tmp_path / "recipe.yaml")]
    assert parsed(*recipe).attacks == ("deletion:0.2",)
    assert parsed(*recipe).audits == ("quantization",)
    assert parsed(*recipe).quantization_bits == (8,)
    flags = ["--attack", "truncation:0.5", "--attack", "deletion:0.1", "insertion:0.3"]
    assert parsed(*recipe, *flags).attacks == ("truncation:0.5", "deletion:0.1", "insertion:0.3")
    assert parsed().attacks == ()
