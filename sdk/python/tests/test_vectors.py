"""The shared conformance vectors (spec/vectors): the same files the TypeScript and Go libraries pass."""

import struct
import zlib

import pytest

from conftest import VECTORS, load
from notary_client import (
    api_key_checksum,
    api_key_problem,
    build_envelope,
    canonical_json,
    envelope_signing_input,
    jwk_thumbprint,
    leaf_hash,
    open_checkpoint,
    open_note,
    parse_verifier_key,
    public_key_from_seed,
    receipt_leaf,
    receipt_signing_input,
    response_digest,
    root_from_inclusion_proof,
    salted_request_digest,
    sha256_digest,
    sign_ed25519,
    sign_envelope,
    split_credits,
    verify_consistency,
    verify_inclusion,
    verify_receipt,
    MppParty,
)
from notary_client._encoding import unb64


def test_jcs_cases_and_numbers():
    import json

    v = load("jcs.json")
    for case in v["cases"]:
        assert canonical_json(json.loads(case["input"])).hex() == case["expected_hex"], case["name"]
    for number in v["numbers"]:
        value = struct.unpack(">d", bytes.fromhex(number["ieee_hex"]))[0]
        assert canonical_json(value).decode() == number["expected"], number["ieee_hex"]
    for error in v["errors"]:
        with pytest.raises(Exception):
            canonical_json(struct.unpack(">d", bytes.fromhex(error["ieee_hex"]))[0])


def test_api_keys():
    v = load("api-keys.json")
    for k in v["valid"]:
        assert zlib.crc32(k["secret"].encode()) == k["crc32"]
        assert api_key_checksum(k["secret"]) == k["checksum"]
        assert api_key_problem(k["key"]) is None
    for k in v["invalid"]:
        assert api_key_problem(k["key"]) is not None, k["why"]


def test_digests():
    v = load("digests.json")
    assert any("salt" in r for r in v["request"])
    for r in v["request"]:
        body = bytes.fromhex(r["body_hex"])
        assert (salted_request_digest(body, r["salt"]) if "salt" in r else sha256_digest(body)) == r["digest"]
    for r in v["response"]:
        assert canonical_json({k: x for k, x in r["body"].items() if k != "notary_receipt"}).decode() == r["jcs"]
        assert response_digest(r["body"]) == r["digest"]


def test_receipt_known_answers():
    v = load("receipts.json")["known_answers"]
    k = v["rfc8032_test1"]
    assert public_key_from_seed(bytes.fromhex(k["seed_hex"])).hex() == k["public_key_hex"]
    assert sign_ed25519(bytes.fromhex(k["message_hex"]), bytes.fromhex(k["seed_hex"])).hex() == k["signature_hex"]
    assert jwk_thumbprint(v["rfc8037_thumbprint"]["x"]) == v["rfc8037_thumbprint"]["kid"]


@pytest.mark.parametrize("case", load("receipts.json")["cases"], ids=lambda c: c["name"])
def test_receipts(case):
    receipt = case["receipt"]
    assert receipt_signing_input(receipt).hex() == case["signed_bytes_hex"]
    assert jwk_thumbprint(case["jwk"]["x"]) == case["jwk"]["kid"]
    assert receipt_leaf(receipt).hex() == case["leaf_hex"]
    assert leaf_hash(receipt_leaf(receipt)).hex() == case["leaf_hash_hex"]
    jwks = {"keys": [case["jwk"]]}
    body = {**case["response_body"], "notary_receipt": receipt}
    request = bytes.fromhex(case["request_body_hex"])
    result = verify_receipt(body, jwks, request_body=request)
    assert result.failures() == []
    assert result.valid
    for field, value in receipt.items():
        if isinstance(value, int):
            changed = value + 1
        elif field == "signature":
            changed = value[:-3] + ("B" if value[-3] == "A" else "A") + value[-2:]
        else:
            changed = value + "x"
        assert not verify_receipt({**case["response_body"], "notary_receipt": {**receipt, field: changed}}, jwks, request_body=request).valid, field
    first = next(iter(case["response_body"]))
    assert not verify_receipt({**body, first: "changed"}, jwks).valid
    assert not verify_receipt(body, jwks, request_body=b"{}").valid
    if case["digest_version"] == 2:
        # The salt lives in the body: without it, or with another, the request cannot be confirmed.
        salt = body["notary_request_salt"]
        without = {k: x for k, x in body.items() if k != "notary_request_salt"}
        assert "request_digest" in [c.name for c in verify_receipt(without, jwks, request_body=request).failures()]
        other = salt[:-1] + ("B" if salt[-1] == "A" else "A")
        assert [c.name for c in verify_receipt(body, jwks, request_body=request, request_salt=other).failures()] == ["request_digest"]


def test_merkle_trees():
    v = load("merkle.json")
    for tree in (v["ct_test_tree"], v["wide_tree"]):
        hashes = [leaf_hash(bytes.fromhex(h)) for h in tree["leaves_hex"]]
        assert [h.hex() for h in hashes] == tree["leaf_hashes_hex"]
        roots = {r["tree_size"]: bytes.fromhex(r["root_hex"]) for r in tree["roots"]}
        for p in tree["inclusion"]:
            if p["tree_size"] not in roots:
                continue
            proof = [bytes.fromhex(h) for h in p["proof_hex"]]
            leaf = hashes[p["leaf_index"]]
            assert root_from_inclusion_proof(p["leaf_index"], p["tree_size"], leaf, proof) == roots[p["tree_size"]]
            assert verify_inclusion(p["leaf_index"], p["tree_size"], leaf, proof, roots[p["tree_size"]])
            assert not verify_inclusion(p["leaf_index"], p["tree_size"], bytes([leaf[0] ^ 1]) + leaf[1:], proof, roots[p["tree_size"]])
        for p in tree["consistency"]:
            if p["first"] in roots and p["second"] in roots:
                proof = [bytes.fromhex(h) for h in p["proof_hex"]]
                assert verify_consistency(p["first"], p["second"], roots[p["first"]], roots[p["second"]], proof), (p["first"], p["second"])


def test_merkle_transparency_dev_cases():
    for c in load("merkle.json")["transparency_dev"]["cases"]:
        proof = [unb64(h) for h in c["proof_b64"]]
        if c["kind"] == "inclusion":
            ok = verify_inclusion(c["leaf_index"], c["tree_size"], unb64(c["leaf_hash_b64"]), proof, unb64(c["root_b64"]))
        else:
            ok = verify_consistency(c["first"], c["second"], unb64(c["first_root_b64"]), unb64(c["second_root_b64"]), proof)
        assert ok == (not c["want_error"]), c["name"]


def test_checkpoints():
    v = load("checkpoints.json")
    assert open_note(v["c2sp_example"]["note"], [parse_verifier_key(v["c2sp_example"]["vkey"])]) == "This is an example message.\n"
    cp = v["checkpoint"]
    verifier = parse_verifier_key(cp["vkey"])
    opened = open_checkpoint(cp["note"], [verifier], cp["origin"])
    assert opened.size == cp["tree_size"]
    with pytest.raises(ValueError, match="not signed"):
        open_checkpoint(cp["note"].replace("\n8\n", "\n9\n"), [verifier])
    with pytest.raises(ValueError):
        open_checkpoint(cp["note"], [verifier], "other/origin")


def test_mpp_envelopes_and_splits():
    from datetime import datetime

    for c in load("mpp-envelopes.json")["cases"]:
        unsigned = c["unsigned"]
        assert envelope_signing_input(unsigned).hex() == c["signing_input_hex"], c["name"]
        assert sha256_digest(c["request"]["body"]) == unsigned["body_digest"]
        keys = {p["party"]: bytes.fromhex(p["seed_hex"]) for p in c["parties"]}
        assert sign_envelope(unsigned, keys)["authorizations"] == c["envelope"]["authorizations"]
        issued = datetime.strptime(unsigned["issued_at"], "%Y-%m-%dT%H:%M:%SZ")
        expires = datetime.strptime(unsigned["expires"], "%Y-%m-%dT%H:%M:%SZ")
        envelope, header = build_envelope(
            method=c["request"]["method"],
            url=c["request"]["url"],
            body=c["request"]["body"],
            total_credits=unsigned["total_credits"],
            parties=[MppParty(p["party"], p["share"], bytes.fromhex(p["seed_hex"])) for p in c["parties"]],
            ttl_seconds=int((expires - issued).total_seconds()),
            now=issued.replace(tzinfo=__import__("datetime").timezone.utc).timestamp(),
            nonce=unsigned["nonce"],
            env_id=unsigned["env_id"],
        )
        assert envelope == c["envelope"]
        assert header.startswith("MPP envelope=")
    for c in load("mpp-splits.json")["cases"]:
        assert split_credits(c["total"], c["shares"]) == c["credits"], c["name"]
