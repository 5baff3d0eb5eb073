"""``waterdrum show``: the per-token watermark view of texts in a file, as HTML and PNG.

Show how the watermark reads in each text: every token coloured by its term of the scheme's
watermark function under the owner's key, with the text's score, null level and p-value. Writes
one self-contained .html and one .png per text (the first --max-rows) into --output-dir; keys
appear in neither. A ``waterdrum score`` generations.jsonl (owner and samples columns) shows
each query's first sample.

By default each token shows only its level (for, neutral, against). An exact term is not the
key, but it tells where its token sits in the owner's keyed permutation after the previous
token, so a view with exact terms, posted publicly, lets a reader raise or lower the
owner's watermark on every token pair it shows (SECURITY.md, "The watermark view").
--exact-terms writes them (colour strength and a "term +0.9291" tooltip per token): keep
such files with whoever holds the key.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from waterdrum_hf.config import SCHEME_KEYWORDS
from waterdrum_hf.scripts import run_script
from waterdrum_hf.scripts.files import check_output_folder, read_table, require_columns
from waterdrum_hf.scripts.models import load_tokenizer_option
from waterdrum_hf.scripts.parser import CliError, ScriptParser, positive
from waterdrum_hf.scripts.scoring_arguments import ScoringArguments, check_n_gram
from waterdrum_hf.scripts.texts import TextArguments, texts_and_owner_ids
from waterdrum_hf.utils.fields import flag


@dataclass
class ShowArguments:
    """Where the views go, how many, and whether they carry the exact terms."""

    output_dir: str = flag(help="Folder to write the views into.")
    owner: int | None = flag(
        None,
        "With an --id-file of several ids (e.g. the demo's forget_ids.txt): the place (1, 2, "
        "...) of the id that reads every text.",
    )
    max_rows: int = flag(
        20, "Views written at most: rows taken in turn from each owner, so every owner shows."
    )
    exact_terms: bool = flag(
        False,
        "Show each token's exact term (colour strength and tooltip) instead of its level (for, "
        "neutral, against); the exact terms tell where each token sits in the owner's keyed "
        "permutation, so keep such views private.",
    )
    overwrite: bool = flag(False, "Replace existing views.")

    def __post_init__(self) -> None:
        positive(self.owner, "--owner")
        positive(self.max_rows, "--max-rows")


def make_parser(prog: str | None = None) -> ScriptParser:
    return ScriptParser(
        (TextArguments, ShowArguments, ScoringArguments), prog=prog, description=__doc__
    )


def main(texts_args: TextArguments, args: ShowArguments, scoring: ScoringArguments) -> int:
    from waterdrum_hf.lm_eval_tasks import interleave_by_owner
    from waterdrum_hf.report.token_view import token_view
    from waterdrum_hf.report.token_view_render import write_token_views
    from waterdrum_hf.scoring.verification import Verifier

    settings = ("scheme", *SCHEME_KEYWORDS, "n_gram", "vocab_size")
    if scoring != ScoringArguments(**{name: getattr(scoring, name) for name in settings}):
        flags = ", ".join("--" + name.replace("_", "-") for name in settings)
        raise CliError(
            f"waterdrum show reads the scheme's settings only ({flags}); the view has no "
            "pooling, null or interval"
        )
    out = Path(args.output_dir)
    check_output_folder(args.output_dir, "--output-dir")
    data = with_text_column(read_table(texts_args.file), texts_args)
    texts_args = dataclasses.replace(  # the demo's and `waterdrum score`'s files name owners
        texts_args,
        name_column=texts_args.name_column or ("owner" if "owner" in data.column_names else None),
    )
    texts, ids = texts_and_owner_ids(data, texts_args, owner=args.owner, choosable=True)
    rows = sorted(interleave_by_owner(ids)[: args.max_rows])  # owners in turn: every one shows
    data, texts, ids = data.select(rows), [texts[r] for r in rows], [ids[r] for r in rows]
    stems = [f"row-{row:04d}" for row in rows]
    existing = [s for s in stems for ext in (".html", ".png") if (out / (s + ext)).exists()]
    if existing and not args.overwrite:
        raise CliError(
            f"--output-dir {args.output_dir!r} already holds {existing[0]}.html/.png; pass --overwrite "
            "to replace the views"
        )
    names = display_names(data, texts_args, ids)
    tokenizer = load_tokenizer_option(texts_args.watermark_tokenizer, "watermark tokenizer")
    scheme = scoring.scoring_config().scheme
    check_n_gram(scheme.n_gram, texts, tokenizer)
    verifier = Verifier(tokenizer, scheme)
    for row, text, key, name, stem in zip(rows, texts, ids, names, stems, strict=True):
        if not text:
            print(f"row {row}: empty text, no view")
            continue
        view = token_view(text, key, verifier, owner=name, label=f"row {row}")
        html, _ = write_token_views(
            [view],
            out,
            stem=stem,
            title=f"Watermark view: row {row}",
            exact_terms=args.exact_terms,
        )
        verdict = "nothing to count" if view.score != view.score else f"score {view.score:+.4f}"
        if view.p_value is not None:
            verdict += f", p {view.p_value:.2g}"
        print(f"row {row} ({name}): {verdict} -> {html.with_suffix('')}.html/.png")
    print(f"Views of {len(texts)} texts in {out}")
    return 0


def with_text_column(data: Any, args: TextArguments) -> Any:
    """``data``, where it is a ``generations.jsonl`` of ``waterdrum score`` (a ``samples``
    column of lists and no text column), with each query's first sample as its text."""
    if args.text_column in data.column_names or "samples" not in data.column_names:
        return data
    samples = data["samples"]
    if not all(isinstance(s, list) and s for s in samples):
        raise CliError(f"column 'samples' of {args.file} must hold each query's samples")
    return data.add_column(args.text_column, [s[0] for s in samples])


def display_names(data: Any, args: TextArguments, ids: list[int]) -> list[str]:
    """Each row's owner name: ``--name-column``, else ``owner-<n>`` by first appearance."""
    from waterdrum_hf.scoring import owner_display_names

    if args.name_column:
        require_columns(data, [args.name_column], args.file)
        names = [str(v) for v in data[args.name_column]]
        if not all(names):
            raise CliError(f"column {args.name_column!r} has empty names")
        if any(name == str(key) for name, key in zip(names, ids, strict=True)):
            raise CliError(f"column {args.name_column!r} holds the keys: give display names")
        return names
    by_id = owner_display_names(ids, None)
    return [by_id[key] for key in ids]


if __name__ == "__main__":
    sys.exit(run_script(sys.modules[__name__], sys.argv[1:], "waterdrum show"))
