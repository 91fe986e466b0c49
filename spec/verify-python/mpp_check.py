#!/usr/bin/env python3
"""Independent check of the MPP vectors (spec/vectors/mpp-envelopes.json, mpp-splits.json) with nothing of notary's.

Ed25519 from `cryptography`; the largest-remainder split with Python's exact integers and fractions; the canonical
JSON of an envelope with json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False), which is RFC 8785 for
the data envelopes carry (ASCII member names, integers, strings without control characters): the script checks that
the data stays inside that subset before relying on it. Prints one line per check and exits 1 on any failure.
Usage: python3 mpp_check.py [vectors-dir]
"""
import base64
import hashlib
import json
import sys
from fractions import Fraction
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures += 1


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def in_jcs_subset(value):
    if isinstance(value, dict):
        return all(k.isascii() and in_jcs_subset(v) for k, v in value.items())
    if isinstance(value, list):
        return all(in_jcs_subset(v) for v in value)
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return abs(value) <= 2**53 - 1
    if isinstance(value, str):
        return all(ord(c) >= 0x20 for c in value)
    return False


def canonical(value):
    assert in_jcs_subset(value), "value outside the subset where sorted json.dumps equals RFC 8785"
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def parse_share(share):
    whole, _, fraction = share.partition(".")
    assert len(fraction) <= 6
    return Fraction(int(whole)) + (Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)


def split(total, shares):
    exact = [total * parse_share(s) for s in shares]
    parts = [int(x) for x in exact]  # floor: all non-negative
    order = sorted(range(len(shares)), key=lambda i: (-(exact[i] - parts[i]), i))
    for i in order[: total - sum(parts)]:
        parts[i] += 1
    return parts


def thumbprint(public_key):
    members = '{"crv":"Ed25519","kty":"OKP","x":"%s"}' % b64url(public_key)
    return b64url(hashlib.sha256(members.encode()).digest())


def verify(public_key, signature, message):
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        return True
    except InvalidSignature:
        return False


def main():
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "vectors")
    splits = json.loads((folder / "mpp-splits.json").read_text())
    for case in splits["cases"]:
        check(split(case["total"], case["shares"]) == case["credits"], f"split: {case['name']}")

    vectors = json.loads((folder / "mpp-envelopes.json").read_text())
    prefix = vectors["signing_prefix"].encode()
    keys = {}
    for case in vectors["cases"]:
        name = case["name"]
        for p in case["parties"]:
            private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(p["seed_hex"]))
            public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
            keys[p["party"]] = public
            check(b64url(public) == p["public_key"] and thumbprint(public) == p["kid"], f"{name}: key and kid of {p['party']}")
        envelope = json.loads(b64url_decode(case["encoded"]).decode("utf-8"))
        check(envelope == case["envelope"], f"{name}: encoded envelope decodes to the envelope")
        unsigned = {k: v for k, v in envelope.items() if k != "authorizations"}
        jcs = canonical(unsigned)
        check(jcs == case["jcs"], f"{name}: canonical JSON")
        message = prefix + jcs.encode("utf-8")
        check(message.hex() == case["signing_input_hex"], f"{name}: signing input")
        digest = "sha-256=:" + base64.b64encode(hashlib.sha256(case["request"]["body"].encode()).digest()).decode() + ":"
        check(envelope["body_digest"] == digest, f"{name}: body digest")
        for auth in envelope["authorizations"]:
            sig = auth["sig"]
            ok = sig.startswith("ed25519:") and verify(keys[auth["party"]], b64url_decode(sig[len("ed25519:"):]), message)
            check(ok, f"{name}: signature of {auth['party']}")
        credits = split(case["price_credits"], [p["share"] for p in envelope["parties"]])
        expected = [{"party": p["party"], "credits": c, "share": p["share"]} for p, c in zip(envelope["parties"], credits)]
        check(expected == case["receipts"], f"{name}: receipts")

    for case in vectors["invalid"]:
        if case["code"] != "mpp_bad_signature":
            continue
        envelope = json.loads(b64url_decode(case["encoded"]).decode("utf-8"))
        unsigned = {k: v for k, v in envelope.items() if k != "authorizations"}
        message = prefix + canonical(unsigned).encode("utf-8")
        auth = next(a for a in envelope["authorizations"] if a["party"] == case["party"])
        check(not verify(keys[case["party"]], b64url_decode(auth["sig"][len("ed25519:"):]), message), f"refused: {case['name']}")

    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
