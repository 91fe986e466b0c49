from __future__ import annotations

import zlib

API_KEY_PREFIX = "sk_live_"
# A test key: the same API, never charged.
TEST_API_KEY_PREFIX = "sk_test_"
API_KEY_PREFIXES = (API_KEY_PREFIX, TEST_API_KEY_PREFIX)
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def api_key_checksum(secret: str) -> str:
    """Base62 CRC-32 (IEEE, as zlib) of the 32-character secret, left-padded with "0" to 6 characters."""
    n = zlib.crc32(secret.encode("ascii"))
    out = ""
    while True:
        n, digit = divmod(n, 62)
        out = _BASE62[digit] + out
        if n == 0:
            break
    return out.rjust(6, "0")


def api_key_problem(key: str) -> str | None:
    """Why a key is malformed, or None: checked before any call so a mistyped key fails at once."""
    if not isinstance(key, str) or not key.startswith(API_KEY_PREFIXES):
        return 'API keys start with "sk_live_" or "sk_test_"'
    prefix_length = len(API_KEY_PREFIX)  # both prefixes are 8 characters
    if len(key) != prefix_length + 38:
        return f"API keys are {prefix_length + 38} characters long"
    body = key[prefix_length:]
    if not all(c in _BASE62 for c in body):
        return "API keys contain only 0-9, A-Z and a-z after the prefix"
    if api_key_checksum(body[:32]) != body[32:]:
        return "the API key checksum does not match (mistyped or truncated?)"
    return None
