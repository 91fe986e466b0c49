import json
import os
from pathlib import Path

import pytest

VECTORS = Path(__file__).resolve().parents[3] / "spec" / "vectors"


def load(name: str):
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


@pytest.fixture
def anyio_backend():
    return "asyncio"


def live(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set")
    return value


def live_mpp_parties():
    """The MPP parties the live service knows (NOTARY_LIVE_MPP_PARTIES: party=share:seed-hex, comma-separated)."""
    from notary_client import MppParty

    out = []
    for entry in live("NOTARY_LIVE_MPP_PARTIES").split(","):
        party, rest = entry.split("=")
        share, seed = rest.split(":")
        out.append(MppParty(party, share, bytes.fromhex(seed)))
    return out


LIVE_URL = os.environ.get("NOTARY_LIVE_URL")
if not LIVE_URL and os.environ.get("CI") == "true":
    raise RuntimeError("NOTARY_LIVE_URL is not set and CI=true: run through test/sdk-conformance.test.ts")
