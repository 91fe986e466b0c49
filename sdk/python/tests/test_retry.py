"""Retry behaviour against a real HTTP server on 127.0.0.1 that answers from a script of responses."""

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from notary_client import ApiKey, Client, Mpp, MppParty, RateLimitError, ServerError, random_seed, retry_after_seconds, sha256_digest

KEY = "sk_live_000000000000000000000000000000002wjyrI"
OK = (200, {}, {"query": "q", "depth": 1, "results": [], "credits_used": 1, "rate_limit": {"limit": 10, "remaining": 9, "reset_ms": 100}})


def problem(status, code):
    return {"type": "t", "title": "t", "status": status, "detail": code, "code": code, "request_id": "req_problem1", "retryable": True}


@pytest.fixture
def scripted():
    servers = []

    def start(responses):
        seen = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                seen.append({**dict(self.headers), ":method": self.command, ":path": self.path})
                status, headers, body = responses[min(len(seen) - 1, len(responses) - 1)]
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/problem+json" if status >= 400 else "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_DELETE = do_POST

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", seen

    yield start
    for s in servers:
        s.shutdown()


def test_retry_after_honoured_and_the_same_idempotency_key_on_every_attempt(scripted):
    url, seen = scripted([(503, {"retry-after": "2"}, problem(503, "service_unavailable")), (429, {"retry-after": "1"}, problem(429, "rate_limited")), OK])
    waits = []
    with Client(url, payment=ApiKey(KEY), sleep=waits.append) as client:
        result = client.search("q")
    assert result.attempts == 3
    assert 2.0 <= waits[0] <= 2.2 and 1.0 <= waits[1] <= 1.1
    keys = {h["idempotency-key"] for h in seen}
    assert keys == {f'"{result.idempotency_key}"'}
    assert all(h["authorization"] == f"Bearer {KEY}" for h in seen)


def test_gives_up_after_max_retries_and_skips_too_long_retry_after(scripted):
    url, seen = scripted([(429, {"retry-after": "1"}, problem(429, "rate_limited"))])
    with Client(url, payment=ApiKey(KEY), max_retries=2, sleep=lambda s: None) as client, pytest.raises(RateLimitError):
        client.search("q")
    assert len(seen) == 3
    with Client(url, payment=ApiKey(KEY), max_retry_delay=0.5, sleep=lambda s: None) as client, pytest.raises(RateLimitError):
        client.search("q")
    assert len(seen) == 4


def test_a_500_is_not_retried(scripted):
    url, seen = scripted([(500, {}, problem(500, "internal_error"))])
    with Client(url, payment=ApiKey(KEY), sleep=lambda s: None) as client, pytest.raises(ServerError):
        client.search("q")
    assert len(seen) == 1


def _envelope(headers):
    scheme, _, value = headers["authorization"].partition(" envelope=")
    assert scheme == "MPP"
    return json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))


def test_an_mpp_crawl_job_read_signs_a_fresh_zero_credit_envelope_per_attempt_for_its_method_and_url(scripted):
    job = {"id": "crawl_x", "status": "queued"}
    url, seen = scripted([(503, {"retry-after": "0"}, problem(503, "service_unavailable")), (200, {}, job)])
    with Client(url, payment=Mpp([MppParty("alice", "1", random_seed())], max_credits=5), sleep=lambda s: None) as client:
        assert client.crawl_job("crawl_x").data == job
        client.cancel_crawl("crawl_x")
        client.crawl_jobs("crawl_y")
    envelopes = [_envelope(h) for h in seen]
    assert [(h[":method"], h[":path"]) for h in seen] == [("GET", "/v1/crawl/crawl_x")] * 2 + [("DELETE", "/v1/crawl/crawl_x"), ("GET", "/v1/crawl?cursor=crawl_y")]
    assert [(e["htm"], e["htu"], e["total_credits"]) for e in envelopes] == [(h[":method"], url + h[":path"], 0) for h in seen]
    assert all(e["body_digest"] == sha256_digest(b"") for e in envelopes)
    assert len({e["nonce"] for e in envelopes}) == 4 and all("idempotency-key" not in {k.lower() for k in h} for h in seen)


def test_retry_after_forms():
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Tue, 01 Jan 2030 00:00:10 GMT", now=1893456000.0) == 10.0
    assert retry_after_seconds("soon") is None
