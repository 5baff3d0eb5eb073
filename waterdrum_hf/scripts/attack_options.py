"""The text attacks of ``waterdrum score`` and ``waterdrum audit``: ``--attack NAME:STRENGTH``
(repeatable), ``--attack-seed`` and ``--attack-source`` (:mod:`waterdrum_hf.attacks`, applied
to the completions before verification).

Substitution and insertion draw whole words of the watermark tokenizer's vocabulary (the same
for every model, and for saved generations); paraphrase rewrites with the model the command
loads; copy_paste pastes the unwatermarked texts of ``--attack-source``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import waterdrum_hf.attacks as text_attacks
from waterdrum_hf.scripts.parser import CliError, positive
from waterdrum_hf.utils.error_text import first_line
from waterdrum_hf.utils.fields import flag

ATTACKS_HELP = (
    "Edit every completion before verification: STRENGTH (in [0, 1]) is the share of each "
    f"text's words affected; NAME is one of {', '.join(text_attacks.names())}; repeat to apply "
    "several, in order (e.g. --attack deletion:0.2 --attack truncation:0.1)."
)
SOURCE_HELP = (
    "Unwatermarked texts that the copy_paste attack pastes from (e.g. the original passages): "
    "a table with a 'text' column, or a .txt file of one text per line."
)


@dataclass
class AttackSource:
    """``--attack-source``: what a command whose config holds the attacks (``waterdrum audit``)
    lacks."""

    _argument_group_name: ClassVar[str] = "text attacks (waterdrum_hf.attacks)"

    attack_source: str | None = flag(None, SOURCE_HELP)


@dataclass
class AttackArguments:
    """The text attacks applied before verification (``waterdrum score``), in order, with
    their seed and copy_paste's source."""

    _argument_group_name: ClassVar[str] = "text attacks (waterdrum_hf.attacks)"

    attacks: tuple[str, ...] = flag((), ATTACKS_HELP, aliases=["--attack"], repeatable=True)
    attack_seed: int | None = flag(None, "Seed of the attacks (default: --seed).")
    attack_source: str | None = flag(None, SOURCE_HELP)

    def __post_init__(self) -> None:
        self.attacks = tuple(attack_spec(text) for text in self.attacks)
        positive(self.attack_seed, "--attack-seed", minimum=0)

    def seed(self, default: int) -> int:
        """``--attack-seed``, else the command's ``default`` (its ``--seed``)."""
        return default if self.attack_seed is None else self.attack_seed


def attack_spec(text: str) -> str:
    """One attack, checked by :func:`waterdrum_hf.attacks.parse`, as
    :func:`waterdrum_hf.attacks.spec` writes it."""
    try:
        return text_attacks.spec(*text_attacks.parse(text))
    except ValueError as error:
        raise CliError(f"--attack: {first_line(error)}") from None


def check_attack_inputs(
    specs: Sequence[str], source: str | None, *, has_model: bool
) -> list[str] | None:
    """Refuse, before any work, an attack without what it needs: paraphrase a model (the
    command's ``--model-name-or-path``: ``has_model``), copy_paste ``--attack-source`` (``source``). Returns
    the texts of ``--attack-source`` (``None`` without it)."""
    names = {text_attacks.parse(spec)[0] for spec in specs}
    if "paraphrase" in names and not has_model:
        raise CliError(
            "--attack paraphrase rewrites with the model the command loads: give --model-name-or-path "
            "(with --generations it only paraphrases)"
        )
    if "copy_paste" in names and not source:
        raise CliError(
            "--attack copy_paste pastes unwatermarked text: give --attack-source FILE (e.g. the "
            "original passages, or a base model's completions)"
        )
    return attack_source(source) if source else None


def attack_source(path: str) -> list[str]:
    """The texts of ``--attack-source`` (its ``text`` column)."""
    from waterdrum_hf.scripts.files import read_table, require_columns

    rows = read_table(path, what="--attack-source")
    require_columns(rows, ["text"], f"--attack-source {path!r}")
    texts = [t for t in rows["text"] if isinstance(t, str) and t.split()]
    if not texts:
        raise CliError(f"--attack-source {path!r} holds no text with a word in it")
    return texts
