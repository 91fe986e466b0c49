"""How a call is paid: an API key, multi-party payments (MPP) or x402, and what an x402 payer is shown."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Awaitable, Mapping, Protocol, Sequence, Union

import httpx

from ._api_keys import api_key_problem
from ._encoding import unb64
from ._errors import NotaryError
from ._mpp import MppParty

__all__ = ["ApiKey", "Mpp", "X402", "X402Challenge", "X402Payer", "Payment"]


@dataclass(frozen=True)
class X402Challenge:
    """What an x402 payer sees of the 402 it must answer."""

    url: str
    method: str
    body: bytes
    response: httpx.Response
    problem: dict[str, Any] | None

    @property
    def payment_required(self) -> dict[str, Any] | None:
        """The x402 v2 ``PAYMENT-REQUIRED`` header (base64 JSON), decoded."""
        header = self.response.headers.get("payment-required")
        if not header:
            return None
        try:
            return json.loads(unb64(header))
        except ValueError:
            return None


class X402Payer(Protocol):
    """Answers a 402 with the headers of the paid retry (``PAYMENT-SIGNATURE`` or ``X-402-Receipt``); may be async."""

    def pay(self, challenge: X402Challenge) -> Union[Mapping[str, str], Awaitable[Mapping[str, str]]]: ...


@dataclass(frozen=True)
class ApiKey:
    """A tenant's API key (``Authorization: Bearer sk_live_...``); its checksum is checked before any call."""

    key: str

    def __post_init__(self) -> None:
        problem = api_key_problem(self.key)
        if problem:
            raise NotaryError(f"invalid API key: {problem}")


@dataclass(frozen=True)
class Mpp:
    """Several parties share each call; an envelope is signed per attempt. Without ``max_credits`` the client first
    asks the service for the call's price (an unpaid attempt answered with the quote)."""

    parties: Sequence[MppParty]
    max_credits: int | None = None
    ttl_seconds: int = 120


@dataclass(frozen=True)
class X402:
    """Pay per call with x402 through ``payer``."""

    payer: X402Payer


Payment = Union[ApiKey, Mpp, X402]
