"""Watermark ids derived from a secret, so that owners need not pick small guessable integers.

A watermark id is the key of an owner's watermark: whoever knows it can verify the owner's
watermark in any text, and can also watermark other text under it. Small ids (0, 1, 2, ... as
in the published benchmarks) are guessed at once. :func:`key_from_secret` turns a secret that
the owner keeps (or shares only with a trusted third party) and a public owner name into an id
in ``0..2**32-1``, reproducibly and with any HMAC-SHA256 implementation:

    id = int.from_bytes(HMAC-SHA256(key=secret, msg=KEY_DOMAIN + owner)[:4], "big")

with ``secret`` and ``owner`` encoded as UTF-8 (``secret`` may also be bytes) and
``KEY_DOMAIN = b"waterdrum-hf/watermark-id/v1\\x00"``. The domain prefix keeps these ids apart
from any other use of the same secret. Waterfall seeds with 32-bit words, so an id has at most
32 bits however long the secret is.

The range of an id (``0..2**32-1``), its check, and the drawing of random ids that own nothing
(null references, demo owners) are defined here once, below both the reader and the writer.
"""

from __future__ import annotations

import hashlib
import hmac
import numbers
import os
from collections.abc import Iterable, Sequence, Sized
from pathlib import Path

import numpy as np

MAX_WATERMARK_ID = 2**32 - 1
"""Largest watermark id: Waterfall seeds numpy's MT19937 with 32-bit words."""

KEY_DOMAIN = b"waterdrum-hf/watermark-id/v1\x00"
"""Prefix of the HMAC message (domain separation); part of the documented derivation."""


def key_from_secret(secret: str | bytes, owner: str) -> int:
    """Watermark id (``0..2**32-1``) of ``owner`` under ``secret``, by HMAC-SHA256.

    The first 4 bytes, big-endian, of ``HMAC-SHA256(key=secret, msg=KEY_DOMAIN + owner)``
    (strings as UTF-8). The same secret and owner always give the same id; different owners or
    secrets give unrelated ids. Keep the secret private (e.g. ``secrets.token_hex(32)``); the
    owner name need not be.

    Raises:
        TypeError: ``secret`` is not str/bytes, or ``owner`` is not a str.
        ValueError: either is empty, or a string holds text UTF-8 cannot encode.
    """
    if not isinstance(secret, (str, bytes)):
        raise TypeError(f"`secret` must be a str or bytes, got {type(secret).__name__}.")
    if not isinstance(owner, str):
        raise TypeError(f"`owner` must be a str (the owner's name), got {type(owner).__name__}.")
    if not secret:
        raise ValueError(
            "`secret` is empty: pass a long random secret, e.g. secrets.token_hex(32)."
        )
    if not owner:
        raise ValueError("`owner` is empty: pass the owner's name (it need not be secret).")
    digest = hmac.new(_utf8(secret, "secret"), KEY_DOMAIN + _utf8(owner, "owner"), hashlib.sha256)
    return int.from_bytes(digest.digest()[:4], "big")


def _utf8(value: str | bytes, name: str) -> bytes:
    """``value`` as UTF-8 bytes; a string UTF-8 cannot encode (a lone surrogate) is refused.
    (This module imports nothing of the library: the id range sits below every reader and
    writer.)"""
    if isinstance(value, bytes):
        return value
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"`{name}` holds a lone surrogate at character {error.start}, which UTF-8 cannot "
            "encode: clean it first."
        ) from None


def check_watermark_id(value: object, name: str = "id") -> int:
    """Return ``value`` as a Python int in ``0..2**32-1`` (the range Waterfall can seed with)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer watermark id, got {type(value).__name__}.")
    value = int(value)
    if not 0 <= value <= MAX_WATERMARK_ID:
        raise ValueError(f"`{name}` must be in 0..2**32-1 (Waterfall seeds with 32-bit words).")
    return value


def watermark_id_from_text(text: str, name: str = "id") -> int:
    """One watermark id written as text (an option, a line of an id file, a column's value),
    checked by :func:`check_watermark_id`. Errors never show the value: it may be a key."""
    try:
        number = int(text)
    except ValueError:
        raise ValueError(
            f"{name} must be whole numbers (watermark ids), got a non-integer"
        ) from None
    return check_watermark_id(number, name)


def read_watermark_ids(path: str | os.PathLike[str], name: str = "ids") -> list[int]:
    """The ids of a keys file: one id per line, blank lines ignored. A file keeps keys off
    command lines, shell history and the documents evaluation tools log."""
    file = Path(path)
    if file.is_dir():
        raise ValueError(f"{name} file {str(path)!r} is a folder; give a file with one id per line")
    if not file.is_file():
        raise ValueError(f"{name} file {str(path)!r} does not exist")
    lines = [line.strip() for line in file.read_text(encoding="utf-8-sig").splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        raise ValueError(f"{name} file {str(path)!r} has no ids")
    if lines[0].startswith(("{", "[")):
        raise ValueError(
            f"{name} file {str(path)!r} is JSON (a keys.json?): give a file with one id per "
            "line, such as the demo's forget_ids.txt"
        )
    for number, line in enumerate(lines, start=1):
        words = line.split()
        if not all(word.isdigit() for word in words):  # never shown: a word may be a key
            raise ValueError(
                f"{name} file {str(path)!r}: non-blank line {number} is not a watermark id "
                "(ids are whole numbers, one per line)"
            )
        if len(words) > 1:
            raise ValueError(
                f"{name} file {str(path)!r}: put one id per line (non-blank line {number} "
                f"holds {len(words)})"
            )
    return [watermark_id_from_text(line, name) for line in lines]


def check_watermark_ids(
    ids: int | Sequence[int] | np.ndarray, count: int, name: str = "ids"
) -> np.ndarray:
    """Broadcast one id, or check one id per item; returns an int64 array of length ``count``."""
    if isinstance(ids, numbers.Integral) and not isinstance(ids, bool):
        return np.full(count, check_watermark_id(ids, name), dtype=np.int64)
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sized):
        raise TypeError(f"`{name}` must be one integer id or a sequence of integer ids.")
    if len(ids) != count:
        raise ValueError(
            f"`{name}` has {len(ids)} entries but there are {count} texts: pass one id per text, or a single id."
        )
    return np.array(
        [check_watermark_id(v, f"{name}[{i}]") for i, v in enumerate(ids)], dtype=np.int64
    )


def random_keys(num_keys: int, *, exclude: Iterable[int] = (), seed: int = 0) -> np.ndarray:
    """``num_keys`` distinct pseudo-random watermark ids, none of them in ``exclude``.

    Deterministic in ``seed``. Used for null references (keys that own nothing) and for
    owners who need a private key (the demo).
    """
    rng = np.random.default_rng(seed)
    excluded = {int(i) for i in exclude}
    keys: dict[int, None] = {}  # insertion-ordered set
    while len(keys) < num_keys:
        for key in rng.integers(0, MAX_WATERMARK_ID, size=num_keys, endpoint=True).tolist():
            if key not in excluded and len(keys) < num_keys:
                keys[key] = None
    return np.array(list(keys), dtype=np.int64)
