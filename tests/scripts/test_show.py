"""`waterdrum show` on the files the demo and `waterdrum score` write: each owner's key from
keys.json by the owner's name, one id of a several-id file chosen with --owner, the first sample
of each query of a generations.jsonl, and rows taken from every owner in turn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from waterdrum_hf.scoring.verification import Verifier
from waterdrum_hf.scripts import main

KEYS = {"owner-1": 3_141_592_653, "owner-2": 2_718_281_828, "owner-3": 1_414_213_562}
TEXTS = {
    name: [f"{name} wrote passage {i} about the standard library and its modules" for i in range(3)]
    for name in KEYS
}


@pytest.fixture
def demo_files(tmp_path):
    """The demo's watermarked.jsonl (owner name and text, grouped by owner), keys.json,
    forget_ids.txt (the last two owners) and a score generations.jsonl (owner, samples)."""
    rows = [{"owner": n, "text": t} for n, texts in TEXTS.items() for t in texts]
    (tmp_path / "watermarked.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "keys.json").write_text(json.dumps(KEYS, indent=1))
    (tmp_path / "forget_ids.txt").write_text(f"{KEYS['owner-2']}\n{KEYS['owner-3']}\n")
    queries = [{"owner": r["owner"], "samples": [r["text"][::-1], r["text"]]} for r in rows]
    (tmp_path / "generations.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    return tmp_path


def show(folder, file, *flags):
    argv = ["show", "--file", str(folder / file), "--watermark-tokenizer", "tiny"]
    return main([*argv, "--output-dir", str(folder / "views"), "--overwrite", *map(str, flags)])


def scores(folder):
    """Each written view's owner name and score, by row."""
    found = {}
    for page in sorted((folder / "views").glob("row-*.html")):
        text = page.read_text()
        row = int(page.stem.split("-")[1])
        found[row] = (next(n for n in KEYS if n in text), text)
    return found


def test_keys_file_reads_each_row_with_its_owners_key_and_rows_come_from_every_owner(
    demo_files, tiny_model, capsys
):
    _, tokenizer = tiny_model
    assert show(demo_files, "watermarked.jsonl", "--keys-file", demo_files / "keys.json",
                "--max-rows", 3) == 0  # fmt: skip
    views = scores(demo_files)
    assert sorted(views) == [0, 3, 6]  # one row of each owner, not the first three of owner-1
    verifier = Verifier(tokenizer)
    for row, (name, page) in views.items():
        text = TEXTS[name][row % 3]
        assert f"score {verifier.verify(text, KEYS[name])[0]:+.3f}" in page
    printed = capsys.readouterr()
    assert not any(str(key) in printed.out + printed.err for key in KEYS.values())
    # The caption names the vocabulary the text was read with, not the scheme's None.
    assert f"vocab_size={tokenizer.vocab_size})" in page
    assert "vocab_size=None" not in page


def test_a_several_id_file_needs_owner_to_choose_one(demo_files, tiny_model, capsys):
    _, tokenizer = tiny_model
    assert show(demo_files, "watermarked.jsonl", "--id-file", demo_files / "forget_ids.txt") == 2
    assert "--id-file holds 2 ids: one reads every text (choose one with --owner 1..2)" in (
        capsys.readouterr().err
    )
    assert show(demo_files, "watermarked.jsonl", "--id-file", demo_files / "forget_ids.txt",
                "--owner", 2, "--max-rows", 1) == 0  # fmt: skip
    ((row, (name, page)),) = scores(demo_files).items()
    key = KEYS["owner-3"]  # the second id of forget_ids.txt reads every text
    assert f"score {Verifier(tokenizer).verify(TEXTS[name][0], key)[0]:+.3f}" in page
    assert show(demo_files, "watermarked.jsonl", "--id-file", demo_files / "forget_ids.txt",
                "--owner", 3) == 2  # fmt: skip
    assert "--owner 3: --id-file holds 2 ids (1 to 2)" in capsys.readouterr().err


def test_a_generations_file_shows_each_querys_first_sample(demo_files, tiny_model):
    _, tokenizer = tiny_model
    assert show(demo_files, "generations.jsonl", "--keys-file", demo_files / "keys.json",
                "--max-rows", 2) == 0  # fmt: skip
    views = scores(demo_files)
    assert sorted(views) == [0, 3]
    for row, (name, page) in views.items():
        first_sample = TEXTS[name][row % 3][::-1]
        assert f"score {Verifier(tokenizer).verify(first_sample, KEYS[name])[0]:+.3f}" in page


def test_a_keys_file_without_an_owners_name_says_which(demo_files, capsys):
    (demo_files / "keys.json").write_text(json.dumps({"owner-1": KEYS["owner-1"]}))
    assert show(demo_files, "watermarked.jsonl", "--keys-file", demo_files / "keys.json") == 2
    assert "--keys-file has no id for owner 'owner-2' of column 'owner'" in capsys.readouterr().err


def test_the_module_and_the_command_print_the_same_options():
    """`python -m waterdrum_hf.scripts.show` runs the script `waterdrum show` runs."""
    env = {**os.environ, "COLUMNS": "100"}
    module = [sys.executable, "-m", "waterdrum_hf.scripts.show", "--help"]
    command = [str(Path(sys.executable).with_name("waterdrum")), "show", "--help"]
    helps = [
        subprocess.run(a, capture_output=True, text=True, env=env, check=True)
        for a in (module, command)
    ]
    assert helps[0].stdout == helps[1].stdout
    assert "--exact-terms" in helps[0].stdout and "--owner" in helps[0].stdout


def test_a_yaml_config_gives_the_options_and_the_command_line_overrides_it(demo_files, tiny_model):
    """`--config FILE.yaml` (TRL's): its keys are field names; a flag given wins."""
    _, tokenizer = tiny_model
    recipe = demo_files / "show.yaml"
    recipe.write_text(
        f"file: {demo_files / 'watermarked.jsonl'}\nwatermark_tokenizer: tiny\n"
        f"id_file: {demo_files / 'forget_ids.txt'}\nowner: 1\nmax_rows: 3\n"
        f"output_dir: {demo_files / 'views'}\n"
    )
    assert main(["show", "--config", str(recipe), "--owner", "2", "--max-rows", "1"]) == 0
    ((row, (name, page)),) = scores(demo_files).items()  # --max-rows 1: the flag's
    key = KEYS["owner-3"]  # --owner 2: the flag's
    assert f"score {Verifier(tokenizer).verify(TEXTS[name][0], key)[0]:+.3f}" in page


def test_settings_the_view_does_not_read_are_refused(demo_files, capsys):
    """A view reads with the scheme's settings only: a null, pooling or interval flag would be
    silently ignored, so it is refused."""
    keys = ["--keys-file", demo_files / "keys.json"]
    for flags in (["--null-keys", "5"], ["--pooling", "mean"], ["--confidence", "0.9"]):
        assert show(demo_files, "watermarked.jsonl", *keys, *flags) == 2
        assert "reads the scheme's settings only" in capsys.readouterr().err
