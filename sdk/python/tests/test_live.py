"""The integration suite against a live ``notary serve`` (test/sdk-conformance.test.ts starts it and passes
NOTARY_LIVE_*); the TypeScript and Go libraries run the same cases."""

import json
import re

import pytest

from conftest import LIVE_URL, live, live_mpp_parties
from notary_client import (
    ApiKey,
    AsyncClient,
    AuthenticationError,
    BadRequestError,
    Client,
    ConflictError,
    ConnectionError,
    NotaryError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    TimeoutError,
    UnprocessableError,
    verify_receipt,
)

pytestmark = pytest.mark.skipif(not LIVE_URL, reason="NOTARY_LIVE_URL is not set (run through test/sdk-conformance.test.ts)")


def client(**options):
    return Client(LIVE_URL, payment=ApiKey(live("NOTARY_LIVE_KEY")), retry_base_delay=0.05, **options)


def test_api_key_search_and_extract_with_request_id_credits_and_raw_response():
    with client() as notary:
        result = notary.search("vacuum dead tuples", depth=1)
        assert result["results"][0]["url"] == "https://docs.test/vacuum"
        assert result.credits_used == 1
        assert re.match(r"^req_", result.request_id)
        assert result.response.status_code == 200
        assert "bulk" in result.response.headers["ratelimit-policy"]
        assert json.loads(result.response.text) == result.data
        assert notary.search("vacuum dead tuples", depth=2).credits_used == 2
        assert notary.search("vacuum", language="en").credits_used == 1
        page = notary.extract(live("NOTARY_LIVE_PAGE_URL"), mode="markdown")
        assert page["title"] == "Routine vacuuming"
        assert "Autovacuum reclaims" in page["content"]
        assert page.credits_used == 1


def test_search_options_max_results_domains_dates_and_highlights():
    with client() as notary:
        two = notary.search("vacuum tables", max_results=2)
        assert len(two["results"]) == 2 and two.credits_used == 1
        assert "highlights" not in two["results"][0]
        assert notary.search("vacuum", include_domains=["docs.test"])["results"]
        assert notary.search("vacuum", exclude_domains=["*.test"])["results"] == []
        # The live index's pages have no publication date: kept by default, left out on request.
        assert notary.search("vacuum", start_date="2020-01-01")["results"]
        assert notary.search("vacuum", start_date="2020-01-01", end_date="2020-12-31", undated="exclude")["results"] == []
        lit = notary.search("vacuum", highlights={"count": 1, "max_chars": 80})
        first = lit["results"][0]["highlights"][0]
        assert "vacuum" in first["text"] and first["score"] > 0
        with pytest.raises(BadRequestError) as bad:
            notary.search("vacuum", include_domains=["https://docs.test/"])
        assert bad.value.code == "invalid_request"
        with pytest.raises(UnprocessableError) as reversed_range:
            notary.search("vacuum", start_date="2021-02-01", end_date="2021-01-01")
        assert reversed_range.value.code == "invalid_date_range"


def test_collection_default_is_the_index_searched_without_it_and_an_unknown_one_is_collection_not_found():
    with client() as notary:
        plain = notary.search("vacuum dead tuples")
        in_default = notary.search("vacuum dead tuples", collection="default")
        assert [r["url"] for r in in_default["results"]] == [r["url"] for r in plain["results"]]
        assert in_default.credits_used == 1
        with pytest.raises(NotFoundError) as missing:
            notary.search("vacuum", collection="no-such-collection")
        assert missing.value.code == "collection_not_found"
        assert missing.value.problem["collection"] == "no-such-collection"
        assert notary.extract(live("NOTARY_LIVE_PAGE_URL"), mode="text", collection="default")["title"] == "Routine vacuuming"
        with pytest.raises(NotFoundError) as refused:
            notary.extract(live("NOTARY_LIVE_PAGE_URL"), collection="no-such-collection")
        assert refused.value.code == "collection_not_found"
        with pytest.raises(NotFoundError) as batch:
            notary.extract_batch([live("NOTARY_LIVE_PAGE_URL")], collection="no-such-collection")
        assert batch.value.code == "collection_not_found"
    # A key limited to another collection may not read "default".
    with Client(LIVE_URL, payment=ApiKey(live("NOTARY_LIVE_LIMITED_KEY"))) as limited:
        with pytest.raises(PermissionDeniedError) as forbidden:
            limited.search("vacuum", collection="default")
        assert forbidden.value.code == "collection_forbidden"


def test_extract_include_comments_keeps_the_reader_comments_only_when_asked():
    with client() as notary:
        article = notary.extract(live("NOTARY_LIVE_COMMENTS_URL"), mode="text")
        assert "every Saturday" in article["content"] and "number 17" not in article["content"]
        assert "number 17" in notary.extract(live("NOTARY_LIVE_COMMENTS_URL"), mode="text", include_comments=True)["content"]
        batch = notary.extract_batch([live("NOTARY_LIVE_COMMENTS_URL")], mode="text", include_comments=True)
        assert "number 17" in batch["results"][0]["content"]


def test_search_include_published_date_only_when_asked_and_known():
    with client() as notary:
        dated = notary.search("tablespaces", include=["published_date"])
        assert dated["results"][0]["url"] == "https://docs.test/tablespaces"
        assert dated["results"][0]["published_date"] == "2024-05-01T00:00:00.000Z"
        assert dated.credits_used == 1
        undated = notary.search("vacuum", include=["published_date"])["results"]
        assert undated and all("published_date" not in r for r in undated)
        assert sorted(notary.search("tablespaces")["results"][0]) == ["rerank_score", "snippet", "title", "url"]
        with pytest.raises(BadRequestError) as bad:
            notary.search("tablespaces", include=["modified_date"])  # type: ignore[list-item]
        assert bad.value.code == "invalid_request"


def test_extract_batch_one_page_or_problem_per_url_charged_for_pages_replayed_under_one_key():
    urls = [live("NOTARY_LIVE_PAGE_URL"), live("NOTARY_LIVE_MISSING_URL"), live("NOTARY_LIVE_EMPTY_URL"), live("NOTARY_LIVE_FORBIDDEN_URL")]
    with client() as notary:
        batch = notary.extract_batch(urls, mode="text", idempotency_key="py-batch-1")
        items = batch["results"]
        assert [item["url"] for item in items] == urls
        assert items[0]["ok"] and items[0]["title"] == "Routine vacuuming" and "Autovacuum reclaims" in items[0]["content"]
        assert [item["problem"]["code"] for item in items[1:]] == ["upstream_not_found", "empty_content", "robots_disallowed"]
        assert not any(item["ok"] for item in items[1:])
        assert batch.credits_used == 1
        again = notary.extract_batch(urls, mode="text", idempotency_key="py-batch-1")
        assert again.replayed and again.response.text == batch.response.text
        with pytest.raises(UnprocessableError) as refused:
            notary.extract_batch([urls[0], urls[0]])
        assert refused.value.code == "invalid_batch"


def test_idempotency_key_replayed_not_charged_and_reuse_refused():
    with client() as notary:
        first = notary.search("analyze statistics", idempotency_key="py-idem-1")
        again = notary.search("analyze statistics", idempotency_key="py-idem-1")
        assert again.replayed and again.response.text == first.response.text
        with pytest.raises(ConflictError) as reused:
            notary.search("something else", idempotency_key="py-idem-1")
        assert reused.value.code == "idempotency_key_reused"
        fresh = notary.search("analyze statistics")
        assert re.match(r"^[0-9a-f-]{36}$", fresh.idempotency_key) and not fresh.replayed


def test_signed_receipts_verify_offline_and_are_in_the_log():
    with client(sign=True) as notary:
        result = notary.search("indexes performance")
        assert result["notary_receipt"]["claim"] == "search_call_consumed"
        assert result["facts"] == result["results"]
        verification = notary.verify_receipt(result)
        assert verification.failures() == [] and verification.valid
        tampered = result.response.text.replace('"credits_used":1', '"credits_used":0')
        assert tampered != result.response.text
        assert not verify_receipt(tampered, notary.jwks(), request_body=result.request_body).valid
        before = notary.checkpoint()
        assert notary.verify_inclusion(result["notary_receipt"])
        notary.search("autovacuum")
        after = notary.checkpoint()
        assert after.size > before.size
        assert notary.verify_consistency(before, after)


def test_every_error_class():
    with client() as notary:
        with pytest.raises(BadRequestError) as bad:
            notary.search("x", depth=9)
        assert bad.value.code == "depth_out_of_range" and bad.value.request_id.startswith("req_")
        with pytest.raises(PermissionDeniedError) as forbidden:
            notary.extract(live("NOTARY_LIVE_FORBIDDEN_URL"))
        assert forbidden.value.code == "robots_disallowed"
        with pytest.raises(NotFoundError):
            notary.get_json("/v1/nothing-here")
        with pytest.raises(UnprocessableError) as empty:
            notary.extract(live("NOTARY_LIVE_EMPTY_URL"))
        assert empty.value.code == "empty_content"
        # A page the upstream does not have is the caller's to fix: 422 upstream_not_found, not retried.
        with pytest.raises(UnprocessableError) as missing:
            notary.extract(live("NOTARY_LIVE_MISSING_URL"))
        assert missing.value.code == "upstream_not_found" and not missing.value.retryable
    with Client(LIVE_URL, payment=ApiKey(live("NOTARY_LIVE_REVOKED_KEY"))) as revoked, pytest.raises(AuthenticationError) as err:
        revoked.search("vacuum")
    assert err.value.code == "revoked_api_key"
    # With x402 enabled, a call without credentials is a 402 carrying the price and every mode's challenge.
    with Client(LIVE_URL) as anonymous, pytest.raises(PaymentRequiredError) as err:
        anonymous.search("vacuum")
    assert err.value.code == "payment_required" and err.value.price == {"credits": 1, "amount": "0.001", "asset": "USDC"}
    with Client(LIVE_URL, payment=ApiKey(live("NOTARY_LIVE_POOR_KEY"))) as poor, pytest.raises(PaymentRequiredError) as err:
        poor.search("vacuum")
    assert err.value.code == "insufficient_credits"
    with Client(live("NOTARY_LIVE_CLOSED_URL"), max_retries=1, retry_base_delay=0.01) as closed, pytest.raises(ConnectionError):
        closed.search("vacuum")
    with Client(live("NOTARY_LIVE_SILENT_URL"), payment=ApiKey(live("NOTARY_LIVE_KEY")), timeout=0.3, max_retries=1, retry_base_delay=0.01) as slow, pytest.raises(TimeoutError):
        slow.search("vacuum")


def test_retry_on_429_after_retry_after():
    def tiny(retries):
        return Client(LIVE_URL, payment=ApiKey(live("NOTARY_LIVE_TINY_KEY")), max_retries=retries)

    refused = None
    with tiny(0) as notary:
        for _ in range(5):
            try:
                notary.search("vacuum")
            except RateLimitError as err:
                refused = err
                break
    assert refused is not None and refused.retry_after >= 1
    with tiny(3) as notary:
        result = notary.search("vacuum")
    assert result.attempts > 1 and result.credits_used == 1


@pytest.mark.anyio
async def test_async_client():
    async with AsyncClient(LIVE_URL, payment=ApiKey(live("NOTARY_LIVE_KEY")), sign=True) as notary:
        result = await notary.search("vacuum dead tuples")
        assert result["results"][0]["url"] == "https://docs.test/vacuum" and result.credits_used == 1
        assert (await notary.verify_receipt(result)).valid
        page = await notary.extract(live("NOTARY_LIVE_PAGE_URL"))
        assert page.credits_used == 1
        batch = await notary.extract_batch([live("NOTARY_LIVE_PAGE_URL"), live("NOTARY_LIVE_MISSING_URL")])
        assert [item["ok"] for item in batch["results"]] == [True, False] and batch.credits_used == 1
        assert (await notary.verify_receipt(batch)).valid
        with pytest.raises(BadRequestError):
            await notary.search("x", depth=9)


def test_map_lists_the_indexed_site_charged_one_credit_with_paging():
    with client() as notary:
        listing = notary.map("https://docs.test/", sitemaps=False)
        assert listing.credits_used == 1
        urls = [item["url"] for item in listing["urls"]]
        assert "https://docs.test/vacuum" in urls and all(item["source"] == "index" for item in listing["urls"])
        assert listing["next_cursor"] is None
        first = notary.map("https://docs.test/", sitemaps=False, limit=1)
        assert len(first["urls"]) == 1 and first["next_cursor"]
        second = notary.map("https://docs.test/", sitemaps=False, limit=1, cursor=first["next_cursor"])
        assert second["urls"][0]["url"] == urls[1] and second.credits_used == 1
        with pytest.raises(UnprocessableError) as bad:
            notary.map("https://docs.test/", sitemaps=False, cursor="not-a-cursor")
        assert bad.value.code == "invalid_cursor"


def test_crawl_job_submitted_read_listed_and_cancelled():
    site = live("NOTARY_LIVE_PAGE_URL").rsplit("/", 1)[0] + "/"
    with client() as notary:
        job = notary.crawl(site, max_pages=5, max_depth=1)
        assert job.response.status_code == 202 and job.response.headers["location"] == f"/v1/crawl/{job['id']}"
        assert job["status"] == "queued" and job["seeds"] == [site] and job["max_pages"] == 5 and job["credits_used"] is None
        assert job["progress"]["stored"] == 0 and job.credits_used == 0
        again = notary.crawl_job(job["id"])
        assert again["id"] == job["id"] and again["status"] in ("queued", "running")
        listed = notary.crawl_jobs()
        assert job["id"] in [j["id"] for j in listed["jobs"]]
        cancelled = notary.cancel_crawl(job["id"])
        assert cancelled["status"] == "cancelled" and notary.crawl_job(job["id"])["status"] == "cancelled"
        with pytest.raises(NotFoundError) as missing:
            notary.crawl_job("crawl_doesnotexist")
        assert missing.value.code == "crawl_job_not_found"
    with pytest.raises(NotaryError):
        Client(LIVE_URL).crawl_jobs()


@pytest.mark.anyio
async def test_async_map_and_crawl_jobs():
    async with AsyncClient(LIVE_URL, payment=ApiKey(live("NOTARY_LIVE_KEY"))) as notary:
        assert (await notary.map("https://docs.test/", sitemaps=False, limit=2)).credits_used == 1
        # a seed that answers 404: the service's crawl worker may take the job before the cancel
        job = await notary.crawl([live("NOTARY_LIVE_MISSING_URL")], max_pages=1)
        assert (await notary.crawl_job(job["id"]))["status"] in ("queued", "running", "completed", "failed")
        assert job["id"] in [j["id"] for j in (await notary.crawl_jobs())["jobs"]]
        assert (await notary.cancel_crawl(job["id"]))["status"] in ("cancelled", "completed", "failed")


def test_x402_on_the_local_chain_both_flows():
    from notary_client import X402
    from notary_client.x402 import ReceiptPayer, WalletPayer

    key = live("NOTARY_LIVE_X402_KEY_PY")
    wallet = WalletPayer(key, max_amount_per_call=10_000)
    with Client(LIVE_URL, payment=X402(wallet)) as notary:
        paid = notary.search("vacuum dead tuples", depth=1)
    assert paid.credits_used == 1 and paid.attempts == 2 and paid["facts"] == paid["results"]
    settlement = json.loads(__import__("base64").b64decode(paid.response.headers["payment-response"]))
    assert settlement["success"] and settlement["payer"].lower() == wallet.address.lower()
    via_receipt = ReceiptPayer(key, facilitator_url=live("NOTARY_LIVE_FACILITATOR_URL"), max_amount_per_call=10_000)
    with Client(LIVE_URL, payment=X402(via_receipt)) as notary:
        deep = notary.search("vacuum dead tuples", depth=2)
    assert deep.credits_used == 2 and deep["results"][0]["url"] == "https://docs.test/vacuum"
    with Client(LIVE_URL, payment=X402(WalletPayer(key, max_amount_per_call=1))) as capped, pytest.raises(Exception, match="pays at most 1 per call"):
        capped.search("vacuum")


def test_mpp_parties_sign_every_call_and_receipts_split_the_price():
    from notary_client import Mpp

    parties = live_mpp_parties()
    with Client(LIVE_URL, payment=Mpp(parties), sign=True) as notary:
        result = notary.search("vacuum dead tuples", depth=2, idempotency_key="py-mpp-1")
        assert result.credits_used == 2 and result.attempts == 2
        assert result["receipts"] == [{"party": p.party, "credits": 1, "share": "0.5"} for p in parties]
        assert notary.verify_receipt(result).valid
    with Client(LIVE_URL, payment=Mpp(parties, max_credits=2)) as notary:
        again = notary.search("vacuum dead tuples", depth=2, idempotency_key="py-mpp-1")
    assert again.attempts == 1 and again.replayed
