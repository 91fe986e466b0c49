"""The notary client, sync (``Client``) and async (``AsyncClient``), sharing one call state machine."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import random
import time
import uuid
from typing import Any, Callable, Mapping, Sequence

import httpx

from ._checkpoint import Checkpoint, open_checkpoint, parse_verifier_key
from ._crawl_jobs import AsyncCrawlJobs, CrawlJobs, job_payment
from ._encoding import b64, compact_json, unb64
from ._errors import ConnectionError, NotaryApiError, NotaryError, TimeoutError, error_for, retry_after_seconds
from ._merkle import leaf_hash, verify_consistency, verify_inclusion
from ._mpp import build_envelope
from ._payment import ApiKey, Mpp, Payment, X402, X402Challenge, X402Payer
from ._receipts import ReceiptVerification, receipt_leaf, verify_receipt
from ._types import ExtractBatchResult, ExtractResponse, ExtractResult, Highlights, IncludeField, MapResult, Result, SearchResponse, SearchResult

__all__ = ["Client", "AsyncClient", "ApiKey", "Mpp", "X402", "X402Challenge", "X402Payer", "SDK_VERSION"]

SDK_VERSION = "0.1.0"
_RETRY_STATUSES = {429, 503}


def _problem_of(response: httpx.Response) -> dict[str, Any] | None:
    if "json" not in response.headers.get("content-type", ""):
        return None
    try:
        parsed = response.json()
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) and isinstance(parsed.get("code"), str) else None


class _Call:
    """One paid call across its attempts: the same body bytes and Idempotency-Key on every one."""

    def __init__(self, base_url: str, path: str, body: dict[str, Any] | None, payment: Payment | None, sign: bool, idempotency_key: str | None, max_retries: int, base_delay: float, max_delay: float, method: str = "POST") -> None:
        self.url = base_url + path
        self.method = method
        # A GET or DELETE (crawl jobs) has no body and no Idempotency-Key: it is authenticated, never charged.
        self.body = compact_json(body) if body is not None else b""
        self.payment = payment
        self.idempotency_key = idempotency_key or str(uuid.uuid4())
        self.sign = sign
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.credentials: dict[str, str] | None = {"authorization": f"Bearer {payment.key}"} if isinstance(payment, ApiKey) else None
        # A job read or cancel is not charged: its envelope is for 0 credits from the first attempt.
        self.mpp_credits = (payment.max_credits if method == "POST" else 0) if isinstance(payment, Mpp) else None
        self.retries = 0
        self.attempts = 0
        self.paid_round = False

    def headers(self) -> dict[str, str]:
        self.attempts += 1
        headers = {
            **({"content-type": "application/json", "idempotency-key": f'"{self.idempotency_key}"'} if self.method == "POST" else {}),
            "accept": "application/json, application/problem+json",
            **({"x-notary-sign": "required"} if self.sign else {}),
            **(self.credentials or {}),
        }
        if isinstance(self.payment, Mpp) and self.mpp_credits is not None:
            # A fresh envelope (nonce, times) per attempt, bound to this method, URL and body.
            _, header = build_envelope(method=self.method, url=self.url, body=self.body, total_credits=self.mpp_credits, parties=self.payment.parties, ttl_seconds=self.payment.ttl_seconds)
            headers["authorization"] = header
        return headers

    def backoff(self) -> float:
        return random.uniform(0, min(30.0, self.base_delay * 2**self.retries))

    def after_exception(self, exc: NotaryError) -> float:
        """Delay before the next attempt after a connection error or timeout; raises when out of retries."""
        if self.retries >= self.max_retries:
            raise exc
        delay = self.backoff()
        self.retries += 1
        return delay

    def after_response(self, response: httpx.Response) -> tuple[str, Any]:
        """("done", Result) | ("retry", delay) | ("pay", challenge) | ("again", None); raises the typed error."""
        if response.is_success:
            data = response.json()
            return "done", Result(
                data=data,
                request_id=response.headers.get("x-request-id", ""),
                credits_used=int(data.get("credits_used") or 0),
                idempotency_key=self.idempotency_key,
                replayed=response.headers.get("idempotency-replayed") == "true",
                attempts=self.attempts,
                response=response,
                request_body=self.body,
            )
        problem = _problem_of(response)
        error = error_for(response.status_code, problem, response, self.body)
        if error.status in (401, 402) and self.credentials is None and not self.paid_round and isinstance(self.payment, (Mpp, X402)):
            self.paid_round = True
            if isinstance(self.payment, Mpp) and self.mpp_credits is None:
                credits = (problem or {}).get("price", {}).get("credits")
                if credits is None:
                    raise error
                self.mpp_credits = int(credits)
                return "again", None
            if isinstance(self.payment, X402) and error.status == 402:
                return "pay", X402Challenge(self.url, "POST", self.body, response, problem)
        if (error.status in _RETRY_STATUSES or error.code == "idempotency_in_progress") and self.retries < self.max_retries:
            asked = retry_after_seconds(response.headers.get("retry-after"))
            if asked is None or asked <= self.max_delay:
                self.retries += 1
                # Honour Retry-After, plus up to 10% so a crowd of clients does not come back in step.
                return "retry", (self.backoff() if asked is None else asked * (1 + random.random() * 0.1))
        raise error


class _Base:
    def __init__(self, base_url: str | None, payment: Payment | None, sign: bool, timeout: float, max_retries: int, retry_base_delay: float, max_retry_delay: float, user_agent: str | None) -> None:
        self.base_url = (base_url or os.environ.get("NOTARY_URL") or "http://127.0.0.1:8080").rstrip("/")
        self.payment = payment
        self.sign = sign
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.max_retry_delay = max_retry_delay
        self.user_agent = user_agent or f"notary-python/{SDK_VERSION}"
        self._jwks: tuple[dict[str, Any], float] | None = None

    def _call(self, path: str, body: dict[str, Any], payment: Payment | None, sign: bool | None, idempotency_key: str | None, max_retries: int | None) -> _Call:
        return _Call(
            self.base_url,
            path,
            body,
            payment if payment is not None else self.payment,
            self.sign if sign is None else sign,
            idempotency_key,
            self.max_retries if max_retries is None else max_retries,
            self.retry_base_delay,
            self.max_retry_delay,
        )

    def _job_call(self, method: str, path: str, what: str, payment: Payment | None, max_retries: int | None) -> _Call:
        # GET and DELETE /v1/crawl... identify the payer that ordered the job: its API key or its parties' envelope.
        chosen = job_payment(payment if payment is not None else self.payment, what)
        return _Call(self.base_url, path, None, chosen, False, None, self.max_retries if max_retries is None else max_retries, self.retry_base_delay, self.max_retry_delay, method=method)

    @staticmethod
    def _search_body(query: str, depth: int, language: str | None = None, options: dict[str, Any] | None = None) -> dict[str, Any]:
        # Only the options given are sent: a body of query and depth alone is what older servers accept.
        given = {k: list(v) if k.endswith("_domains") or k == "include" else dict(v) if k == "highlights" else v for k, v in (options or {}).items() if v is not None}
        return {"query": query, "depth": depth, **({"language": language} if language else {}), **given}

    @staticmethod
    def _extract_body(target: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        # ``target`` is {"url": ...} or {"urls": [...]}; only the options given are sent.
        return {**target, **{k: v for k, v in options.items() if v is not None}}

    @staticmethod
    def _translate(exc: httpx.HTTPError, what: str) -> NotaryError:
        if isinstance(exc, httpx.TimeoutException):
            return TimeoutError(f"{what}: no complete answer in time ({exc.__class__.__name__})")
        return ConnectionError(f"{what}: {exc}")

    @staticmethod
    def _raise_for(response: httpx.Response) -> None:
        if not response.is_success:
            raise error_for(response.status_code, _problem_of(response), response)


class Client(CrawlJobs, _Base):
    """The notary client (sync): typed search and extract, paid by API key, MPP or x402, with an Idempotency-Key on
    every paid call (the same on every retry), retries with jittered backoff honouring Retry-After, timeouts, typed
    errors, and offline verification of signed receipts."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        payment: Payment | None = None,
        sign: bool = False,
        timeout: float = 60.0,
        max_retries: int = 2,
        retry_base_delay: float = 0.5,
        max_retry_delay: float = 60.0,
        user_agent: str | None = None,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(base_url, payment, sign, timeout, max_retries, retry_base_delay, max_retry_delay, user_agent)
        self._http = http_client or httpx.Client(timeout=httpx.Timeout(timeout), headers={"user-agent": self.user_agent})
        self._sleep = sleep

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def search(self, query: str, depth: int = 1, *, language: str | None = None, max_results: int | None = None, include_domains: Sequence[str] | None = None, exclude_domains: Sequence[str] | None = None, start_date: str | None = None, end_date: str | None = None, undated: str | None = None, highlights: Highlights | None = None, include: Sequence[IncludeField] | None = None, collection: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> SearchResult:
        """``POST /v1/search``; the options (max_results, domains, dates, highlights, include, collection) are sent only
        when given. An unknown ``collection`` raises NotFoundError (code collection_not_found), one the key may not read
        PermissionDeniedError (collection_forbidden)."""
        options = {"max_results": max_results, "include_domains": include_domains, "exclude_domains": exclude_domains, "start_date": start_date, "end_date": end_date, "undated": undated, "highlights": highlights, "include": include, "collection": collection}
        return self._paid("/v1/search", self._call("/v1/search", self._search_body(query, depth, language, options), payment, sign, idempotency_key, max_retries))

    def extract(self, url: str, *, mode: str | None = None, query: str | None = None, render: str | None = None, max_age: int | None = None, include_comments: bool | None = None, collection: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> ExtractResult:
        """``POST /v1/extract``; ``include_comments`` keeps the reader comments after the article; ``collection`` as in
        search (the page is fetched the same either way: the collection decides who may call)."""
        return self._paid("/v1/extract", self._call("/v1/extract", self._extract_body({"url": url}, {"mode": mode, "query": query, "render": render, "max_age": max_age, "include_comments": include_comments, "collection": collection}), payment, sign, idempotency_key, max_retries))

    def extract_batch(self, urls: Sequence[str], *, mode: str | None = None, query: str | None = None, render: str | None = None, max_age: int | None = None, include_comments: bool | None = None, collection: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> ExtractBatchResult:
        """``POST /v1/extract`` with ``urls`` (1 to 20): each page or its problem, in order; charged for the pages
        extracted. Pay with an API key or MPP: x402 cannot settle less than it signed (batch_payment_unsupported)."""
        return self._paid("/v1/extract", self._call("/v1/extract", self._extract_body({"urls": list(urls)}, {"mode": mode, "query": query, "render": render, "max_age": max_age, "include_comments": include_comments, "collection": collection}), payment, sign, idempotency_key, max_retries))

    def map(self, url: str, *, limit: int | None = None, cursor: str | None = None, sitemaps: bool | None = None, collection: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> MapResult:
        """``POST /v1/map``: the URLs known under ``url`` (index, crawl frontier, and its sitemaps unless
        ``sitemaps=False``), ``limit`` (1-5000) a page; pass ``result["next_cursor"]`` as ``cursor`` for the next page.
        A paid call like search (1 credit a page)."""
        body = {"url": url, **{k: v for k, v in {"limit": limit, "cursor": cursor, "sitemaps": sitemaps, "collection": collection}.items() if v is not None}}
        return self._paid("/v1/map", self._call("/v1/map", body, payment, sign, idempotency_key, max_retries))

    def _paid(self, path: str, call: _Call) -> Result[Any]:
        while True:
            try:
                response = self._http.request(call.method, call.url, content=call.body or None, headers=call.headers())
            except httpx.HTTPError as exc:
                self._sleep(call.after_exception(self._translate(exc, f"{call.method} {path}")))
                continue
            action, value = call.after_response(response)
            if action == "done":
                return value
            if action == "retry":
                self._sleep(value)
            elif action == "pay":
                paid = call.payment.payer.pay(value)  # type: ignore[union-attr]
                if inspect.isawaitable(paid):
                    raise NotaryError("this x402 payer is async: use AsyncClient")
                call.credentials = dict(paid)

    def get_json(self, path: str) -> Any:
        return json.loads(self.get_text(path))

    def get_text(self, path: str) -> str:
        try:
            response = self._http.get(self.base_url + path)
        except httpx.HTTPError as exc:
            raise self._translate(exc, f"GET {path}") from exc
        self._raise_for(response)
        return response.text

    def jwks(self, refresh: bool = False) -> dict[str, Any]:
        """The service's receipt keys (``/.well-known/jwks.json``), cached for 5 minutes."""
        if refresh or self._jwks is None or time.time() - self._jwks[1] > 300:
            self._jwks = (self.get_json("/.well-known/jwks.json"), time.time())
        return self._jwks[0]

    def verify_receipt(self, result: Result[Any], jwks: Mapping[str, Any] | None = None) -> ReceiptVerification:
        """Verifies a signed result offline: signature, key validity, the response body and the request body sent."""
        return verify_receipt(result.response.text, jwks or self.jwks(), request_body=result.request_body)

    def checkpoint(self, verifier_keys: Sequence[str] | None = None) -> Checkpoint:
        """The receipt log's latest checkpoint, its signature verified (keys default to the log's published ones)."""
        info = self.get_json("/v1/receipts/log")
        verifiers = [parse_verifier_key(k) for k in (verifier_keys or info["verifier_keys"])]
        return open_checkpoint(self.get_text("/v1/receipts/log/checkpoint"), verifiers, info["origin"])

    def verify_inclusion(self, receipt: Mapping[str, Any], checkpoint: Checkpoint | None = None) -> bool:
        """Whether the receipt is in the log under ``checkpoint`` (default: the latest, verified)."""
        cp = checkpoint or self.checkpoint()
        leaf = leaf_hash(receipt_leaf(receipt))
        proof = self.get_json(f"/v1/receipts/log/inclusion?leaf_hash={leaf.hex()}&tree_size={cp.size}")
        return verify_inclusion(proof["leaf_index"], cp.size, leaf, [unb64(h) for h in proof["hashes"]], cp.root_hash)

    def verify_consistency(self, older: Checkpoint, newer: Checkpoint) -> bool:
        """Whether ``newer`` extends ``older``: the log was only appended to."""
        if older.size in (0, newer.size):
            return older.size == 0 or verify_consistency(older.size, newer.size, older.root_hash, newer.root_hash, [])
        proof = self.get_json(f"/v1/receipts/log/consistency?first={older.size}&second={newer.size}")
        return verify_consistency(older.size, newer.size, older.root_hash, newer.root_hash, [unb64(h) for h in proof["hashes"]])


class AsyncClient(AsyncCrawlJobs, _Base):
    """The notary client for asyncio: the same calls as :class:`Client`, awaited."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        payment: Payment | None = None,
        sign: bool = False,
        timeout: float = 60.0,
        max_retries: int = 2,
        retry_base_delay: float = 0.5,
        max_retry_delay: float = 60.0,
        user_agent: str | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(base_url, payment, sign, timeout, max_retries, retry_base_delay, max_retry_delay, user_agent)
        self._http = http_client or httpx.AsyncClient(timeout=httpx.Timeout(timeout), headers={"user-agent": self.user_agent})

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def search(self, query: str, depth: int = 1, *, language: str | None = None, max_results: int | None = None, include_domains: Sequence[str] | None = None, exclude_domains: Sequence[str] | None = None, start_date: str | None = None, end_date: str | None = None, undated: str | None = None, highlights: Highlights | None = None, include: Sequence[IncludeField] | None = None, collection: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> SearchResult:
        options = {"max_results": max_results, "include_domains": include_domains, "exclude_domains": exclude_domains, "start_date": start_date, "end_date": end_date, "undated": undated, "highlights": highlights, "include": include, "collection": collection}
        return await self._paid("/v1/search", self._call("/v1/search", self._search_body(query, depth, language, options), payment, sign, idempotency_key, max_retries))

    async def extract(self, url: str, *, mode: str | None = None, query: str | None = None, render: str | None = None, max_age: int | None = None, include_comments: bool | None = None, collection: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> ExtractResult:
        return await self._paid("/v1/extract", self._call("/v1/extract", self._extract_body({"url": url}, {"mode": mode, "query": query, "render": render, "max_age": max_age, "include_comments": include_comments, "collection": collection}), payment, sign, idempotency_key, max_retries))

    async def extract_batch(self, urls: Sequence[str], *, mode: str | None = None, query: str | None = None, render: str | None = None, max_age: int | None = None, include_comments: bool | None = None, collection: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> ExtractBatchResult:
        return await self._paid("/v1/extract", self._call("/v1/extract", self._extract_body({"urls": list(urls)}, {"mode": mode, "query": query, "render": render, "max_age": max_age, "include_comments": include_comments, "collection": collection}), payment, sign, idempotency_key, max_retries))

    async def map(self, url: str, *, limit: int | None = None, cursor: str | None = None, sitemaps: bool | None = None, collection: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> MapResult:
        """``POST /v1/map``: the URLs known under ``url`` (index, crawl frontier, and its sitemaps unless
        ``sitemaps=False``), ``limit`` (1-5000) a page; pass ``result["next_cursor"]`` as ``cursor`` for the next page.
        A paid call like search (1 credit a page)."""
        body = {"url": url, **{k: v for k, v in {"limit": limit, "cursor": cursor, "sitemaps": sitemaps, "collection": collection}.items() if v is not None}}
        return await self._paid("/v1/map", self._call("/v1/map", body, payment, sign, idempotency_key, max_retries))

    async def _paid(self, path: str, call: _Call) -> Result[Any]:
        while True:
            try:
                response = await self._http.request(call.method, call.url, content=call.body or None, headers=call.headers())
            except httpx.HTTPError as exc:
                await asyncio.sleep(call.after_exception(self._translate(exc, f"{call.method} {path}")))
                continue
            action, value = call.after_response(response)
            if action == "done":
                return value
            if action == "retry":
                await asyncio.sleep(value)
            elif action == "pay":
                paid = call.payment.payer.pay(value)  # type: ignore[union-attr]
                call.credentials = dict(await paid if inspect.isawaitable(paid) else paid)

    async def get_json(self, path: str) -> Any:
        return json.loads(await self.get_text(path))

    async def get_text(self, path: str) -> str:
        try:
            response = await self._http.get(self.base_url + path)
        except httpx.HTTPError as exc:
            raise self._translate(exc, f"GET {path}") from exc
        self._raise_for(response)
        return response.text

    async def jwks(self, refresh: bool = False) -> dict[str, Any]:
        if refresh or self._jwks is None or time.time() - self._jwks[1] > 300:
            self._jwks = (await self.get_json("/.well-known/jwks.json"), time.time())
        return self._jwks[0]

    async def verify_receipt(self, result: Result[Any], jwks: Mapping[str, Any] | None = None) -> ReceiptVerification:
        return verify_receipt(result.response.text, jwks or await self.jwks(), request_body=result.request_body)


# Keep the unused-import checker honest about what the module re-exports for typing.
_ = (SearchResponse, ExtractResponse, NotaryApiError, b64)
