"""The wire types, as TypedDicts (the JSON the service sends, unchanged) and the result wrappers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, List, Literal, Optional, TypedDict, TypeVar

import httpx


IncludeField = Literal["published_date"]
"""A result field a search may ask for with ``include``."""


class SearchHighlight(TypedDict):
    """One passage of a result's page (when the request asked for highlights); score is 0..1."""

    text: str
    score: float


class Highlights(TypedDict, total=False):
    """The ``highlights`` search option: ``count`` passages (1-10, default 3) of ``max_chars`` (40-2000) each."""

    count: int
    max_chars: int


class _SearchResultItemFields(TypedDict):
    url: str
    title: str
    snippet: str
    rerank_score: float


class SearchResultItem(_SearchResultItemFields, total=False):
    """A result; ``highlights`` is present only when the request asked for them."""

    highlights: List[SearchHighlight]
    published_date: str
    """The page's publication date (ISO 8601, UTC): only when the request's ``include`` asked for it and it is known."""


class RateLimitInfo(TypedDict):
    limit: int
    remaining: int
    reset_ms: int


class PartyReceipt(TypedDict):
    party: str
    credits: int
    share: str


class NotaryReceipt(TypedDict):
    issuer: str
    issued_at: str
    claim: str
    credits: int
    kid: str
    request_id: str
    request_digest: str
    response_digest: str
    signature: str


class SearchResponse(TypedDict, total=False):
    query: str
    depth: int
    results: List[SearchResultItem]
    facts: List[SearchResultItem]
    credits_used: int
    rate_limit: RateLimitInfo
    receipts: List[PartyReceipt]
    notary_receipt: NotaryReceipt
    notary_request_salt: str


class ExtractResponse(TypedDict, total=False):
    url: str
    final_url: str
    status: Optional[int]
    title: Optional[str]
    byline: Optional[str]
    site_name: Optional[str]
    lang: Optional[str]
    published_at: Optional[str]
    mode: str
    content: str
    excerpt: str
    word_count: int
    credits_used: int
    rate_limit: RateLimitInfo
    receipts: List[PartyReceipt]
    notary_receipt: NotaryReceipt
    notary_request_salt: str


class Problem(TypedDict, total=False):
    """RFC 9457 problem details as notary writes them (plus the code's own members)."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    request_id: str
    retryable: bool


class ExtractBatchItem(TypedDict, total=False):
    """One URL of a batch, in the request's order: ``ok`` with the page's members, or not ``ok`` with its ``problem``."""

    url: str
    ok: bool
    final_url: str
    status: Optional[int]
    title: Optional[str]
    byline: Optional[str]
    site_name: Optional[str]
    lang: Optional[str]
    published_at: Optional[str]
    mode: str
    content: str
    excerpt: str
    word_count: int
    problem: Problem


class ExtractBatchResponse(TypedDict, total=False):
    results: List[ExtractBatchItem]
    credits_used: int
    rate_limit: RateLimitInfo
    receipts: List[PartyReceipt]
    notary_receipt: NotaryReceipt
    notary_request_salt: str


CrawlStatus = Literal["queued", "running", "completed", "cancelled", "failed"]
CrawlScope = Literal["path", "host", "domain"]


class CrawlProgress(TypedDict):
    stored: int
    queued: int
    failed: int
    pages_per_minute: Optional[float]
    eta_seconds: Optional[int]


class CrawlJobError(TypedDict):
    code: str
    detail: str


class CrawlJob(TypedDict, total=False):
    """A crawl job (``POST /v1/crawl``, ``GET``/``DELETE /v1/crawl/{id}``); ``credits_used`` is None until it ends."""

    id: str
    status: CrawlStatus
    collection: str
    seeds: List[str]
    scope: CrawlScope
    max_pages: int
    max_depth: int
    progress: CrawlProgress
    credits_quoted: int
    credits_used: Optional[int]
    created_at: str
    started_at: Optional[str]
    ended_at: Optional[str]
    error: Optional[CrawlJobError]
    webhook: Optional[str]


class CrawlJobList(TypedDict):
    """A page of the caller's crawl jobs, newest first; pass ``next_cursor`` for older ones (None on the last page)."""

    jobs: List[CrawlJob]
    next_cursor: Optional[str]


class MapUrl(TypedDict, total=False):
    url: str
    source: Literal["index", "frontier", "sitemap"]
    title: str
    last_crawled_at: str


class MapResponse(TypedDict, total=False):
    """``POST /v1/map``: the URLs known under ``url``; ``next_cursor`` is None on the last page."""

    url: str
    urls: List[MapUrl]
    next_cursor: Optional[str]
    sitemap_error: str
    credits_used: int
    rate_limit: RateLimitInfo
    receipts: List[PartyReceipt]
    notary_receipt: NotaryReceipt
    notary_request_salt: str


BodyT = TypeVar("BodyT", SearchResponse, ExtractResponse, ExtractBatchResponse, CrawlJob, CrawlJobList, MapResponse)


@dataclass
class Result(Generic[BodyT]):
    """A paid call's answer: the body as sent (``data``), what it cost, its request id, and the raw HTTP response."""

    data: BodyT
    request_id: str
    credits_used: int
    idempotency_key: str
    replayed: bool
    attempts: int
    response: httpx.Response = field(repr=False)
    request_body: bytes = field(repr=False, default=b"")

    def __getitem__(self, key: str) -> Any:
        return self.data[key]  # type: ignore[literal-required]


SearchResult = Result[SearchResponse]
ExtractResult = Result[ExtractResponse]
ExtractBatchResult = Result[ExtractBatchResponse]
CrawlJobResult = Result[CrawlJob]
CrawlJobListResult = Result[CrawlJobList]
MapResult = Result[MapResponse]
