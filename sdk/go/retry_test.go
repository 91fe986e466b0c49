package notary

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

type scripted struct {
	status int
	header map[string]string
	body   string
}

// A real HTTP server on 127.0.0.1 answering from a script of responses; it records the headers of every request.
func scriptedServer(t *testing.T, responses []scripted) (*httptest.Server, func() []http.Header) {
	var mu sync.Mutex
	var seen []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := r.Header.Clone()
		h.Set("X-Test-Request", r.Method+" "+r.URL.RequestURI()) // what was asked, for the envelope checks
		seen = append(seen, h)
		next := responses[min(len(seen)-1, len(responses)-1)]
		mu.Unlock()
		for k, v := range next.header {
			w.Header().Set(k, v)
		}
		if next.status >= 400 {
			w.Header().Set("Content-Type", "application/problem+json")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(next.status)
		_, _ = w.Write([]byte(next.body))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []http.Header { mu.Lock(); defer mu.Unlock(); return append([]http.Header{}, seen...) }
}

const testKey = APIKey("sk_live_000000000000000000000000000000002wjyrI")
const okBody = `{"query":"q","depth":1,"results":[],"credits_used":1,"rate_limit":{"limit":10,"remaining":9,"reset_ms":100}}`

func problemBody(status, code string) string {
	return `{"type":"t","title":"t","status":` + status + `,"detail":"` + code + `","code":"` + code + `","request_id":"req_problem1","retryable":true}`
}

func TestRetryAfterAndTheSameIdempotencyKey(t *testing.T) {
	srv, seen := scriptedServer(t, []scripted{
		{503, map[string]string{"Retry-After": "1"}, problemBody("503", "service_unavailable")},
		{429, map[string]string{"Retry-After": "1"}, problemBody("429", "rate_limited")},
		{200, nil, okBody},
	})
	c, _ := NewClient(srv.URL, WithPayment(testKey))
	start := time.Now()
	result, err := c.Search(context.Background(), SearchRequest{Query: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < 2*time.Second || elapsed > 4*time.Second {
		t.Errorf("waited %v for two Retry-After: 1", elapsed)
	}
	headers := seen()
	if result.Attempts != 3 || len(headers) != 3 {
		t.Fatalf("attempts %d, requests %d", result.Attempts, len(headers))
	}
	for _, h := range headers {
		if h.Get("Idempotency-Key") != `"`+result.IdempotencyKey+`"` || h.Get("Authorization") != "Bearer "+string(testKey) {
			t.Errorf("attempt headers: %v", h)
		}
	}
}

func TestGivesUpAndSkipsLongRetryAfter(t *testing.T) {
	srv, seen := scriptedServer(t, []scripted{{429, map[string]string{"Retry-After": "120"}, problemBody("429", "rate_limited")}})
	c, _ := NewClient(srv.URL, WithPayment(testKey))
	_, err := c.Search(context.Background(), SearchRequest{Query: "q"})
	var apiErr *APIError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &apiErr) || apiErr.RetryAfter() != 120*time.Second || len(seen()) != 1 {
		t.Errorf("%v after %d requests", err, len(seen()))
	}
}

func TestA500IsNotRetried(t *testing.T) {
	srv, seen := scriptedServer(t, []scripted{{500, nil, problemBody("500", "internal_error")}})
	c, _ := NewClient(srv.URL, WithPayment(testKey))
	if _, err := c.Search(context.Background(), SearchRequest{Query: "q"}); !errors.Is(err, ErrServer) || len(seen()) != 1 {
		t.Errorf("%v after %d requests", err, len(seen()))
	}
}

func TestMPPCrawlJobCallsSignAFreshZeroCreditEnvelopePerAttempt(t *testing.T) {
	job := `{"id":"crawl_x","status":"queued"}`
	srv, seen := scriptedServer(t, []scripted{{503, map[string]string{"Retry-After": "0"}, problemBody("503", "service_unavailable")}, {200, nil, job}})
	_, key, _ := ed25519.GenerateKey(nil)
	c, _ := NewClient(srv.URL, WithPayment(MPP{Parties: []MPPParty{{Party: "alice", Share: "1", PrivateKey: key}}, MaxCredits: 5}), WithRetryBaseDelay(time.Millisecond))
	ctx := context.Background()
	got, err := c.CrawlJob(ctx, "crawl_x")
	if err != nil || got.ID != "crawl_x" || got.Attempts != 2 {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := c.CancelCrawl(ctx, "crawl_x"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CrawlJobs(ctx, "crawl_y"); err != nil {
		t.Fatal(err)
	}
	asked := []string{"GET /v1/crawl/crawl_x", "GET /v1/crawl/crawl_x", "DELETE /v1/crawl/crawl_x", "GET /v1/crawl?cursor=crawl_y"}
	headers := seen()
	nonces := map[string]bool{}
	for i, h := range headers {
		scheme, value, _ := strings.Cut(h.Get("Authorization"), " envelope=")
		raw, err := base64.RawURLEncoding.DecodeString(value)
		var e Envelope
		if scheme != "MPP" || err != nil || json.Unmarshal(raw, &e) != nil {
			t.Fatalf("attempt %d: %q %v", i, h.Get("Authorization"), err)
		}
		method, target, _ := strings.Cut(asked[i], " ")
		if h.Get("X-Test-Request") != asked[i] || e.Htm != method || e.Htu != srv.URL+target || e.TotalCredits != 0 || e.BodyDigest != SHA256Digest(nil) || h.Get("Idempotency-Key") != "" {
			t.Errorf("attempt %d (%s): %+v", i, h.Get("X-Test-Request"), e)
		}
		nonces[e.Nonce] = true
	}
	if len(headers) != 4 || len(nonces) != 4 {
		t.Errorf("%d requests, %d nonces: one fresh envelope per attempt", len(headers), len(nonces))
	}
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if retryAfter("3", now) != 3*time.Second || retryAfter("Tue, 01 Jan 2030 00:00:10 GMT", now) != 10*time.Second || retryAfter("soon", now) != 0 {
		t.Error("Retry-After forms")
	}
}
