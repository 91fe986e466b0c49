"""C2SP signed notes and tlog checkpoints of the receipt log."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Sequence

from ._ed25519 import verify_ed25519
from ._encoding import unb64


@dataclass(frozen=True)
class VerifierKey:
    name: str
    key_id: bytes
    public_key: bytes


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root_hash: bytes
    note: str


def note_key_id(name: str, public_key: bytes) -> bytes:
    return hashlib.sha256(name.encode("utf-8") + b"\n\x01" + public_key).digest()[:4]


def parse_verifier_key(vkey: str) -> VerifierKey:
    """``<name>+<hex key id>+<base64(0x01 || Ed25519 key)>`` (the key's base64 may itself contain "+")."""
    parts = vkey.split("+", 2)
    if len(parts) != 3 or not parts[0] or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
        raise ValueError(f"not a note verifier key: {vkey}")
    name, hex_id, key = parts
    raw = unb64(key)
    if len(raw) != 33 or raw[0] != 0x01:
        raise ValueError("the verifier key is not an Ed25519 key")
    public_key = raw[1:]
    if note_key_id(name, public_key) != bytes.fromhex(hex_id):
        raise ValueError("the verifier key id does not match its name and key")
    return VerifierKey(name, bytes.fromhex(hex_id), public_key)


def open_note(note: str, verifiers: Sequence[VerifierKey]) -> str:
    """The text of a signed note signed by one of ``verifiers``; ValueError otherwise."""
    split = note.rfind("\n\n")
    if split < 0 or not note.endswith("\n"):
        raise ValueError("not a signed note")
    text = note[: split + 1]
    for line in note[split + 2 : -1].split("\n"):
        match = re.fullmatch(r"\u2014 (\S+) ([A-Za-z0-9+/=]+)", line)
        if not match:
            raise ValueError(f"malformed signature line: {line}")
        sig = unb64(match.group(2))
        if len(sig) != 68:
            continue
        for v in verifiers:
            if v.name == match.group(1) and v.key_id == sig[:4] and verify_ed25519(sig[4:], text.encode("utf-8"), v.public_key):
                return text
    raise ValueError("the note is not signed by a known key (the signature does not verify)")


def open_checkpoint(note: str, verifiers: Sequence[VerifierKey], origin: str | None = None) -> Checkpoint:
    text = open_note(note, verifiers)
    lines = text.split("\n")
    if len(lines) < 3:
        raise ValueError("not a checkpoint")
    if origin is not None and lines[0] != origin:
        raise ValueError(f"the checkpoint is for {lines[0]}, not {origin}")
    if not re.fullmatch(r"0|[1-9]\d*", lines[1]):
        raise ValueError("the checkpoint size is not a number")
    root = unb64(lines[2])
    if len(root) != 32:
        raise ValueError("the checkpoint root is not a SHA-256 hash")
    return Checkpoint(lines[0], int(lines[1]), root, note)
