"""Offline verification of signed receipts (``X-Notary-Sign: required``) against a JWKS."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping

from ._ed25519 import parse_signature, verify_ed25519
from ._encoding import canonical_json, salted_request_digest, sha256_digest, unb64url

RECEIPT_SIGNING_PREFIX = b"notary-receipt-v1\n"
_ISSUED_AT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
_STRING_FIELDS = ("issuer", "issued_at", "claim", "kid", "request_id", "request_digest", "response_digest", "signature")


@dataclass(frozen=True)
class ReceiptCheck:
    name: str
    ok: bool
    detail: str


@dataclass
class ReceiptVerification:
    valid: bool
    receipt: dict[str, Any] | None
    checks: list[ReceiptCheck] = field(default_factory=list)

    def failures(self) -> list[ReceiptCheck]:
        return [c for c in self.checks if not c.ok]


def parse_issued_at(value: str) -> int | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` in Unix seconds, or None."""
    if not isinstance(value, str) or not _ISSUED_AT.match(value):
        return None
    try:
        return int(datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())
    except ValueError:
        return None


def receipt_signing_input(receipt: Mapping[str, Any]) -> bytes:
    """The bytes the signature covers: the prefix line, then the JCS of the receipt without ``signature``."""
    return RECEIPT_SIGNING_PREFIX + canonical_json({k: v for k, v in receipt.items() if k != "signature"})


def response_digest(body: Mapping[str, Any]) -> str:
    """SHA-256 of the JCS of the response body without ``notary_receipt``."""
    return sha256_digest(canonical_json({k: v for k, v in body.items() if k != "notary_receipt"}))


def receipt_leaf(receipt: Mapping[str, Any]) -> bytes:
    """The receipt log's leaf of a receipt: the JCS of the signed receipt."""
    return canonical_json(dict(receipt))


def _is_receipt(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and all(isinstance(value.get(k), str) for k in _STRING_FIELDS)
        and isinstance(value.get("credits"), int)
        and not isinstance(value.get("credits"), bool)
    )


def request_digest_for(receipt_digest: str, request_body: bytes | str, salt: Any) -> str | None:
    """The ``request_digest`` a request body gives under the scheme of ``receipt_digest``: version 2
    (``hmac-sha-256=:``) is keyed with the salt, version 1 (``sha-256=:``) is plain SHA-256; None without a valid salt."""
    if not receipt_digest.startswith("hmac-sha-256=:"):
        return sha256_digest(request_body)
    if not isinstance(salt, str):
        return None
    try:
        return salted_request_digest(request_body, salt)
    except ValueError:
        return None


def verify_receipt(body: Mapping[str, Any] | str | bytes, jwks: Mapping[str, Any], *, request_body: bytes | str | None = None, request_salt: str | None = None) -> ReceiptVerification:
    """Verifies a signed response offline: the key named by ``kid`` exists and was valid at ``issued_at``, the Ed25519
    signature holds, the body is the one signed (``response_digest``) and, with ``request_body``, the request too
    (a version 2 digest is keyed with the body's ``notary_request_salt``, or ``request_salt``)."""
    parsed: dict[str, Any] = json.loads(body) if isinstance(body, (str, bytes)) else dict(body)
    checks: list[ReceiptCheck] = []
    receipt = parsed.get("notary_receipt")
    if not _is_receipt(receipt):
        checks.append(ReceiptCheck("form", False, "the body has no well-formed notary_receipt"))
        return ReceiptVerification(False, None, checks)
    issued_at = parse_issued_at(receipt["issued_at"])
    signature = parse_signature(receipt["signature"])
    checks.append(ReceiptCheck("form", issued_at is not None and signature is not None, "well-formed" if issued_at is not None and signature is not None else "issued_at or signature malformed"))
    key = next((k for k in jwks.get("keys", []) if k.get("kid") == receipt["kid"]), None)
    checks.append(ReceiptCheck("kid", key is not None, f"key {receipt['kid']} is {'published' if key else 'not in the JWKS'}"))
    if key is not None and issued_at is not None:
        valid = (key.get("nbf") is None or issued_at >= key["nbf"]) and (key.get("exp") is None or issued_at <= key["exp"])
        checks.append(ReceiptCheck("key_validity", valid, f"issued_at {receipt['issued_at']} is {'within' if valid else 'outside'} the key's validity window"))
    if key is not None and signature is not None:
        try:
            public_key = unb64url(key["x"]) if key.get("kty") == "OKP" and key.get("crv") == "Ed25519" else b""
        except ValueError:
            public_key = b""
        ok = len(public_key) == 32 and verify_ed25519(signature, receipt_signing_input(receipt), public_key)
        checks.append(ReceiptCheck("signature", ok, "Ed25519 signature verifies" if ok else "the signature does not verify"))
    digest = response_digest(parsed)
    checks.append(ReceiptCheck("response_digest", digest == receipt["response_digest"], "the body is the one signed" if digest == receipt["response_digest"] else "the response body was changed after signing"))
    if request_body is not None:
        salt = request_salt if request_salt is not None else parsed.get("notary_request_salt")
        request_digest = request_digest_for(receipt["request_digest"], request_body, salt)
        ok = request_digest == receipt["request_digest"]
        detail = (
            "no valid notary_request_salt: keep the response body as received (it holds the salt)" if request_digest is None
            else "the request body is the one signed" if ok else "the receipt is for another request body (or another salt)"
        )
        checks.append(ReceiptCheck("request_digest", ok, detail))
    return ReceiptVerification(all(c.ok for c in checks), receipt, checks)
