"""The per-token watermark view: every token of a text with its term of the scheme's watermark
function under an owner's key, and the text's score, null level and p-value.

A text's score is the mean of its counted tokens' terms (:class:`~waterdrum_hf.Verifier`), so
colouring each token by its term shows where the score comes from: a watermarked text is mostly
one hue, a text without the watermark a mix of both. The terms come from the verifier's own
pieces (:meth:`~waterdrum_hf.Verifier.countable_pairs` and the scheme's ``token_terms``), the
null level and p-value from the analytic null of the text's token pairs
(:mod:`waterdrum_hf.scoring.analytic_null`). A view holds the owner's display name, never the key.
:mod:`~waterdrum_hf.report.token_view_render` draws views as HTML and PNG and writes them
(:func:`~waterdrum_hf.report.token_view_render.write_token_views`).

A view's exact terms are not the key, but each one tells where its token sits in the owner's
keyed permutation after its context, so a reader of them could raise or lower the watermark
on those token pairs. The files drawn from views therefore show three levels (for, neutral,
against: :func:`token_level`) unless asked for the exact terms (``exact_terms=True``); a
:class:`TokenView` itself holds the exact terms and is not for sharing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from waterdrum_hf.keys import check_watermark_id
from waterdrum_hf.schemes.base import PermutationScheme, SequenceScheme
from waterdrum_hf.scoring.analytic_null import AnalyticNull, effective_pairs, normal_p_value
from waterdrum_hf.scoring.verification import Verifier
from waterdrum_hf.utils.validation import check_encodable

POSITIVE_RGB = (67, 147, 195)
"""Colour of a token whose term is above 0 (it reads for the owner's watermark)."""
NEGATIVE_RGB = (214, 96, 77)
"""Colour of a token whose term is below 0 (it reads against it)."""
NEUTRAL_RGB = (150, 150, 150)
"""Colour, in a shared view, of a counted token whose term is near 0."""
LEVEL_THRESHOLD = 0.25
"""In a shared view (exact terms left out) a term of at least this share of the scale reads
"for", one of at most minus this share "against", anything between "neutral"."""
LEVEL_COLOURS: dict[str, tuple[int, int, int, float]] = {
    "for": (*POSITIVE_RGB, 0.8),
    "neutral": (*NEUTRAL_RGB, 0.3),
    "against": (*NEGATIVE_RGB, 0.8),
}
"""The colour of each level of a shared view (:func:`token_level`)."""


@dataclass(frozen=True)
class TokenView:
    """One text as the watermark reads it under one owner's key (the key itself is not kept).

    Attributes:
        tokens: the text cut at the watermarking tokenizer's token ends: ``"".join(tokens)`` is
            the text (text between two tokens goes with the token after it).
        terms: each token's term of the watermark function; NaN where a token is not counted
            (the first ``n_gram - 1`` tokens, ids outside the watermarking vocabulary).
        score: the text's score, the mean of the counted terms (NaN: nothing to count).
        null_mean, null_std: the score's mean and spread under a key that owns nothing (the
            analytic null; ``None`` when nothing is counted).
        z, p_value: ``(score - null_mean) / null_std`` and the one-sided p-value of "no
            watermark" (normal approximation).
        effective_pairs: how many equal-weight token pairs the score rests on; the p-value is
            approximate below a few hundred.
        scale: the largest ``|term - centre|`` the scheme can give: it gets the full colour.
        centre: a term's null level, what a key that owns nothing reads on average: colours
            and levels show ``term - centre`` (0 for Waterfall and KGW; the g-value table's
            share of ones, about 0.5, for Synth-ID, whose terms lie in [0, 1]).
        owner: the owner's display name. label: what the view shows (e.g. model and set).
        scheme: the scheme's settings (``{"scheme": "waterfall", "k_p": 1}``; never a key).
    """

    tokens: tuple[str, ...]
    terms: tuple[float, ...]
    score: float
    scale: float
    owner: str
    scheme: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    null_mean: float | None = None
    null_std: float | None = None
    z: float | None = None
    p_value: float | None = None
    effective_pairs: float | None = None
    centre: float = 0.0

    @property
    def num_counted(self) -> int:
        """Tokens that enter the score."""
        return sum(not math.isnan(t) for t in self.terms)


def token_view(
    text: str,
    watermark_id: int,
    verifier: Verifier,
    *,
    owner: str = "owner",
    label: str = "",
) -> TokenView:
    """The :class:`TokenView` of ``text`` under ``watermark_id``, read by ``verifier`` (its
    tokenizer, scheme and n-gram: build it as for :meth:`Verifier.verify`).

    ``owner`` is the name shown for the owner; ``watermark_id`` is a secret key and appears in
    no output. The tokenizer must be a fast one (its offsets cut the text into tokens).
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string, got {type(text).__name__}.")
    if not text:
        raise ValueError("`text` is empty: pass the text to show.")
    check_encodable(text, "text")
    watermark_id = check_watermark_id(watermark_id, "watermark_id")
    if not isinstance(verifier, Verifier):
        raise TypeError(
            f"`verifier` must be a waterdrum_hf.Verifier (e.g. Verifier(tokenizer, scheme='kgw')), "
            f"got {type(verifier).__name__}."
        )
    if not isinstance(owner, str) or not owner:
        raise TypeError("`owner` must be a non-empty display name (a string), never the key.")
    if isinstance(verifier.scheme, SequenceScheme):
        raise ValueError(
            f"The token view colours each token by its term, and the {verifier.scheme.name!r} "
            "scheme has none (it scores whole texts): there is no token view for it."
        )
    ids = verifier.token_ids(text)[0]
    terms = _token_terms(ids, watermark_id, verifier)
    score = float(verifier.score_token_ids([ids], watermark_id)[0])
    statistics = _null_statistics(ids, score, verifier) if not math.isnan(score) else {}
    centre = _term_centre(verifier)
    return TokenView(
        tokens=_token_pieces(text, ids, verifier.tokenizer),
        terms=tuple(float(t) for t in terms),
        score=score,
        scale=_term_scale(verifier, terms - centre),
        centre=centre,
        owner=owner,
        # The vocabulary the text was read with (a scheme's own None means "the tokenizer's").
        scheme={
            **verifier.scheme.settings(),
            "n_gram": verifier.n_gram,
            "vocab_size": verifier.vocab_size,
        },
        label=label,
        **statistics,
    )


def token_colour(term: float, scale: float) -> tuple[int, int, int, float] | None:
    """``(r, g, b, alpha)`` of a token: the hue of the term's sign, ``alpha = |term| / scale``
    (at most 1, 3 decimals); ``None`` for a token that is not counted (NaN)."""
    if math.isnan(term):
        return None
    rgb = POSITIVE_RGB if term >= 0 else NEGATIVE_RGB
    return (*rgb, round(min(abs(term) / scale, 1.0), 3))


def token_level(term: float, scale: float) -> str | None:
    """A term's level in a shared view: ``"for"`` (at least :data:`LEVEL_THRESHOLD` of
    ``scale``), ``"against"`` (at most minus it) or ``"neutral"``; ``None`` for a token that is
    not counted (NaN). Three levels say less than the exact term, which gives the token's
    place in the owner's keyed permutation (see SECURITY.md, "The watermark view")."""
    if math.isnan(term):
        return None
    share = term / scale
    if share >= LEVEL_THRESHOLD:
        return "for"
    return "against" if share <= -LEVEL_THRESHOLD else "neutral"


def level_colour(term: float, scale: float) -> tuple[int, int, int, float] | None:
    """``(r, g, b, alpha)`` of a token in a shared view: its :func:`token_level`'s colour
    (:data:`LEVEL_COLOURS`); ``None`` for a token that is not counted."""
    level = token_level(term, scale)
    return None if level is None else LEVEL_COLOURS[level]


def unlearning_token_views(
    completions: Mapping[str, Mapping[str, str]],
    watermark_ids: Mapping[str, int],
    verifier: Verifier,
    *,
    owner_names: Mapping[str, str],
) -> list[TokenView]:
    """Views of the same queries' completions from several models, e.g. before and after
    unlearning: ``completions[model][set]`` is a completion of model ``model`` for a query of
    set ``set`` (``"forget"``, ``"retain"``), read under ``watermark_ids[set]``, its owner
    shown as ``owner_names[set]``. Returned set by set, models in the order given (draw them
    with ``columns=len(completions)``: one row per set, one column per model)."""
    sets = list(watermark_ids)
    for model, texts in completions.items():
        if set(texts) != set(sets):
            raise ValueError(
                f"`completions[{model!r}]` has the sets {sorted(texts)}; every model needs one "
                f"completion for each of {sorted(sets)} (the sets of `watermark_ids`)."
            )
    missing = [name for name in sets if name not in owner_names]
    if missing:
        raise ValueError(f"`owner_names` has no display name for the sets {missing}.")
    return [
        token_view(
            completions[model][name],
            watermark_ids[name],
            verifier,
            owner=owner_names[name],
            label=f"{name} set, {model} model",
        )
        for name in sets
        for model in completions
    ]


def _token_terms(ids: np.ndarray, watermark_id: int, verifier: Verifier) -> np.ndarray:
    """Each token's term (NaN where not counted): every token with its ``n_gram - 1`` previous
    tokens is one window, so the verifier's own rule says which windows count."""
    window = verifier.n_gram - 1
    terms = np.full(len(ids), np.nan)
    windows = [ids[j - window : j + 1] for j in range(window, len(ids))]
    if not windows:
        return terms
    contexts, tokens, which = verifier.countable_pairs(windows)
    if len(tokens):
        keys = np.full(len(tokens), watermark_id, dtype=np.int64)
        terms[which + window] = verifier.scheme.token_terms(
            keys, contexts, tokens, verifier.vocab_size
        )
    return terms


def _null_statistics(ids: np.ndarray, score: float, verifier: Verifier) -> dict[str, float | None]:
    """The analytic null of one text's score: mean, spread, z, p-value, effective pairs."""
    try:
        moments = verifier.scheme.null_moments(verifier.vocab_size)
    except TypeError:
        return {}  # a scheme without exact null moments has no analytic null
    contexts, tokens, sample_of = verifier.countable_pairs([ids])
    null = AnalyticNull(contexts, tokens, sample_of, 1, moments)
    samples, weights = np.zeros(1, dtype=np.int64), np.array([1.0 / len(tokens)])
    mean, std = null.mean_std(samples, weights)
    z = (score - mean) / std if std > 0 else None
    return {
        "null_mean": mean,
        "null_std": std,
        "z": z,
        "p_value": normal_p_value(score, mean, std) if std > 0 else None,
        "effective_pairs": effective_pairs(null.pair_weights(samples, weights)[0]),
    }


def _term_centre(verifier: Verifier) -> float:
    """A term's null level (the scheme's null mean; 0 where it states none)."""
    try:
        return float(verifier.scheme.null_moments(verifier.vocab_size).mean)
    except TypeError:
        return 0.0


def _term_scale(verifier: Verifier, terms: np.ndarray) -> float:
    """The largest ``|term|`` the scheme gives at any position (the same colour scale for
    every text), or, for another kind of scheme, the largest in this text (``terms`` less
    their centre)."""
    if isinstance(verifier.scheme, PermutationScheme):
        n = verifier.vocab_size
        return float(np.abs(verifier.scheme.position_terms(np.arange(n), n)).max())
    counted = np.abs(terms[~np.isnan(terms)])
    return float(counted.max()) if len(counted) and counted.max() > 0 else 1.0


def _token_pieces(text: str, ids: np.ndarray, tokenizer: Any) -> tuple[str, ...]:
    """``text`` cut at each token's end (from the fast tokenizer's offsets): piece ``i`` runs
    from the end of token ``i - 1`` to the end of token ``i``; the last takes the rest."""
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            "The watermark view needs a fast tokenizer (its offsets cut the text into tokens): "
            "load it with AutoTokenizer.from_pretrained(..., use_fast=True)."
        )
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    if list(encoded["input_ids"]) != ids.tolist():
        raise ValueError("The tokenizer gave other ids with offsets than without; cannot align.")
    ends = [end for _, end in encoded["offset_mapping"]]
    pieces, start = [], 0
    for i, end in enumerate(ends):
        stop = len(text) if i == len(ends) - 1 else max(end, start)
        pieces.append(text[start:stop])
        start = stop
    return tuple(pieces)
