"""``waterdrum audit``: relearning and quantization audits, bad input before any work."""

from __future__ import annotations

import json
import sys

import pytest

from tests.scripts.cli_cases import (
    KEYS,
    audit_argv,
    run,
)


def test_audit_relearns_and_quantizes_each_model_and_writes_the_report(
    tiny_folder, owner_rows, tmp_path, capsys
):
    code, out, err = run(audit_argv(tiny_folder, owner_rows, tmp_path / "a"), capsys)
    assert code == 0, err
    saved = json.loads((tmp_path / "a" / "audits.json").read_text())
    assert saved["retrained"] == "retrained"
    assert set(saved["models"]) == {"unlearned", "retrained"}
    for entries in saved["models"].values():
        assert list(entries) == ["before", "relearned", "int8"]
        # Relearning changed the weights, so the same seeded samples differ and so do the values.
        assert entries["relearned"]["forget"] != entries["before"]["forget"]
    check = saved["settings"]["quantization_checks"]["int8"]
    assert (
        check["quantized_layers"] > 0 and check["weight_bytes_after"] < check["weight_bytes_before"]
    )
    assert saved["settings"]["relearn_texts"] == 1  # a quarter of the forget owner's 3 rows
    # The same model on both sides: every audit reads exactly what it reads on the yardstick.
    assert "excess" in out and "+0.000" in out
    report = (tmp_path / "a" / "report.md").read_text()
    assert "## Audits: does the unlearning hold?" in report and "Zhang et al., ICLR 2025" in report
    assert "(yardstick)" in report and (tmp_path / "a" / "audits.png").is_file()
    shown = out + err + report + (tmp_path / "a" / "audits.json").read_text()
    assert all(str(k) not in shown for k in KEYS)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--forget-ids", 12345], "forget ids: id number 1 given owns no row of the data"),
        (["--audits", "pruning"], "unknown audit 'pruning'"),
        (["--quantization-bits", 3], "--quantization_bits may hold 8 and 4"),
        (["--relearn-share", 0], "--relearn_share must be in (0, 1]"),
        (["--model-name-or-path", "a=/no/such/folder"], "does not exist"),
    ],
)
def test_audit_bad_input_is_one_line_before_any_work(
    tiny_folder, owner_rows, tmp_path, flags, message, capsys
):
    code, out, err = run(audit_argv(tiny_folder, owner_rows, tmp_path / "a", *flags), capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "a").exists()


def test_audit_without_torchao_says_how_to_install_it(
    tiny_folder, owner_rows, tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "torchao", None)  # as if not installed
    code, _, err = run(audit_argv(tiny_folder, owner_rows, tmp_path / "a"), capsys)
    assert code == 2 and 'pip install "waterdrum-hf[quantization]"' in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "a").exists()
