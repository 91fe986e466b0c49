"""Byte helpers: base64 (standard and url-safe without padding), SHA-256 digests, RFC 8785 canonical JSON."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import rfc8785


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unb64url(text: str) -> bytes:
    if not all(c.isalnum() or c in "-_" for c in text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def sha256_digest(data: bytes | str) -> str:
    """RFC 9530 digest field value: ``sha-256=:<base64>:``."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return f"sha-256=:{b64(sha256(raw))}:"


def salted_request_digest(data: bytes | str, salt: str) -> str:
    """Version 2 ``request_digest``: ``hmac-sha-256=:<base64>:``, HMAC-SHA-256 over the request body keyed with the 32
    bytes of the response's ``notary_request_salt`` (base64url). The public receipt log never holds the salt."""
    key = unb64url(salt)
    if len(key) != 32:
        raise ValueError("notary_request_salt is not 32 bytes of base64url")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return f"hmac-sha-256=:{b64(hmac.new(key, raw, hashlib.sha256).digest())}:"


_SAFE_INT = 2**53 - 1


def _as_ieee(value: Any) -> Any:
    """JSON numbers are IEEE doubles in JCS: integers past 2^53 become the double a JSON parser would make."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int) and abs(value) > _SAFE_INT:
        return float(value)
    if isinstance(value, dict):
        return {k: _as_ieee(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_ieee(v) for v in value]
    return value


def canonical_json(value: Any) -> bytes:
    """RFC 8785 (JCS) canonical JSON as UTF-8 bytes."""
    return rfc8785.dumps(_as_ieee(value))


def compact_json(value: Any) -> bytes:
    """The request body bytes the client sends: compact JSON, UTF-8."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
