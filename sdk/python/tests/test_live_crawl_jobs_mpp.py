"""Crawl jobs ordered by MPP parties, read, listed and cancelled with envelopes, against the live ``notary serve``
(test/sdk-conformance.test.ts): the job's payer is the set of the parties, so another party set does not see it."""

import pytest

from conftest import LIVE_URL, live, live_mpp_parties
from notary_client import AsyncClient, Client, Mpp, MppParty, NotaryError, NotFoundError, X402
from notary_client.x402 import WalletPayer

pytestmark = pytest.mark.skipif(not LIVE_URL, reason="NOTARY_LIVE_URL is not set (run through test/sdk-conformance.test.ts)")


def test_mpp_parties_read_list_and_cancel_their_crawl_job_and_another_party_set_does_not_see_it():
    both = live_mpp_parties()
    alone = Mpp([MppParty(both[0].party, "1", both[0].private_key)])
    with Client(LIVE_URL, payment=Mpp(both), retry_base_delay=0.05) as notary:
        # A seed that answers 404: the service's crawl worker may take the job at once, and it must store nothing
        # that the other suites' searches would then find.
        job = notary.crawl(live("NOTARY_LIVE_MISSING_URL"), max_pages=2, max_depth=0)
        assert job.response.status_code == 202 and job.attempts == 2  # the quote, then the signed envelope
        read = notary.crawl_job(job["id"])
        assert read["id"] == job["id"] and read["status"] in ("queued", "running", "completed", "failed") and read["max_pages"] == 2
        # The payer is the set of the parties: listed the other way round, they are the same payer.
        assert job["id"] in [j["id"] for j in notary.crawl_jobs(payment=Mpp(list(reversed(both))))["jobs"]]
        for call in (notary.crawl_job, notary.cancel_crawl):
            with pytest.raises(NotFoundError) as missing:
                call(job["id"], payment=alone)
            assert missing.value.code == "crawl_job_not_found"
        assert job["id"] not in [j["id"] for j in notary.crawl_jobs(payment=alone)["jobs"]]
        assert notary.crawl_job(job["id"])["status"] != "cancelled"
        cancelled = notary.cancel_crawl(job["id"])["status"]
        assert cancelled in ("cancelled", "completed", "failed")
        assert notary.crawl_job(job["id"])["status"] == cancelled
        wallet = X402(WalletPayer(live("NOTARY_LIVE_X402_KEY_PY"), max_amount_per_call=1))
        with pytest.raises(NotaryError, match=r"payment=ApiKey\(\.\.\.\) or payment=Mpp\(parties\) \(x402 payers cannot order crawl jobs"):
            notary.crawl_job(job["id"], payment=wallet)


@pytest.mark.anyio
async def test_async_mpp_parties_read_list_and_cancel_their_crawl_job():
    async with AsyncClient(LIVE_URL, payment=Mpp(live_mpp_parties())) as notary:
        job = await notary.crawl([live("NOTARY_LIVE_MISSING_URL")], max_pages=1)
        assert (await notary.crawl_job(job["id"]))["status"] in ("queued", "running", "completed", "failed")
        assert job["id"] in [j["id"] for j in (await notary.crawl_jobs())["jobs"]]
        assert (await notary.cancel_crawl(job["id"]))["status"] in ("cancelled", "completed", "failed")
