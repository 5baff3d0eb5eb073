"""The scoring flags every scoring command shares, and the one place they become a
:class:`~waterdrum_hf.WaterDrumConfig`.

``--scheme`` with each scheme's setting (``--k-p`` Waterfall's, ``--gamma`` KGW's) and
``--n-gram``/``--vocab-size``, ``--pooling``, ``--null``/``--null-keys``, and (where a command
reports intervals) ``--confidence``/``--bootstrap-resamples``. The null and the intervals are
seeded with the command's ``--seed`` (0 where it has none).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from waterdrum_hf.cli.parsing import CliError, first_line, positive

NULL_REFERENCE_MEMORY_LIMIT = 2 * 1024**3
"""Bytes the null reference may take at most (see :func:`check_null_keys`)."""
MANY_NULL_KEYS = 10_000
"""Above this many null keys, a run warns that each key costs a pass over the texts."""

DEFAULT_NULL = "analytic"
"""The null of ``--null`` when neither it nor ``--null-keys`` is given (see
``benchmarks/results/null_agreement.md`` for why the analytic one)."""
DEFAULT_NULL_KEYS = 100
"""Random keys of the empirical null when ``--null empirical`` gives no ``--null-keys``."""

_FLAGS = {"k_p": "--k-p", "gamma": "--gamma", "n_gram": "--n-gram", "vocab_size": "--vocab-size"}


def add_scheme_options(parser: argparse.ArgumentParser) -> Any:
    """The scheme flags (read with :func:`scheme_from_options`); returns their group."""
    from waterdrum_hf.schemes import SCHEMES  # light: the kernel loads when first used

    group = parser.add_argument_group("scoring (WaterDrumConfig)")
    group.add_argument(
        "--scheme", choices=list(SCHEMES), default="waterfall",
        help="the watermark scheme the data was watermarked with",
    )  # fmt: skip
    group.add_argument(
        "--k-p", type=positive(), default=None, help="Waterfall's function number (default 1)"
    )
    group.add_argument(
        "--gamma",
        type=float,
        default=None,
        help="KGW's green share of the vocabulary (default 0.5)",
    )
    group.add_argument("--n-gram", type=positive(2), default=2, help="watermark n-gram")
    group.add_argument(
        "--vocab-size",
        type=positive(2),
        help="expected watermark vocabulary size (checked against the tokenizer)",
    )
    return group


def add_scoring_options(parser: argparse.ArgumentParser, *, intervals: bool = True) -> None:
    """The scheme, pooling and null flags; with ``intervals``, the bootstrap's too."""
    from waterdrum_hf.bootstrap import DEFAULT_RESAMPLES, MIN_RESAMPLES

    group = add_scheme_options(parser)
    group.add_argument(
        "--pooling", choices=["tokens", "mean"], default="tokens",
        help="how a query pools its samples: token-weighted (the paper's) or the mean score",
    )  # fmt: skip
    group.add_argument(
        "--null",
        choices=["empirical", "analytic", "none"],
        default=None,
        help="what 'no watermark' reads at: empirical (random keys, exact p, each key costs a "
        "scoring pass), analytic (from the pair counts, normal-approximation p, a few percent "
        f"of the scoring) or none; default: empirical with --null-keys, else {DEFAULT_NULL}",
    )
    group.add_argument(
        "--null-keys",
        type=positive(0),
        default=None,
        help=f"random keys of the empirical null (default {DEFAULT_NULL_KEYS}; 0: none)",
    )
    if intervals:
        group.add_argument(
            "--confidence",
            type=confidence_level,
            help="add confidence intervals at this level (e.g. 0.95): a bootstrap over queries, "
            "resampled within each owner (seeded by --seed)",
        )
        group.add_argument(
            "--bootstrap-resamples",
            type=positive(MIN_RESAMPLES),
            default=DEFAULT_RESAMPLES,
            help="resamples of the --confidence bootstrap",
        )


def confidence_level(text: str) -> float:
    """``--confidence``'s value: a number strictly between 0 and 1."""
    from waterdrum_hf.bootstrap import check_confidence

    try:
        return check_confidence(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number strictly between 0 and 1 (e.g. 0.95), got {text!r}"
        ) from None


def scoring_config(
    args: argparse.Namespace, num_texts: int, *, default_null: str = DEFAULT_NULL
) -> Any:
    """The :class:`~waterdrum_hf.WaterDrumConfig` of :func:`add_scoring_options`' flags (the
    empirical null's memory checked for ``num_texts`` texts: :func:`check_null_keys`);
    ``default_null`` is the null when neither ``--null`` nor ``--null-keys`` is given."""
    from waterdrum_hf.config import IntervalConfig, WaterDrumConfig

    seed = getattr(args, "seed", 0)
    try:
        null = _null(args, num_texts, seed, default_null)
        confidence = getattr(args, "confidence", None)
        interval = None
        if confidence is not None:
            interval = IntervalConfig(confidence, resamples=args.bootstrap_resamples, seed=seed)
        return WaterDrumConfig(
            scheme=scheme_from_options(args), pooling=args.pooling, null=null, interval=interval
        )
    except (TypeError, ValueError) as error:
        raise CliError(first_line(error)) from None


def _null(args: argparse.Namespace, num_texts: int, seed: int, default: str) -> Any:
    from waterdrum_hf.config import NullConfig

    null: Any = args.null or ("empirical" if args.null_keys is not None else default)
    if null != "empirical":
        if args.null_keys:
            raise CliError(f"--null-keys is the empirical null's; not a setting of --null {null}")
        return None if null == "none" else NullConfig(null)
    null_keys = DEFAULT_NULL_KEYS if args.null_keys is None else args.null_keys
    check_null_keys(null_keys, num_texts)
    return NullConfig("empirical", null_keys, seed=seed) if null_keys else None


def scheme_from_options(args: argparse.Namespace) -> Any:
    """The scheme the flags name (through :func:`~waterdrum_hf.schemes.resolve_scheme`, which
    refuses another scheme's setting), with the flags named in its errors."""
    from waterdrum_hf.schemes import resolve_scheme

    settings = {name: getattr(args, name, None) for name in _FLAGS}
    try:
        return resolve_scheme(args.scheme, **settings)
    except (TypeError, ValueError) as error:
        message = first_line(error)
        for setting, flag in _FLAGS.items():  # the user typed flags: name them as flags
            message = message.replace(f"`{setting}`", flag)
        raise CliError(message) from None


def check_null_keys(null_keys: int, num_texts: int, option: str = "--null-keys") -> None:
    """Refuse a null reference that would not fit in memory, with the largest that would.

    Each key costs about 100 bytes (drawing distinct keys) and 24 bytes per text (its key,
    its token sums and their pooled values), so memory grows as texts x keys; the smallest
    p-value is ``1 / (1 + keys)``, so a thousand keys already resolve 0.001.
    """
    per_key = 100 + 24 * num_texts
    need = null_keys * per_key
    if need > NULL_REFERENCE_MEMORY_LIMIT:
        largest = NULL_REFERENCE_MEMORY_LIMIT // per_key
        raise CliError(
            f"{option} {null_keys} needs about {need / 1e9:.1f} GB of memory for {num_texts} "
            f"texts; give at most {largest} (1000 keys already resolve p-values down to 0.001)"
        )
    if null_keys > MANY_NULL_KEYS:
        print(
            f"warning: {option} {null_keys}: every key is a pass over the {num_texts} texts, "
            "so this is slow; 1000 keys already resolve p-values down to 0.001",
            file=sys.stderr,
        )


def check_n_gram(n_gram: int, texts: Sequence[Any], tokenizer: Any) -> None:
    """Refuse an n-gram longer than every text (in ``tokenizer``'s tokens): no text could be
    scored, and the skipped-text warning could only guess why."""
    texts = [text for text in texts if isinstance(text, str)]
    lengths = tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
    longest = max((len(ids) for ids in lengths), default=0)
    if n_gram > longest:
        raise CliError(
            f"--n-gram {n_gram} is longer than every text (the longest has {longest} tokens of "
            "the watermark tokenizer), so no text could be scored; give the n-gram the texts "
            "are watermarked with (2 unless it was changed)"
        )
