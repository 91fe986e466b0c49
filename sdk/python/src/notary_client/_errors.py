"""Typed errors built from the problem+json ``code`` (RFC 9457)."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx


class NotaryError(Exception):
    """Every error the client raises."""


class NotaryApiError(NotaryError):
    """The service answered with a problem. ``code`` is stable: branch on it."""

    def __init__(self, status: int, problem: dict[str, Any] | None, response: httpx.Response, request_body: bytes = b"") -> None:
        self.status = status
        self.problem = problem
        self.code: str = (problem or {}).get("code") or f"http_{status}"
        self.request_id: str | None = (problem or {}).get("request_id") or response.headers.get("x-request-id")
        self.retryable: bool = bool((problem or {}).get("retryable", status >= 500))
        self.detail: str = (problem or {}).get("detail") or response.text[:200]
        self.response = response
        self.request_body = request_body
        super().__init__(f"{status} {self.code}: {self.detail}")


class BadRequestError(NotaryApiError):
    """400, 413, 415, 431: the request itself is wrong; fix it before sending it again."""


class AuthenticationError(NotaryApiError):
    """401: no, a malformed, unknown or revoked credential."""


class PaymentRequiredError(NotaryApiError):
    """402: the call must be paid, or the payer cannot cover it (``price`` says what it costs)."""

    @property
    def price(self) -> dict[str, Any] | None:
        return (self.problem or {}).get("price")


class PermissionDeniedError(NotaryApiError):
    """403: not allowed (e.g. robots.txt forbids fetching the page; collection_forbidden: the key may not read the collection)."""


class NotFoundError(NotaryApiError):
    """404 (e.g. collection_not_found: no collection of that name), 405."""


class ConflictError(NotaryApiError):
    """409, and 422 idempotency_key_reused: the Idempotency-Key is in use or belongs to another request."""


class UnprocessableError(NotaryApiError):
    """422: understood but cannot be served (no main content, CAPTCHA, login wall, ...)."""


class RateLimitError(NotaryApiError):
    """429 after the retries ran out."""

    @property
    def retry_after(self) -> float | None:
        return retry_after_seconds(self.response.headers.get("retry-after"))


class ServerError(NotaryApiError):
    """5xx (and 408): the service or the site it fetched failed; ``retryable`` says whether to try again."""


class ConnectionError(NotaryError):  # noqa: A001 - the library's own name, as in requests/httpx
    """The connection failed (refused, reset, DNS) on every attempt."""


class TimeoutError(NotaryError):  # noqa: A001
    """No complete answer within the timeout, on every attempt."""


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds: delay-seconds or an HTTP date; None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        at = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, at - (time.time() if now is None else now))


def error_for(status: int, problem: dict[str, Any] | None, response: httpx.Response, request_body: bytes = b"") -> NotaryApiError:
    code = (problem or {}).get("code")
    cls: type[NotaryApiError]
    if status == 401:
        cls = AuthenticationError
    elif status == 402:
        cls = PaymentRequiredError
    elif status == 403:
        cls = PermissionDeniedError
    elif status in (404, 405):
        cls = NotFoundError
    elif status == 409 or code == "idempotency_key_reused":
        cls = ConflictError
    elif status == 422:
        cls = UnprocessableError
    elif status == 429:
        cls = RateLimitError
    elif status == 408 or status >= 500:
        cls = ServerError
    else:
        cls = BadRequestError
    return cls(status, problem, response, request_body)
