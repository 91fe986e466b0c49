"""Crawl jobs (``POST /v1/crawl``, ``GET /v1/crawl[/{id}]``, ``DELETE /v1/crawl/{id}``), sync and async, as mixins of
``Client`` and ``AsyncClient``. A job is read, listed and cancelled by the payer that ordered it: its API key, or
MPP with the same parties (an envelope per attempt for the GET or DELETE, 0 credits: these calls are not charged)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence
from urllib.parse import quote

from ._errors import NotaryError
from ._payment import ApiKey, Mpp, Payment, X402
from ._types import CrawlJobListResult, CrawlJobResult, CrawlScope, Result

if TYPE_CHECKING:
    from ._client import _Call


def job_payment(chosen: Payment | None, what: str) -> Payment:
    """The payment a job read or cancel is authenticated with, or a NotaryError naming the fix."""
    if isinstance(chosen, (ApiKey, Mpp)):
        return chosen
    why = "x402 payers cannot order crawl jobs, so they have none to read or cancel" if isinstance(chosen, X402) else "the service shows a job only to the payer that ordered it"
    raise NotaryError(f"{what} needs the credentials that paid for the job: payment=ApiKey(...) or payment=Mpp(parties) ({why})")


def _job_path(job_id: str) -> str:
    return "/v1/crawl/" + quote(job_id, safe="")


def _list_path(cursor: str | None) -> str:
    return "/v1/crawl" + ("" if cursor is None else "?cursor=" + quote(cursor, safe=""))


def _crawl_body(url: str | Sequence[str], options: dict[str, Any]) -> dict[str, Any]:
    target: dict[str, Any] = {"url": url} if isinstance(url, str) else {"urls": list(url)}
    return {**target, **{k: list(v) if k in ("include", "exclude") else v for k, v in options.items() if v is not None}}


class CrawlJobs:
    """The crawl-job calls of ``Client``."""

    if TYPE_CHECKING:
        def _call(self, path: str, body: dict[str, Any], payment: Payment | None, sign: bool | None, idempotency_key: str | None, max_retries: int | None) -> _Call: ...
        def _job_call(self, method: str, path: str, what: str, payment: Payment | None, max_retries: int | None) -> _Call: ...
        def _paid(self, path: str, call: _Call) -> Result[Any]: ...

    def crawl(self, url: str | Sequence[str], *, collection: str | None = None, scope: CrawlScope | None = None, max_pages: int | None = None, max_depth: int | None = None, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None, webhook: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> CrawlJobResult:
        """``POST /v1/crawl``: starts a crawl job from one seed (a string) or 1 to 20 (a list) and returns it queued
        (202, ``Location`` in ``result.response.headers``). Quoted at ``max_pages`` pages and held; charged when it
        ends for the pages it stored (``credits_used`` is None until then, so ``result.credits_used`` is 0). Pay with
        an API key or MPP: x402 cannot pay a job (422 deferred_payment_unsupported, UnprocessableError)."""
        body = _crawl_body(url, {"collection": collection, "scope": scope, "max_pages": max_pages, "max_depth": max_depth, "include": include, "exclude": exclude, "webhook": webhook})
        return self._paid("/v1/crawl", self._call("/v1/crawl", body, payment, sign, idempotency_key, max_retries))

    def crawl_job(self, job_id: str, *, payment: Payment | None = None, max_retries: int | None = None) -> CrawlJobResult:
        """``GET /v1/crawl/{id}``: the job's state and progress; not charged. Read it with the payment that ordered
        it: its API key, or ``Mpp`` with the same parties (in any order; an envelope for this GET, 0 credits). Unknown,
        or another payer's (another party set too): NotFoundError with code crawl_job_not_found. x402 payment raises
        NotaryError: x402 payers cannot order jobs."""
        return self._paid("/v1/crawl/{id}", self._job_call("GET", _job_path(job_id), "crawl_job", payment, max_retries))

    def crawl_jobs(self, cursor: str | None = None, *, payment: Payment | None = None, max_retries: int | None = None) -> CrawlJobListResult:
        """``GET /v1/crawl``: the payer's jobs, newest first, 50 a page (``result["next_cursor"]`` for older ones);
        not charged. Paid as ``crawl_job`` (API key or MPP)."""
        return self._paid("/v1/crawl", self._job_call("GET", _list_path(cursor), "crawl_jobs", payment, max_retries))

    def cancel_crawl(self, job_id: str, *, payment: Payment | None = None, max_retries: int | None = None) -> CrawlJobResult:
        """``DELETE /v1/crawl/{id}``: cancels the job (status cancelled; charged for the pages stored until it
        stops); not charged itself. Paid as ``crawl_job`` (API key or MPP, the payer that ordered the job)."""
        return self._paid("/v1/crawl/{id}", self._job_call("DELETE", _job_path(job_id), "cancel_crawl", payment, max_retries))


class AsyncCrawlJobs:
    """The crawl-job calls of ``AsyncClient``, awaited."""

    if TYPE_CHECKING:
        def _call(self, path: str, body: dict[str, Any], payment: Payment | None, sign: bool | None, idempotency_key: str | None, max_retries: int | None) -> _Call: ...
        def _job_call(self, method: str, path: str, what: str, payment: Payment | None, max_retries: int | None) -> _Call: ...
        async def _paid(self, path: str, call: _Call) -> Result[Any]: ...

    async def crawl(self, url: str | Sequence[str], *, collection: str | None = None, scope: CrawlScope | None = None, max_pages: int | None = None, max_depth: int | None = None, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None, webhook: str | None = None, idempotency_key: str | None = None, sign: bool | None = None, payment: Payment | None = None, max_retries: int | None = None) -> CrawlJobResult:
        """``POST /v1/crawl``: starts a crawl job from one seed (a string) or 1 to 20 (a list) and returns it queued
        (202, ``Location`` in ``result.response.headers``). Quoted at ``max_pages`` pages and held; charged when it
        ends for the pages it stored (``credits_used`` is None until then, so ``result.credits_used`` is 0). Pay with
        an API key or MPP: x402 cannot pay a job (422 deferred_payment_unsupported, UnprocessableError)."""
        body = _crawl_body(url, {"collection": collection, "scope": scope, "max_pages": max_pages, "max_depth": max_depth, "include": include, "exclude": exclude, "webhook": webhook})
        return await self._paid("/v1/crawl", self._call("/v1/crawl", body, payment, sign, idempotency_key, max_retries))

    async def crawl_job(self, job_id: str, *, payment: Payment | None = None, max_retries: int | None = None) -> CrawlJobResult:
        """``GET /v1/crawl/{id}``: the job's state and progress; not charged. Read it with the payment that ordered
        it: its API key, or ``Mpp`` with the same parties (in any order; an envelope for this GET, 0 credits). Unknown,
        or another payer's (another party set too): NotFoundError with code crawl_job_not_found. x402 payment raises
        NotaryError: x402 payers cannot order jobs."""
        return await self._paid("/v1/crawl/{id}", self._job_call("GET", _job_path(job_id), "crawl_job", payment, max_retries))

    async def crawl_jobs(self, cursor: str | None = None, *, payment: Payment | None = None, max_retries: int | None = None) -> CrawlJobListResult:
        """``GET /v1/crawl``: the payer's jobs, newest first, 50 a page (``result["next_cursor"]`` for older ones);
        not charged. Paid as ``crawl_job`` (API key or MPP)."""
        return await self._paid("/v1/crawl", self._job_call("GET", _list_path(cursor), "crawl_jobs", payment, max_retries))

    async def cancel_crawl(self, job_id: str, *, payment: Payment | None = None, max_retries: int | None = None) -> CrawlJobResult:
        """``DELETE /v1/crawl/{id}``: cancels the job (status cancelled; charged for the pages stored until it
        stops); not charged itself. Paid as ``crawl_job`` (API key or MPP, the payer that ordered the job)."""
        return await self._paid("/v1/crawl/{id}", self._job_call("DELETE", _job_path(job_id), "cancel_crawl", payment, max_retries))

