from __future__ import annotations

import os
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ._encoding import b64url, sha256, unb64url

_SIGNATURE = re.compile(r"^ed25519:[A-Za-z0-9_-]{86}$")


def parse_signature(text: str) -> bytes | None:
    """``ed25519:<base64url>`` of 64 bytes, or None."""
    if not isinstance(text, str) or not _SIGNATURE.match(text):
        return None
    return unb64url(text[len("ed25519:"):])


def format_signature(signature: bytes) -> str:
    return "ed25519:" + b64url(signature)


def verify_ed25519(signature: bytes, message: bytes, public_key: bytes) -> bool:
    """Pure Ed25519 (RFC 8032); False on any malformed input."""
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        return True
    except (InvalidSignature, ValueError):
        return False


def sign_ed25519(message: bytes, seed: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(seed).sign(message)


def public_key_from_seed(seed: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def random_seed() -> bytes:
    """A fresh 32-byte Ed25519 private key."""
    return os.urandom(32)


def jwk_thumbprint(public_key: bytes | str) -> str:
    """RFC 7638 thumbprint of an Ed25519 public key (its ``kid``)."""
    x = public_key if isinstance(public_key, str) else b64url(public_key)
    return b64url(sha256(('{"crv":"Ed25519","kty":"OKP","x":"' + x + '"}').encode("ascii")))
