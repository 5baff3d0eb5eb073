"""Id files on the command line: an id that owns no row of the data is an error naming it by its
place (never its value: ids are keys), and a JSON keys file given as an id file says so."""

from __future__ import annotations

import json

import pytest

from waterdrum_hf.scripts import main

OWNERS = (3_141_592_653, 2_718_281_828)
STRAY = 1_618_033_988  # owns no row


@pytest.fixture
def rows(tmp_path):
    path = tmp_path / "rows.jsonl"
    lines = [
        json.dumps({"text": f"the cat sat on the mat number {i} today", "owner_id": OWNERS[i % 2]})
        for i in range(4)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def verify(rows, ids_file):
    return main(
        ["verify", "--file", str(rows), "--watermark-tokenizer", "tiny", "--id-column", "owner_id",
         "--forget-ids-file", str(ids_file)]
    )  # fmt: skip


def test_an_id_that_owns_no_row_is_an_error_naming_its_place_not_its_value(
    rows, tmp_path, capsys, tiny_model
):
    ids = tmp_path / "forget_ids.txt"
    ids.write_text(f"{OWNERS[1]}\n{STRAY}\n")
    assert verify(rows, ids) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line == (
        f"waterdrum verify: error: forget ids: id number 2 in {ids} owns no row of the data: "
        "is it the right id file for this data?"
    )
    assert str(STRAY) not in captured.out + captured.err
    ids.write_text(f"{OWNERS[1]}\n")  # the right file: it runs
    assert verify(rows, ids) == 0


def test_a_json_keys_file_given_as_an_id_file_says_it_is_json(rows, tmp_path, capsys):
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"owner-1": OWNERS[0], "owner-2": OWNERS[1]}, indent=1))
    assert verify(rows, keys) == 2
    err = capsys.readouterr().err
    assert "is JSON (a keys.json?): give a file with one id per line" in err
    assert str(OWNERS[0]) not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("owner-1\nowner-2\n", "non-blank line 1 is not a watermark id (ids are whole numbers"),
        (f"\n{OWNERS[0]}\nthe forget owner\n", "non-blank line 2 is not a watermark id"),
        (
            f"{OWNERS[0]}\n{OWNERS[0]} {OWNERS[1]}\n",
            "put one id per line (non-blank line 2 holds 2)",
        ),
        ("-3\n", "non-blank line 1 is not a watermark id"),
    ],
)
def test_an_id_file_of_words_says_which_line_is_not_an_id(rows, tmp_path, capsys, content, message):
    """Words are not several ids; neither the words nor the ids are shown (either may be a
    key)."""
    ids = tmp_path / "ids.txt"
    ids.write_text(content)
    assert verify(rows, ids) == 2
    err = capsys.readouterr().err
    assert message in err and "(a line holds several)" not in err
    assert str(OWNERS[0]) not in err and "owner-1" not in err and "forget owner" not in err
