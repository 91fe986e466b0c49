"""x402 payers: the standard v2 flow (``PAYMENT-SIGNATURE``) and the interface's flow (``X-402-Receipt``), with an
EIP-3009 ``transferWithAuthorization`` signed (EIP-712) by an Ethereum key. Needs ``pip install notary-client[x402]``
(eth-account)."""

from __future__ import annotations

import base64
import json
import os
import time
from typing import Any, Mapping, Sequence

import httpx

from ._payment import X402Challenge
from ._errors import NotaryError

_TYPES = {
    "TransferWithAuthorization": [
        {"name": "from", "type": "address"},
        {"name": "to", "type": "address"},
        {"name": "value", "type": "uint256"},
        {"name": "validAfter", "type": "uint256"},
        {"name": "validBefore", "type": "uint256"},
        {"name": "nonce", "type": "bytes32"},
    ]
}


def _required(challenge: X402Challenge) -> dict[str, Any]:
    required = challenge.payment_required
    if not required:
        raise NotaryError("x402: the 402 carries no PAYMENT-REQUIRED header (is x402 enabled on the service?)")
    return required


class WalletPayer:
    """The standard x402 v2 flow: signs the payment and sends it as ``PAYMENT-SIGNATURE``; the service settles it
    through its facilitator only after the work succeeded. ``max_amount_per_call`` (smallest units of the asset) caps
    what one call may cost: a dearer challenge is refused before anything is signed."""

    def __init__(self, private_key: str, *, max_amount_per_call: int, networks: Sequence[str] | None = None, assets: Sequence[str] | None = None) -> None:
        from eth_account import Account  # the optional dependency, imported where it is needed

        self._account = Account.from_key(private_key)
        self.address: str = self._account.address
        self.max_amount_per_call = int(max_amount_per_call)
        self.networks = list(networks) if networks else None
        self.assets = [a.lower() for a in assets] if assets else None

    def choose(self, required: Mapping[str, Any]) -> dict[str, Any]:
        usable = [
            r
            for r in required.get("accepts", [])
            if r.get("scheme") == "exact"
            and str(r.get("network", "")).startswith("eip155:")
            and (self.networks is None or r["network"] in self.networks)
            and (self.assets is None or r["asset"].lower() in self.assets)
        ]
        for r in usable:
            if int(r["amount"]) <= self.max_amount_per_call:
                return r
        asked = ", ".join(f"{r['amount']} of {r['asset']} on {r['network']}" for r in usable) or "nothing this wallet pays with"
        raise NotaryError(f"x402: the service asks for {asked}; this wallet pays at most {self.max_amount_per_call} per call")

    def sign(self, required: Mapping[str, Any], requirements: Mapping[str, Any]) -> dict[str, Any]:
        """An x402 v2 PaymentPayload: the EIP-3009 authorization for exactly these requirements, signed."""
        extra = requirements.get("extra") or {}
        if not isinstance(extra.get("name"), str) or not isinstance(extra.get("version"), str):
            raise NotaryError("x402: the requirements name no EIP-712 domain (extra.name, extra.version)")
        authorization = {
            "from": self.address,
            "to": requirements["payTo"],
            "value": str(requirements["amount"]),
            "validAfter": "0",
            "validBefore": str(int(time.time()) + int(requirements["maxTimeoutSeconds"])),
            "nonce": "0x" + os.urandom(32).hex(),
        }
        signed = self._account.sign_typed_data(
            domain_data={"name": extra["name"], "version": extra["version"], "chainId": int(requirements["network"].split(":")[1]), "verifyingContract": requirements["asset"]},
            message_types=_TYPES,
            message_data={**authorization, "value": int(authorization["value"]), "validAfter": 0, "validBefore": int(authorization["validBefore"]), "nonce": bytes.fromhex(authorization["nonce"][2:])},
        )
        payload: dict[str, Any] = {"x402Version": 2, "accepted": dict(requirements), "payload": {"signature": "0x" + bytes(signed.signature).hex(), "authorization": authorization}}
        if required.get("resource"):
            payload["resource"] = required["resource"]
        return payload

    def pay(self, challenge: X402Challenge) -> dict[str, str]:
        required = _required(challenge)
        payload = self.sign(required, self.choose(required))
        return {"payment-signature": base64.b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode()}


class ReceiptPayer(WalletPayer):
    """The interface's flow (``X-402-Receipt``): settles first through the facilitator (``POST /settle``), then the
    request is repeated with the facilitator's signed settlement receipt."""

    def __init__(self, private_key: str, *, facilitator_url: str, max_amount_per_call: int, networks: Sequence[str] | None = None, assets: Sequence[str] | None = None, timeout: float = 60.0) -> None:
        super().__init__(private_key, max_amount_per_call=max_amount_per_call, networks=networks, assets=assets)
        self.facilitator_url = facilitator_url.rstrip("/")
        self.timeout = timeout

    def pay(self, challenge: X402Challenge) -> dict[str, str]:
        required = _required(challenge)
        requirements = self.choose(required)
        body = {"x402Version": 2, "paymentPayload": self.sign(required, requirements), "paymentRequirements": requirements}
        response = httpx.post(self.facilitator_url + "/settle", json=body, timeout=self.timeout)
        settled = response.json() if "json" in response.headers.get("content-type", "") else {}
        receipt = ((settled.get("extensions") or {}).get("x402-settlement-receipt") or {}).get("receipt")
        if not response.is_success or not settled.get("success") or not receipt:
            raise NotaryError(f"x402: the facilitator did not settle ({response.status_code} {settled.get('errorReason', 'no settlement receipt')})")
        return {"x-402-receipt": receipt}
