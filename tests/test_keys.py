"""key_from_secret: the documented HMAC derivation, spread over 32 bits, bad input refused."""

from __future__ import annotations

import hashlib
import hmac
import secrets

import pytest

from waterdrum_hf import (
    key_from_secret,
)
from waterdrum_hf.keys import KEY_DOMAIN


def independent_key(secret: bytes, owner: str) -> int:
    """The documented derivation, written out with the standard library."""
    message = b"waterdrum-hf/watermark-id/v1\x00" + owner.encode("utf-8")
    return int.from_bytes(hmac.digest(secret, message, hashlib.sha256)[:4], "big")


def test_key_from_secret_is_the_documented_hmac():
    assert KEY_DOMAIN == b"waterdrum-hf/watermark-id/v1\x00"
    for secret, owner in [("s3cret", "cs.CR"), ("pässwörd", "Ödön"), ("x" * 200, "owner-19")]:
        key = key_from_secret(secret, owner)
        assert key == independent_key(secret.encode("utf-8"), owner)
        assert key == key_from_secret(secret.encode("utf-8"), owner)  # str is its UTF-8 bytes
        assert key == key_from_secret(secret, owner)  # deterministic
        assert isinstance(key, int) and 0 <= key <= 2**32 - 1
    raw = secrets.token_bytes(32)
    assert key_from_secret(raw, "a") == independent_key(raw, "a")


def test_keys_of_other_owners_or_secrets_differ_and_spread_over_32_bits():
    secret = secrets.token_hex(16)
    keys = [key_from_secret(secret, f"owner-{i}") for i in range(2000)]
    assert len(set(keys)) == len(keys)
    assert key_from_secret("another " + secret, "owner-0") != keys[0]
    assert max(keys) > 2**31 and min(keys) < 2**31  # not small guessable integers
    assert sum(k < 2**20 for k in keys) < 10


@pytest.mark.parametrize(
    ("secret", "owner", "error", "match"),
    [
        ("", "a", ValueError, "`secret` is empty"),
        (b"", "a", ValueError, "`secret` is empty"),
        ("s", "", ValueError, "`owner` is empty"),
        (123, "a", TypeError, "`secret` must be a str or bytes, got int"),
        (bytearray(b"s"), "a", TypeError, "`secret` must be a str or bytes"),
        ("s", b"a", TypeError, "`owner` must be a str"),
        ("s", 7, TypeError, "`owner` must be a str"),
        ("s\ud800", "a", ValueError, "`secret` holds a lone surrogate"),
        ("s", "a\udfff", ValueError, "`owner` holds a lone surrogate"),
    ],
)
def test_key_from_secret_bad_input(secret, owner, error, match):
    with pytest.raises(error, match=match) as raised:
        key_from_secret(secret, owner)
    if isinstance(secret, str) and len(secret) > 1:
        assert secret not in str(raised.value)
