"""The text attacks of ``waterdrum score`` and ``waterdrum audit``: ``--attack NAME:STRENGTH``
(repeatable), ``--attack-seed`` and ``--attack-source`` (:mod:`waterdrum_hf.attacks`, applied
to the completions before verification).

Substitution and insertion draw whole words of the watermark tokenizer's vocabulary (the same
for every model, and for saved generations); paraphrase rewrites with the model the command
loads; copy_paste pastes the unwatermarked texts of ``--attack-source``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from waterdrum_hf.scripts.parser import CliError, Reading, first_line, positive

METAVAR = "NAME:STRENGTH"


def attack_spec(text: str) -> str:
    """An argparse ``type``: one attack, checked by :func:`waterdrum_hf.attacks.parse`, as
    :func:`waterdrum_hf.attacks.spec` writes it."""
    from waterdrum_hf import attacks

    try:
        return attacks.spec(*attacks.parse(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(first_line(error)) from None


ATTACK_READING = Reading(attack_spec, lambda specs: " ".join(specs) or "none", METAVAR)
"""How ``waterdrum audit`` reads ``AuditConfig.attacks`` (its ``--attack`` flag)."""


def add_attack_options(parser: argparse.ArgumentParser, *, config_flags: bool = True) -> None:
    """``--attack`` and ``--attack-seed`` (unless ``config_flags`` is false: a config's fields
    give them) and ``--attack-source``."""
    from waterdrum_hf import attacks

    group = parser.add_argument_group("text attacks (waterdrum_hf.attacks)")
    if config_flags:
        group.add_argument(
            "--attack",
            dest="attacks",
            action="extend",
            nargs="+",
            type=attack_spec,
            metavar=METAVAR,
            help="edit every completion before verification: STRENGTH (in [0, 1]) is the share "
            f"of each text's words affected; NAME is one of {', '.join(attacks.names())}; "
            "repeat to apply several, in order (e.g. --attack deletion:0.2 --attack "
            "truncation:0.1)",
        )
        group.add_argument(
            "--attack-seed", type=positive(0), help="seed of the attacks (default: --seed)"
        )
    group.add_argument(
        "--attack-source",
        metavar="FILE",
        help="unwatermarked texts that the copy_paste attack pastes from (e.g. the original "
        "passages): a table with a 'text' column, or a .txt file of one text per line",
    )


def check_attack_inputs(
    specs: Sequence[str], args: argparse.Namespace, *, has_model: bool
) -> list[str] | None:
    """Refuse, before any work, an attack without what it needs: paraphrase a model (the
    command's ``--model``: ``has_model``), copy_paste ``--attack-source``. Returns the texts of
    ``--attack-source`` (``None`` without it)."""
    from waterdrum_hf import attacks

    names = {attacks.parse(spec)[0] for spec in specs}
    if "paraphrase" in names and not has_model:
        raise CliError(
            "--attack paraphrase rewrites with the model the command loads: give --model "
            "(with --generations it only paraphrases)"
        )
    if "copy_paste" in names and not args.attack_source:
        raise CliError(
            "--attack copy_paste pastes unwatermarked text: give --attack-source FILE (e.g. the "
            "original passages, or a base model's completions)"
        )
    return attack_source(args.attack_source) if args.attack_source else None


def attack_source(path: str) -> list[str]:
    """The texts of ``--attack-source`` (its ``text`` column)."""
    from waterdrum_hf.scripts.files import read_table, require_columns

    rows = read_table(path, what="--attack-source")
    require_columns(rows, ["text"], f"--attack-source {path!r}")
    texts = [t for t in rows["text"] if isinstance(t, str) and t.split()]
    if not texts:
        raise CliError(f"--attack-source {path!r} holds no text with a word in it")
    return texts


def attacked(
    completions: list[list[str]],
    args: argparse.Namespace,
    vocabulary: Any,
    paraphraser: tuple[Any, Any] | None,
    source: list[str] | None,
) -> list[list[str]]:
    """The completions after ``--attack`` (in order), seeded by ``--attack-seed`` (else
    ``--seed``); ``vocabulary``: the watermark tokenizer."""
    from waterdrum_hf import attacks

    return attacks.chain(
        completions, attack_specs(args), attack_seed(args), tokenizer=vocabulary,
        paraphraser=paraphraser, source=source,
    )  # fmt: skip


def attack_specs(args: argparse.Namespace) -> list[str]:
    """The attacks of ``--attack``, in order (none when it is not given)."""
    return list(args.attacks or [])


def attack_seed(args: argparse.Namespace) -> int:
    """``--attack-seed``, else the command's ``--seed``."""
    return int(args.attack_seed if args.attack_seed is not None else args.seed)
