"""The `vectors` command of notary_verify.py: checks spec/vectors (JCS, receipts, digests, Merkle proofs, checkpoints,
API keys) with this verifier's implementation only. Apart so that notary_verify.py stays the one file a user needs to
verify a receipt."""
from __future__ import annotations

import base64
import hashlib
import re
import struct
import zlib

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from notary_verify import (
    SIGNING_PREFIX,
    b64url,
    digest_value,
    ed25519_verify,
    jcs,
    jwks_keys,
    leaf_hash,
    loads,
    note_key_id,
    open_checkpoint,
    request_digest_value,
    thumbprint,
    verify_consistency,
    verify_inclusion,
    verify_receipt,
)


def command_vectors(args) -> int:
    """Checks spec/vectors with this implementation only."""
    d = args.dir.rstrip("/")
    failures = []

    def check(name, ok):
        if not ok:
            failures.append(name)

    v = loads(open(f"{d}/jcs.json", encoding="utf-8").read())
    for case in v["cases"]:
        out = jcs(loads(case["input"]))
        check(f"jcs {case['name']}", out.decode() == case["expected"] and out.hex() == case["expected_hex"])
    for n in v["numbers"]:
        check(f"jcs number {n['ieee_hex']}", jcs(struct.unpack(">d", bytes.fromhex(n["ieee_hex"]))[0]).decode() == n["expected"])

    v = loads(open(f"{d}/receipts.json", encoding="utf-8").read())
    ka = v["known_answers"]["rfc8032_test1"]
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(ka["seed_hex"]))
    check("rfc8032", private.sign(b"").hex() == ka["signature_hex"])
    check("rfc8037", thumbprint(b64url(bytes.fromhex(ka["public_key_hex"]))) == v["known_answers"]["rfc8037_thumbprint"]["kid"])
    for case in v["cases"]:
        receipt = case["receipt"]
        keys = jwks_keys({"keys": [case["jwk"]]})
        unsigned = {k: val for k, val in receipt.items() if k != "signature"}
        check(f"receipt {case['name']} signed bytes", (SIGNING_PREFIX + jcs(unsigned)).hex() == case["signed_bytes_hex"])
        seed = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(case["seed_hex"]))
        check(f"receipt {case['name']} signature", "ed25519:" + b64url(seed.sign(bytes.fromhex(case["signed_bytes_hex"]))) == case["signature"])
        checks = verify_receipt(receipt, keys, case["response_body"], bytes.fromhex(case["request_body_hex"]))
        check(f"receipt {case['name']} verifies", all(ok for _, ok, _ in checks))
        check(f"receipt {case['name']} leaf", leaf_hash(jcs(receipt)).hex() == case["leaf_hash_hex"])
        for field in receipt:
            changed = dict(receipt)
            changed[field] = receipt[field] + 1 if isinstance(receipt[field], int) else receipt[field][:-2] + ("A" if receipt[field][-2] != "A" else "B") + receipt[field][-1]
            check(f"receipt {case['name']} refuses a changed {field}", not all(ok for _, ok, _ in verify_receipt(changed, keys, case["response_body"])))

    v = loads(open(f"{d}/digests.json", encoding="utf-8").read())
    for r in v["request"]:
        check("request digest", request_digest_value(bytes.fromhex(r["body_hex"]), r["digest"], r.get("salt")) == r["digest"])
    for r in v["response"]:
        check("response digest", digest_value(jcs({k: x for k, x in r["body"].items() if k != "notary_receipt"})) == r["digest"])

    v = loads(open(f"{d}/merkle.json", encoding="utf-8").read())
    for tree_name in ("ct_test_tree", "wide_tree"):
        tree = v[tree_name]
        leaves = [leaf_hash(bytes.fromhex(x)) for x in tree["leaves_hex"]]
        check(f"{tree_name} leaf hashes", [x.hex() for x in leaves] == tree["leaf_hashes_hex"])
        roots = {r["tree_size"]: bytes.fromhex(r["root_hex"]) for r in tree["roots"]}
        for p in tree["inclusion"]:
            check(f"{tree_name} inclusion {p['leaf_index']}@{p['tree_size']}",
                  verify_inclusion(p["leaf_index"], p["tree_size"], leaves[p["leaf_index"]], [bytes.fromhex(h) for h in p["proof_hex"]], roots[p["tree_size"]]))
        for p in tree["consistency"]:
            check(f"{tree_name} consistency {p['first']}->{p['second']}",
                  verify_consistency(p["first"], p["second"], roots[p["first"]], roots[p["second"]], [bytes.fromhex(h) for h in p["proof_hex"]]))
    for c in v["transparency_dev"]["cases"]:
        b = lambda s: base64.b64decode(s)  # noqa: E731
        ok = (verify_inclusion(c["leaf_index"], c["tree_size"], b(c["leaf_hash_b64"]), [b(h) for h in c["proof_b64"]], b(c["root_b64"]))
              if c["kind"] == "inclusion"
              else verify_consistency(c["first"], c["second"], b(c["first_root_b64"]), b(c["second_root_b64"]), [b(h) for h in c["proof_b64"]]))
        check(f"transparency-dev {c['name']}", ok == (not c["want_error"]))

    v = loads(open(f"{d}/checkpoints.json", encoding="utf-8").read())
    vkey = v["c2sp_example"]["vkey"].split("+", 2)
    example_key = base64.b64decode(vkey[2])[1:]
    note = v["c2sp_example"]["note"]
    split = note.rindex("\n\n")
    raw = base64.b64decode(note[split + 2 : -1].split(" ")[2])
    check("c2sp example", raw[:4].hex() == vkey[1] == note_key_id(vkey[0], example_key).hex() and ed25519_verify(example_key, raw[4:], note[: split + 1].encode()))
    cp = v["checkpoint"]
    origin, size, root = open_checkpoint(cp["note"], [bytes.fromhex(cp["public_key_hex"])])
    check("checkpoint", (origin, size, base64.b64encode(root).decode()) == (cp["origin"], cp["tree_size"], cp["root_base64"]))

    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

    def base62(n: int, width: int) -> str:
        out = ""
        while True:
            out = alphabet[n % 62] + out
            n //= 62
            if n == 0:
                return out.rjust(width, "0")

    v = loads(open(f"{d}/api-keys.json", encoding="utf-8").read())
    for k in v["valid"]:
        check(f"api key {k['key']}", zlib.crc32(k["secret"].encode()) == k["crc32"] and base62(k["crc32"], 6) == k["checksum"]
              and k["key"] == "sk_" + k["environment"] + "_" + k["secret"] + k["checksum"] and k["environment"] in ("live", "test")
              and hashlib.sha256(k["key"].encode()).hexdigest() == k["sha256_hex"])
    for k in v["invalid"]:
        key = k["key"]
        well_formed = bool(re.fullmatch(r"sk_(live|test)_[0-9A-Za-z]{38}", key)) and base62(zlib.crc32(key[8:40].encode()), 6) == key[40:]
        check(f"api key refused: {k['why']}", not well_formed)

    for name in failures:
        print(f"FAIL  {name}")
    print(f"{'ok' if not failures else 'FAILED'}: spec/vectors checked with cryptography + rfc8785 ({len(failures)} failures)")
    return 1 if failures else 0
