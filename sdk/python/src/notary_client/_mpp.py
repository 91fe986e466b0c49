"""MPP (multi-party payment): envelopes every paying party signs, and the service's credit split."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from ._ed25519 import format_signature, jwk_thumbprint, public_key_from_seed, sign_ed25519
from ._encoding import b64url, canonical_json, sha256_digest

ENVELOPE_SIGNING_PREFIX = b"mpp-envelope-v1\n"
MAX_ENVELOPE_LIFETIME_S = 300
_SHARE = re.compile(r"^(0|[1-9]\d*)(\.\d{1,6})?$")
_SCALE = 1_000_000


@dataclass(frozen=True)
class MppParty:
    """A paying party: its tenant name, its share (decimal string, at most 6 decimals) and its Ed25519 private key."""

    party: str
    share: str
    private_key: bytes


def parse_share(share: str) -> int | None:
    """A share in millionths, exactly; None when it is not a share string."""
    if not isinstance(share, str) or not _SHARE.match(share):
        return None
    whole, _, fraction = share.partition(".")
    return int(whole) * _SCALE + int(fraction.ljust(6, "0") or "0")


def split_credits(total: int, shares: Sequence[str]) -> list[int]:
    """floor(total x share) each, leftover credits to the largest fractional parts, ties to the party listed first."""
    parsed = [parse_share(s) for s in shares]
    if any(p is None for p in parsed):
        raise ValueError(f"not a share: {shares}")
    values = [p for p in parsed if p is not None]
    if sum(values) != _SCALE:
        raise ValueError("shares must sum to exactly 1")
    exact = [total * v for v in values]
    parts = [e // _SCALE for e in exact]
    leftover = total - sum(parts)
    order = sorted(range(len(exact)), key=lambda i: -(exact[i] % _SCALE))  # stable: ties keep envelope order
    for i in order[:leftover]:
        parts[i] += 1
    return parts


def envelope_signing_input(envelope: Mapping[str, Any]) -> bytes:
    return ENVELOPE_SIGNING_PREFIX + canonical_json({k: v for k, v in envelope.items() if k != "authorizations"})


def encode_envelope(envelope: Mapping[str, Any]) -> str:
    return b64url(canonical_json(dict(envelope)))


def party_kid(private_key: bytes) -> str:
    """The RFC 7638 thumbprint of a party's key, as ``notary parties add-key`` registers it."""
    return jwk_thumbprint(public_key_from_seed(private_key))


def sign_envelope(unsigned: Mapping[str, Any], keys: Mapping[str, bytes]) -> dict[str, Any]:
    signing_input = envelope_signing_input(unsigned)
    authorizations = []
    for entry in unsigned["parties"]:
        key = keys.get(entry["party"])
        if key is None:
            raise ValueError(f'no private key for party "{entry["party"]}"')
        authorizations.append({"party": entry["party"], "sig": format_signature(sign_ed25519(signing_input, key))})
    return {**unsigned, "authorizations": authorizations}


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_envelope(
    *,
    method: str,
    url: str,
    body: bytes | str,
    total_credits: int,
    parties: Sequence[MppParty],
    ttl_seconds: int = 120,
    now: float | None = None,
    nonce: str | None = None,
    env_id: str | None = None,
) -> tuple[dict[str, Any], str]:
    """Builds and signs the envelope for one request; returns it and its ``Authorization`` header value."""
    if not 1 <= ttl_seconds <= MAX_ENVELOPE_LIFETIME_S:
        raise ValueError(f"ttl_seconds must be 1..{MAX_ENVELOPE_LIFETIME_S}")
    for p in parties:
        if parse_share(p.share) is None:
            raise ValueError(f"party {p.party}: share {p.share!r} is not a decimal string with at most 6 decimals")
    issued = int(time.time() if now is None else now)
    unsigned = {
        "v": 1,
        "env_id": env_id or "env_" + b64url(os.urandom(15)),
        "htm": method.upper(),
        "htu": url,
        "body_digest": sha256_digest(body),
        "total_credits": total_credits,
        "nonce": nonce or b64url(os.urandom(18)),
        "issued_at": _iso(issued),
        "expires": _iso(issued + ttl_seconds),
        "parties": [{"party": p.party, "kid": party_kid(p.private_key), "share": p.share} for p in parties],
    }
    envelope = sign_envelope(unsigned, {p.party: p.private_key for p in parties})
    return envelope, "MPP envelope=" + encode_envelope(envelope)
