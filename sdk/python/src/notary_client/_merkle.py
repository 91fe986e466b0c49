"""RFC 6962 / RFC 9162 Merkle proofs of the receipt log."""

from __future__ import annotations

import hashlib
import hmac
from typing import Sequence


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _is_hash(h: bytes) -> bool:
    return isinstance(h, (bytes, bytearray)) and len(h) == 32


def root_from_inclusion_proof(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes | None:
    """The root an inclusion proof leads to (RFC 9162 §2.1.3.2), or None when it cannot be one."""
    if index < 0 or index >= size or not _is_hash(leaf) or not all(_is_hash(p) for p in proof):
        return None
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return None
        if fn % 2 == 1 or fn == sn:
            r = node_hash(p, r)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> bool:
    computed = root_from_inclusion_proof(index, size, leaf, proof)
    return computed is not None and _is_hash(root) and hmac.compare_digest(computed, root)


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]) -> bool:
    """Whether ``proof`` shows the tree of ``first`` leaves is a prefix of the tree of ``second`` (RFC 9162 §2.1.4.2)."""
    if first < 0 or second < first or not _is_hash(first_root) or not _is_hash(second_root) or not all(_is_hash(p) for p in proof):
        return False
    if first == second:
        return len(proof) == 0 and first_root == second_root
    if first == 0:
        return False
    path = list(proof)
    if first & (first - 1) == 0:
        path = [first_root, *path]
    if not path:
        return False
    fn, sn = first - 1, second - 1
    while fn % 2 == 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root
