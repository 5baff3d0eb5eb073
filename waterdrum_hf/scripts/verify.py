"""``waterdrum verify``: score texts in a file with their owners' watermark keys.

Score texts (JSON Lines, JSON, CSV, Parquet, or plain text with one text per line) for
Waterfall watermarks: per-text scores, then each set's value with a null-based p-value of 'no
watermark'.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.files import check_output_file, read_table
from waterdrum_hf.scripts.models import load_tokenizer_option, watermark_ids
from waterdrum_hf.scripts.parser import ScriptParser, positive
from waterdrum_hf.scripts.scoring_arguments import (
    ScoringArguments,
    check_n_gram,
    empirical_null_keys,
)
from waterdrum_hf.scripts.texts import TextArguments, texts_and_owner_ids
from waterdrum_hf.utils.fields import flag

if TYPE_CHECKING:
    from waterdrum_hf.scoring import WaterDrumResult


@dataclass
class VerifyArguments:
    """Which owners are the forget set, and where the result goes."""

    forget_ids: list[str] = flag(help="Owners to report as the forget set.", factory=list)
    forget_ids_file: str | None = flag(
        None, "File with one forget id per line (keeps ids off the command line)."
    )
    max_rows: int = flag(20, "Per-text scores printed at most.")
    output_file: str | None = flag(None, "Write the full result (JSON, with per-text scores) here.")
    overwrite: bool = flag(False, "Replace an existing --output-file.")

    def __post_init__(self) -> None:
        positive(self.max_rows, "--max-rows")


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser(
        (TextArguments, VerifyArguments, ScoringArguments), prog=prog, description=__doc__
    )


def main(texts_args: TextArguments, args: VerifyArguments, scoring: ScoringArguments) -> int:
    from waterdrum_hf.report.owner_table import owner_table
    from waterdrum_hf.scoring import waterdrum_result

    if args.output_file:
        check_output_file(args.output_file, "--output-file", overwrite=args.overwrite)
    texts, ids = texts_and_owner_ids(read_table(texts_args.file), texts_args)
    config = scoring.scoring_config(len(texts))
    tokenizer = load_tokenizer_option(texts_args.watermark_tokenizer, "watermark tokenizer")
    check_n_gram(config.scheme.n_gram, texts, tokenizer)
    result = waterdrum_result(
        texts,
        ids,
        tokenizer,
        config=config,
        forget_ids=watermark_ids(args.forget_ids, args.forget_ids_file, "forget ids", ids),
        return_details=True,
    )
    print_scores(list(result.scores or ()), args.max_rows, saved=bool(args.output_file))
    print_summary(result, empirical_null_keys(config))
    for line in owner_table(result, config.null):
        print(line)
    if args.output_file:
        from waterdrum_hf.report import json_text

        with open(args.output_file, "w") as handle:
            handle.write(json_text(result.to_dict()))  # unscored texts: null, not NaN
        print(f"Full result: {args.output_file}")
    return 0


def print_scores(scores: list[float], limit: int, *, saved: bool) -> None:
    """The first ``limit`` texts' scores; the count of the others, and where they are when
    ``saved`` (``--output-file``)."""
    print(f"{'row':>6}  score")
    for row, score in enumerate(scores[:limit]):
        print(f"{row:>6}  {'   n/a (nothing to count)' if score != score else f'{score:+.4f}'}")
    if len(scores) > limit:
        where = "all in --output-file" if saved else "--output-file saves them all"
        print(f"   ... {len(scores) - limit} more rows ({where})")


def print_summary(result: WaterDrumResult, null_keys: int | None) -> None:
    """The flat scalars, 4 decimals (p-values at their precision: :func:`p_value_text`), with
    a plain-words verdict per set."""
    from waterdrum_hf.report.formatting import p_value_text

    print()
    for name, value in result.scalars().items():
        if name.endswith("p_value") and isinstance(value, float):
            print(f"{name}: {p_value_text(value, null_keys)}")
        else:
            print(f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}")
    for name, set_value in result.sets().items():
        if set_value.p_value is not None:
            found = set_value.p_value <= 0.05
            text = p_value_text(set_value.p_value, null_keys)
            print(
                f"{name}: watermark {'detected' if found else 'not detected'} at the 5 % level "
                f"(p {'' if text.startswith('<=') else '= '}{text})"
            )


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum verify"))
