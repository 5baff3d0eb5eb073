"""`waterdrum COMMAND --help` is plain text a terminal shows well: no reST markup from the
docstrings and field help it is made of."""

from __future__ import annotations

import re

import pytest

from waterdrum_hf.scripts import COMMANDS, main
from waterdrum_hf.scripts.parser import plain_text


def test_plain_text_drops_literals_and_roles():
    assert plain_text("``--x`` as :class:`~waterdrum_hf.WaterDrumConfig` or :func:`f`") == (
        "--x as WaterDrumConfig or f"
    )
    assert plain_text("a `single` quote stays") == "a `single` quote stays"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_commands_help_is_plain_text(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"usage: waterdrum {command}")
    assert "``" not in shown and not re.search(r":[a-z]+:`", shown), command
