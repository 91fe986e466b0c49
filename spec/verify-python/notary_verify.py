#!/usr/bin/env python3
"""Independent verifier of notary's signed receipts and receipt log, written from the wire format alone.

It shares no code with the server: Ed25519 comes from `cryptography`, RFC 8785 canonical JSON from `rfc8785`, the
RFC 6962 / RFC 9162 proof checks and the C2SP signed-note parsing are written here from the specifications.

    python notary_verify.py verify --server URL --response saved.json [--request body.bin] [--jwks jwks.json]
                                   [--previous-checkpoint old.txt] [--save-checkpoint new.txt]
    python notary_verify.py vectors spec/vectors

Exit status 0 when every check passed, 1 with the failed checks on stdout otherwise.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import re
import sys
import urllib.parse
import urllib.request
from datetime import datetime, timezone

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

SIGNING_PREFIX = b"notary-receipt-v1\n"
MAX_SAFE = 2**53 - 1


class Failed(Exception):
    pass


def loads(text: str):
    """JSON as JavaScript reads it: every number is an IEEE double (integers beyond 2^53 become floats)."""
    return json.loads(text, parse_int=lambda s: int(s) if abs(int(s)) <= MAX_SAFE else float(s))


def jcs(value) -> bytes:
    return rfc8785.dumps(value)


def b64url_decode(text: str) -> bytes:
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        raise Failed(f"not base64url: {text!r}")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def digest_value(data: bytes) -> str:
    return "sha-256=:" + base64.b64encode(sha256(data)).decode() + ":"


def request_digest_value(data: bytes, receipt_digest: str, salt) -> str:
    """request_digest by the receipt's scheme: version 2 (hmac-sha-256=:) is HMAC-SHA-256 keyed with the 32-byte salt
    (base64url, the response's notary_request_salt) over the body; version 1 (sha-256=:) is SHA-256 of the body."""
    if not receipt_digest.startswith("hmac-sha-256=:"):
        return digest_value(data)
    if not isinstance(salt, str):
        return "(no notary_request_salt in the saved response)"
    try:
        key = b64url_decode(salt)
    except Failed:
        key = b""
    if len(key) != 32:
        return "(notary_request_salt is not 32 bytes of base64url)"
    return "hmac-sha-256=:" + base64.b64encode(hmac.new(key, data, hashlib.sha256).digest()).decode() + ":"


def thumbprint(x: str) -> str:
    return b64url(sha256(('{"crv":"Ed25519","kty":"OKP","x":"%s"}' % x).encode()))


def issued_at_seconds(value: str) -> int:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", value):
        raise Failed(f"issued_at {value!r} is not YYYY-MM-DDTHH:MM:SSZ")
    return int(datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())


def ed25519_verify(public_key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        return True
    except (InvalidSignature, ValueError):
        return False


def jwks_keys(document) -> dict:
    keys = {}
    for key in document.get("keys", []):
        if key.get("kty") != "OKP" or key.get("crv") != "Ed25519":
            continue
        if key.get("kid") != thumbprint(key["x"]):
            raise Failed(f"JWKS key {key.get('kid')!r} is not the RFC 7638 thumbprint of its x")
        keys[key["kid"]] = key
    return keys


def verify_receipt(receipt, keys: dict, body=None, request_bytes: bytes | None = None) -> list[tuple[str, bool, str]]:
    """Every check of a receipt; returns (name, ok, detail) for each."""
    checks: list[tuple[str, bool, str]] = []
    fields = ["issuer", "issued_at", "claim", "kid", "request_id", "request_digest", "response_digest", "signature"]
    if not isinstance(receipt, dict) or any(not isinstance(receipt.get(f), str) for f in fields) or type(receipt.get("credits")) is not int:
        return [("shape", False, "notary_receipt is missing fields or has fields of the wrong type")]
    key = keys.get(receipt["kid"])
    checks.append(("kid", key is not None, f"kid {receipt['kid']} {'is' if key else 'is not'} in the JWKS"))
    try:
        issued_at_seconds(receipt["issued_at"])
    except Failed as err:
        return checks + [("shape", False, str(err))]
    if key is not None:
        issued = issued_at_seconds(receipt["issued_at"])
        valid = key["nbf"] <= issued and ("exp" not in key or issued <= key["exp"])
        checks.append(("key_validity", valid, f"issued_at {receipt['issued_at']} within nbf {key['nbf']} .. exp {key.get('exp', 'none')}"))
        signature = receipt["signature"]
        ok = False
        if signature.startswith("ed25519:"):
            try:
                sig = b64url_decode(signature[len("ed25519:"):])
                unsigned = {k: v for k, v in receipt.items() if k != "signature"}
                ok = len(sig) == 64 and ed25519_verify(b64url_decode(key["x"]), sig, SIGNING_PREFIX + jcs(unsigned))
            except Failed:
                ok = False
        checks.append(("signature", ok, "Ed25519 over notary-receipt-v1 + JCS(receipt)"))
    if body is not None:
        actual = digest_value(jcs({k: v for k, v in body.items() if k != "notary_receipt"}))
        checks.append(("response_digest", actual == receipt["response_digest"], f"saved body hashes to {actual}"))
    if request_bytes is not None:
        actual = request_digest_value(request_bytes, receipt["request_digest"], (body or {}).get("notary_request_salt"))
        checks.append(("request_digest", actual == receipt["request_digest"], f"saved request hashes to {actual}"))
    return checks


# --- RFC 6962 / RFC 9162 -----------------------------------------------------------------------------------------

def leaf_hash(leaf: bytes) -> bytes:
    return sha256(b"\x00" + leaf)


def node_hash(left: bytes, right: bytes) -> bytes:
    return sha256(b"\x01" + left + right)


def verify_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes], root: bytes) -> bool:
    """RFC 9162 section 2.1.3.2."""
    if index >= size or any(len(h) != 32 for h in [leaf, root, *proof]):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, proof: list[bytes]) -> bool:
    """RFC 9162 section 2.1.4.2."""
    if first < 1 or first > second or any(len(h) != 32 for h in [first_root, second_root, *proof]):
        return False
    if first == second:
        return not proof and first_root == second_root
    if not proof:
        return False
    path = ([first_root] if first & (first - 1) == 0 else []) + proof
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0


# --- C2SP signed notes and checkpoints ------------------------------------------------------------------------------

def note_key_id(name: str, public_key: bytes) -> bytes:
    return sha256(name.encode() + b"\n" + b"\x01" + public_key)[:4]


def open_checkpoint(note: str, public_keys: list[bytes]):
    """Returns (origin, size, root) when a signature of the origin's name by one of the keys verifies."""
    if not note.endswith("\n") or "\n\n" not in note:
        raise Failed("checkpoint is not a signed note")
    split = note.rindex("\n\n")
    text, signature_lines = note[: split + 1], note[split + 2 : -1].split("\n")
    lines = text.split("\n")
    origin, size, root_b64 = lines[0], lines[1], lines[2]
    if not re.fullmatch(r"0|[1-9][0-9]*", size):
        raise Failed("checkpoint tree size is malformed")
    root = base64.b64decode(root_b64, validate=True)
    verified = False
    for line in signature_lines:
        m = re.fullmatch(r"\u2014 (\S+) ([A-Za-z0-9+/=]+)", line)
        if not m:
            raise Failed(f"malformed signature line {line!r}")
        raw = base64.b64decode(m.group(2), validate=True)
        for key in public_keys:
            if m.group(1) == origin and raw[:4] == note_key_id(origin, key):
                if not ed25519_verify(key, raw[4:], text.encode()):
                    raise Failed("the checkpoint signature of a published key does not verify")
                verified = True
    if not verified:
        raise Failed("the checkpoint carries no signature by a published key")
    return origin, int(size), root


# --- commands -------------------------------------------------------------------------------------------------------

def fetch(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=15) as res:
            return res.read()
    except OSError as err:  # URLError and HTTPError included
        raise Failed(f"GET {url}: {err}") from err


def report(checks: list[tuple[str, bool, str]]) -> bool:
    for name, ok, detail in checks:
        print(f"{'ok  ' if ok else 'FAIL'}  {name:16} {detail}")
    return all(ok for _, ok, _ in checks)


def command_verify(args) -> int:
    server = args.server.rstrip("/")
    saved = loads(open(args.response, encoding="utf-8").read())
    receipt = saved.get("notary_receipt") if isinstance(saved, dict) else None
    jwks = loads(open(args.jwks).read()) if args.jwks else loads(fetch(server + "/.well-known/jwks.json").decode())
    keys = jwks_keys(jwks)
    request_bytes = open(args.request, "rb").read() if args.request else None
    checks = verify_receipt(receipt, keys, saved, request_bytes)
    if not all(ok for _, ok, _ in checks):
        report(checks)
        return 1
    note = fetch(server + "/v1/receipts/log/checkpoint").decode()
    public_keys = [b64url_decode(k["x"]) for k in keys.values()]
    try:
        origin, size, root = open_checkpoint(note, public_keys)
        checks.append(("checkpoint", True, f"{origin} size {size} signed by a published key"))
        leaf = leaf_hash(jcs(receipt))
        query = urllib.parse.urlencode({"leaf_hash": base64.b64encode(leaf).decode(), "tree_size": size})
        proof = json.loads(fetch(f"{server}/v1/receipts/log/inclusion?{query}"))
        path = [base64.b64decode(h) for h in proof["hashes"]]
        included = proof["tree_size"] == size and verify_inclusion(proof["leaf_index"], size, leaf, path, root)
        checks.append(("inclusion", included, f"leaf {proof['leaf_index']} under the root of size {size}"))
        if args.previous_checkpoint:
            _, old_size, old_root = open_checkpoint(open(args.previous_checkpoint, encoding="utf-8").read(), public_keys)
            if old_size == 0:
                consistent = True  # every tree extends the empty one
            elif old_size == size:
                consistent = old_root == root
            else:
                c = json.loads(fetch(f"{server}/v1/receipts/log/consistency?first={old_size}&second={size}"))
                consistent = verify_consistency(old_size, size, old_root, root, [base64.b64decode(h) for h in c["hashes"]])
            checks.append(("consistency", consistent, f"size {size} extends the earlier checkpoint of size {old_size}"))
        if args.save_checkpoint:
            open(args.save_checkpoint, "w", encoding="utf-8").write(note)
    except Failed as err:
        checks.append(("log", False, str(err)))
    return 0 if report(checks) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("verify", help="verify a saved response's receipt and its inclusion in the server's log")
    p.add_argument("--server", required=True)
    p.add_argument("--response", required=True)
    p.add_argument("--request")
    p.add_argument("--jwks")
    p.add_argument("--previous-checkpoint")
    p.add_argument("--save-checkpoint")
    p = sub.add_parser("vectors", help="check the test vectors")
    p.add_argument("dir")
    args = parser.parse_args()
    try:
        if args.command == "verify":
            return command_verify(args)
        from check_vectors import command_vectors  # beside this file; only the vectors command needs it

        return command_vectors(args)
    except Failed as err:
        print(f"FAIL  {err}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
