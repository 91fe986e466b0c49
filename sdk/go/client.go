// Package notary is the Go client of the notary search and extraction API: typed search and extract on net/http,
// paid by API key, MPP envelopes or x402, with an Idempotency-Key on every paid call (the same on every retry),
// retries with jittered backoff honouring Retry-After, timeouts, typed errors from the problem's code, and offline
// verification of signed receipts and receipt-log proofs.
package notary

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Version of this library.
const Version = "0.1.0"

// Payment says how calls are paid: APIKey, MPP or X402.
type Payment interface{ isPayment() }

// APIKey pays from a tenant's credits: Authorization: Bearer sk_live_...
type APIKey string

// MPP shares each call among parties; an envelope is signed per attempt. With MaxCredits zero the client first asks
// the service for the call's price (an unpaid attempt answered with the quote).
type MPP struct {
	Parties    []MPPParty
	MaxCredits int64
	TTL        time.Duration
}

// X402 pays per call through Payer.
type X402 struct{ Payer X402Payer }

func (APIKey) isPayment() {}
func (MPP) isPayment()    {}
func (X402) isPayment()   {}

// Client calls one notary service. The zero value is not usable: use NewClient.
type Client struct {
	BaseURL        string
	Payment        Payment
	Sign           bool          // X-Notary-Sign: required on every paid call
	Timeout        time.Duration // per attempt, body included (default 60 s)
	MaxRetries     int           // after the first attempt (default 2)
	RetryBaseDelay time.Duration // attempt n waits up to base x 2^n, full jitter (default 500 ms)
	MaxRetryDelay  time.Duration // a longer Retry-After is not waited for (default 60 s)
	HTTPClient     *http.Client
	UserAgent      string

	jwksMu sync.Mutex
	jwks   *JWKS
	jwksAt time.Time
}

// Option configures a Client.
type Option func(*Client)

func WithPayment(p Payment) Option              { return func(c *Client) { c.Payment = p } }
func WithSign(sign bool) Option                 { return func(c *Client) { c.Sign = sign } }
func WithTimeout(d time.Duration) Option        { return func(c *Client) { c.Timeout = d } }
func WithMaxRetries(n int) Option               { return func(c *Client) { c.MaxRetries = n } }
func WithRetryBaseDelay(d time.Duration) Option { return func(c *Client) { c.RetryBaseDelay = d } }
func WithHTTPClient(h *http.Client) Option      { return func(c *Client) { c.HTTPClient = h } }
func WithUserAgent(ua string) Option            { return func(c *Client) { c.UserAgent = ua } }
func WithMaxRetryDelay(d time.Duration) Option  { return func(c *Client) { c.MaxRetryDelay = d } }

// NewClient makes a client of the service at baseURL (default NOTARY_URL, else http://127.0.0.1:8080). An APIKey
// payment with a malformed key (its checksum) is refused here, before any call.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	if baseURL == "" {
		baseURL = os.Getenv("NOTARY_URL")
	}
	if baseURL == "" {
		baseURL = "http://127.0.0.1:8080"
	}
	c := &Client{BaseURL: strings.TrimRight(baseURL, "/"), Timeout: 60 * time.Second, MaxRetries: 2, RetryBaseDelay: 500 * time.Millisecond, MaxRetryDelay: 60 * time.Second, HTTPClient: http.DefaultClient, UserAgent: "notary-go/" + Version}
	for _, o := range opts {
		o(c)
	}
	if key, ok := c.Payment.(APIKey); ok {
		if err := CheckAPIKey(string(key)); err != nil {
			return nil, fmt.Errorf("notary: invalid API key: %w", err)
		}
	}
	return c, nil
}

// CallOptions adjust one call.
type CallOptions struct {
	IdempotencyKey string  // reused across retries; default a fresh UUID
	Sign           *bool   // overrides Client.Sign
	Payment        Payment // overrides Client.Payment
	MaxRetries     *int
}

// Search is POST /v1/search.
func (c *Client) Search(ctx context.Context, req SearchRequest, opts ...CallOptions) (*SearchResult, error) {
	if req.Depth == 0 {
		req.Depth = 1
	}
	out := &SearchResult{}
	meta, err := c.paid(ctx, "/v1/search", req, &out.SearchResponse, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = *meta
	return out, nil
}

// Extract is POST /v1/extract.
func (c *Client) Extract(ctx context.Context, req ExtractRequest, opts ...CallOptions) (*ExtractResult, error) {
	out := &ExtractResult{}
	meta, err := c.paid(ctx, "/v1/extract", req, &out.ExtractResponse, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = *meta
	return out, nil
}

// ExtractBatch is POST /v1/extract with urls: each page or its problem, in order; charged for the pages extracted.
func (c *Client) ExtractBatch(ctx context.Context, req ExtractBatchRequest, opts ...CallOptions) (*ExtractBatchResult, error) {
	out := &ExtractBatchResult{}
	meta, err := c.paid(ctx, "/v1/extract", req, &out.ExtractBatchResponse, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = *meta
	return out, nil
}

func uuid4() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (c *Client) backoff(retry int) time.Duration {
	ceiling := math.Min(float64(30*time.Second), float64(c.RetryBaseDelay)*math.Pow(2, float64(retry)))
	return time.Duration(mathrand.Float64() * ceiling)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (c *Client) paid(ctx context.Context, path string, body any, into any, opts []CallOptions) (*Meta, error) {
	o := CallOptions{}
	if len(opts) > 0 {
		o = opts[0]
	}
	payment, sign, maxRetries := c.Payment, c.Sign, c.MaxRetries
	if o.Payment != nil {
		payment = o.Payment
	}
	if o.Sign != nil {
		sign = *o.Sign
	}
	if o.MaxRetries != nil {
		maxRetries = *o.MaxRetries
	}
	requestBody, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	key := o.IdempotencyKey
	if key == "" {
		key = uuid4()
	}
	url := c.BaseURL + path
	var credentials map[string]string
	var mppCredits int64
	switch p := payment.(type) {
	case APIKey:
		credentials = map[string]string{"Authorization": "Bearer " + string(p)}
	case MPP:
		mppCredits = p.MaxCredits
	}
	retries, attempts, paidRound := 0, 0, false
	for {
		attempts++
		header := http.Header{}
		header.Set("Content-Type", "application/json")
		header.Set("Accept", "application/json, application/problem+json")
		header.Set("Idempotency-Key", `"`+key+`"`)
		if sign {
			header.Set("X-Notary-Sign", "required")
		}
		for k, v := range credentials {
			header.Set(k, v)
		}
		if p, ok := payment.(MPP); ok && mppCredits > 0 {
			_, auth, err := BuildEnvelope(EnvelopeOptions{Method: "POST", URL: url, Body: requestBody, TotalCredits: mppCredits, Parties: p.Parties, TTL: p.TTL})
			if err != nil {
				return nil, err
			}
			header.Set("Authorization", auth)
		}
		raw, err := c.exchange(ctx, http.MethodPost, url, requestBody, header)
		if err != nil {
			if ctx.Err() == nil && retries < maxRetries {
				if sleep(ctx, c.backoff(retries)) != nil {
					return nil, err
				}
				retries++
				continue
			}
			return nil, err
		}
		if raw.Status >= 200 && raw.Status < 300 {
			if err := json.Unmarshal(raw.Body, into); err != nil {
				return nil, fmt.Errorf("notary: the response is not the expected JSON: %w", err)
			}
			var paid Paid
			_ = json.Unmarshal(raw.Body, &paid)
			return &Meta{RequestID: raw.Header.Get("X-Request-Id"), CreditsUsed: paid.CreditsUsed, IdempotencyKey: key, Replayed: raw.Header.Get("Idempotency-Replayed") == "true", Attempts: attempts, Raw: raw}, nil
		}
		apiErr := newAPIError(raw, problemOf(raw))
		if (apiErr.Status == 401 || apiErr.Status == 402) && credentials == nil && !paidRound {
			switch p := payment.(type) {
			case MPP:
				if mppCredits == 0 {
					paidRound = true
					if apiErr.Problem == nil || apiErr.Problem.Price == nil {
						return nil, apiErr
					}
					mppCredits = apiErr.Problem.Price.Credits
					continue
				}
			case X402:
				if apiErr.Status == 402 {
					paidRound = true
					headers, err := p.Payer.Pay(ctx, &X402Challenge{URL: url, Method: http.MethodPost, Body: requestBody, Response: raw, Problem: apiErr.Problem})
					if err != nil {
						return nil, fmt.Errorf("notary: x402 payer: %w", err)
					}
					credentials = headers
					continue
				}
			}
		}
		if (apiErr.Status == 429 || apiErr.Status == 503 || apiErr.Code == "idempotency_in_progress") && retries < maxRetries {
			asked := apiErr.RetryAfter()
			if asked <= c.MaxRetryDelay {
				wait := c.backoff(retries)
				if asked > 0 {
					// Honour Retry-After, plus up to 10% so a crowd of clients does not come back in step.
					wait = asked + time.Duration(mathrand.Float64()*0.1*float64(asked))
				}
				if sleep(ctx, wait) != nil {
					return nil, apiErr
				}
				retries++
				continue
			}
		}
		return nil, apiErr
	}
}

func problemOf(raw *RawResponse) *Problem {
	if !strings.Contains(raw.Header.Get("Content-Type"), "json") {
		return nil
	}
	var p Problem
	if json.Unmarshal(raw.Body, &p) != nil || p.Code == "" {
		return nil
	}
	return &p
}

// exchange is one HTTP attempt with its timeout covering the body; network failures become *TransportError.
func (c *Client) exchange(ctx context.Context, method, url string, body []byte, header http.Header) (*RawResponse, error) {
	attemptCtx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(attemptCtx, method, url, reader)
	if err != nil {
		return nil, err
	}
	req.Header = header
	req.Header.Set("User-Agent", c.UserAgent)
	res, err := c.HTTPClient.Do(req)
	if err == nil {
		defer res.Body.Close()
		var data []byte
		data, err = io.ReadAll(res.Body)
		if err == nil {
			return &RawResponse{Status: res.StatusCode, Header: res.Header, Body: data, RequestBody: body}, nil
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var netErr net.Error
	timeout := errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())
	return nil, &TransportError{Timeout: timeout, Err: err}
}

// GetJSON is a GET of the public API decoded into out (errors typed as for paid calls).
func (c *Client) GetJSON(ctx context.Context, path string, out any) error {
	raw, err := c.GetRaw(ctx, path)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw.Body, out)
}

// GetRaw is a GET of the public API.
func (c *Client) GetRaw(ctx context.Context, path string) (*RawResponse, error) {
	header := http.Header{}
	header.Set("Accept", "application/json, application/problem+json, text/plain")
	raw, err := c.exchange(ctx, http.MethodGet, c.BaseURL+path, nil, header)
	if err != nil {
		return nil, err
	}
	if raw.Status < 200 || raw.Status >= 300 {
		return nil, newAPIError(raw, problemOf(raw))
	}
	return raw, nil
}
