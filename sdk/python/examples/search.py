"""The same search in every payment mode: python sdk/python/examples/search.py <api_key|signed|x402|x402_receipt|mpp> "<query>"
Reads NOTARY_URL, NOTARY_API_KEY, NOTARY_WALLET_KEY, NOTARY_FACILITATOR_URL, NOTARY_MPP_PARTIES (name=share:seedhex,...)."""

import base64
import json
import os
import sys

from notary_client import X402, ApiKey, Client, Mpp, MppParty
from notary_client.x402 import ReceiptPayer, WalletPayer

mode = sys.argv[1] if len(sys.argv) > 1 else "api_key"
query = sys.argv[2] if len(sys.argv) > 2 else "vacuum dead tuples"
env = os.environ.get


def parties():
    for entry in env("NOTARY_MPP_PARTIES", "").split(","):
        party, rest = entry.split("=")
        share, seed = rest.split(":")
        yield MppParty(party, share, bytes.fromhex(seed))


payment = {
    "api_key": lambda: ApiKey(env("NOTARY_API_KEY", "")),
    "signed": lambda: ApiKey(env("NOTARY_API_KEY", "")),
    "x402": lambda: X402(WalletPayer(env("NOTARY_WALLET_KEY", ""), max_amount_per_call=10_000)),
    "x402_receipt": lambda: X402(ReceiptPayer(env("NOTARY_WALLET_KEY", ""), facilitator_url=env("NOTARY_FACILITATOR_URL", ""), max_amount_per_call=10_000)),
    "mpp": lambda: Mpp(list(parties())),
}[mode]()

with Client(env("NOTARY_URL"), payment=payment, sign=mode == "signed") as notary:
    result = notary.search(query, depth=1)
    print(f"mode: {mode} (Python)")
    for i, r in enumerate(result["results"][:3], 1):
        print(f"{i}. {r['title']}  {r['url']}  {r['rerank_score']:.3f}")
    print(f"credits_used: {result.credits_used}  request_id: {result.request_id}  attempts: {result.attempts}")
    if "receipts" in result.data:
        print("receipts: " + ", ".join(f"{r['party']} {r['credits']} ({r['share']})" for r in result["receipts"]))
    if "payment-response" in result.response.headers:
        print("settled on chain: " + json.loads(base64.b64decode(result.response.headers["payment-response"]))["transaction"])
    if "notary_receipt" in result.data:
        receipt = result["notary_receipt"]
        verification = notary.verify_receipt(result)
        print(f"signed receipt: {'valid' if verification.valid else 'INVALID'} ({receipt['claim']}, {receipt['credits']} credits, kid {receipt['kid'][:8]}…)")
