package notary

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	mathrand "math/rand/v2"
)

// CrawlRequest is the body of POST /v1/crawl: one seed (URL) or 1 to 20 (URLs), and how far to go. The job is quoted
// at MaxPages pages (default 100, at most the tier's crawl_pages_per_job) and held; it is charged when it ends for the
// pages it stored. Pay with an API key or MPP: x402 cannot pay a job (422 deferred_payment_unsupported).
type CrawlRequest struct {
	URL        string   `json:"url,omitempty"`
	URLs       []string `json:"urls,omitempty"`
	Collection string   `json:"collection,omitempty"`
	Scope      string   `json:"scope,omitempty"` // "path" (default), "host" or "domain"
	MaxPages   int      `json:"max_pages,omitempty"`
	MaxDepth   *int     `json:"max_depth,omitempty"`
	Include    []string `json:"include,omitempty"`
	Exclude    []string `json:"exclude,omitempty"`
	Webhook    string   `json:"webhook,omitempty"` // a webhook endpoint id, whe_...
}

// CrawlProgress is how far a job has got.
type CrawlProgress struct {
	Stored         int64    `json:"stored"`
	Queued         int64    `json:"queued"`
	Failed         int64    `json:"failed"`
	PagesPerMinute *float64 `json:"pages_per_minute"`
	ETASeconds     *int64   `json:"eta_seconds"`
}

// CrawlJobError is why a job failed.
type CrawlJobError struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// CrawlJob is a crawl job as the service reports it. Status is queued, running, completed, cancelled or failed.
type CrawlJob struct {
	ID            string        `json:"id"`
	Status        string        `json:"status"`
	Collection    string        `json:"collection"`
	Seeds         []string      `json:"seeds"`
	Scope         string        `json:"scope"`
	MaxPages      int64         `json:"max_pages"`
	MaxDepth      int64         `json:"max_depth"`
	Progress      CrawlProgress `json:"progress"`
	CreditsQuoted int64         `json:"credits_quoted"`
	// Charged is the job's credits_used: what it was charged, nil until it ends (Meta.CreditsUsed stays 0).
	Charged   *int64         `json:"credits_used"`
	CreatedAt string         `json:"created_at"`
	StartedAt *string        `json:"started_at"`
	EndedAt   *string        `json:"ended_at"`
	Error     *CrawlJobError `json:"error"`
	Webhook   *string        `json:"webhook"`
}

// CrawlJobResult is a crawl job with its Meta (for Crawl, Raw.Header carries its Location).
type CrawlJobResult struct {
	CrawlJob
	Meta
}

// CrawlJobList is a page of the caller's jobs, newest first; NextCursor is empty on the last page.
type CrawlJobList struct {
	Jobs       []CrawlJob `json:"jobs"`
	NextCursor *string    `json:"next_cursor"`
}

// CrawlJobListResult is a page of jobs with its Meta.
type CrawlJobListResult struct {
	CrawlJobList
	Meta
}

// MapRequest is the body of POST /v1/map: the URLs known under URL, Limit (1 to 5000, default 1000) a page.
// Sitemaps nil reads the site's sitemaps too (the server's default); false lists the index and frontier alone.
type MapRequest struct {
	URL        string `json:"url"`
	Limit      int    `json:"limit,omitempty"`
	Cursor     string `json:"cursor,omitempty"`
	Sitemaps   *bool  `json:"sitemaps,omitempty"`
	Collection string `json:"collection,omitempty"`
}

// MapURL is one URL of a map: Source is index, frontier or sitemap; Title and LastCrawledAt only for index entries.
type MapURL struct {
	URL           string `json:"url"`
	Source        string `json:"source"`
	Title         string `json:"title,omitempty"`
	LastCrawledAt string `json:"last_crawled_at,omitempty"`
}

// MapResponse is the 200 body of POST /v1/map; NextCursor is nil on the last page.
type MapResponse struct {
	URL          string   `json:"url"`
	URLs         []MapURL `json:"urls"`
	NextCursor   *string  `json:"next_cursor"`
	SitemapError string   `json:"sitemap_error,omitempty"`
	Paid
}

// MapResult is a map page with its Meta.
type MapResult struct {
	MapResponse
	Meta
}

// Crawl is POST /v1/crawl: the job, queued (202). Charged when it ends, so Meta.CreditsUsed is 0.
func (c *Client) Crawl(ctx context.Context, req CrawlRequest, opts ...CallOptions) (*CrawlJobResult, error) {
	out := &CrawlJobResult{}
	meta, err := c.paid(ctx, "/v1/crawl", req, &out.CrawlJob, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = *meta
	return out, nil
}

// Map is POST /v1/map, a paid call like Search (1 credit a page).
func (c *Client) Map(ctx context.Context, req MapRequest, opts ...CallOptions) (*MapResult, error) {
	out := &MapResult{}
	meta, err := c.paid(ctx, "/v1/map", req, &out.MapResponse, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = *meta
	return out, nil
}

// CrawlJob is GET /v1/crawl/{id}: not charged. Read it with the payment that ordered the job: its APIKey, or MPP with
// the same parties (in any order; an envelope for this GET, 0 credits, signed afresh per attempt). An unknown id, or
// another payer's job (another party set too), is ErrNotFound, code crawl_job_not_found. Like CrawlJobs and
// CancelCrawl it refuses X402 payment with ErrCrawlJobPayment: x402 payers cannot order jobs.
func (c *Client) CrawlJob(ctx context.Context, id string, opts ...CallOptions) (*CrawlJobResult, error) {
	out := &CrawlJobResult{}
	meta, err := c.authenticated(ctx, http.MethodGet, "/v1/crawl/"+url.PathEscape(id), &out.CrawlJob, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = *meta
	return out, nil
}

// CrawlJobs is GET /v1/crawl: the payer's jobs, newest first, 50 a page (cursor "" for the first, then NextCursor);
// not charged. Paid as CrawlJob (APIKey or MPP).
func (c *Client) CrawlJobs(ctx context.Context, cursor string, opts ...CallOptions) (*CrawlJobListResult, error) {
	path := "/v1/crawl"
	if cursor != "" {
		path += "?cursor=" + url.QueryEscape(cursor)
	}
	out := &CrawlJobListResult{}
	meta, err := c.authenticated(ctx, http.MethodGet, path, &out.CrawlJobList, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = *meta
	return out, nil
}

// CancelCrawl is DELETE /v1/crawl/{id}: the job, cancelled (charged for the pages stored until it stops; the cancel
// itself is not). Paid as CrawlJob (APIKey or MPP, the payer that ordered the job).
func (c *Client) CancelCrawl(ctx context.Context, id string, opts ...CallOptions) (*CrawlJobResult, error) {
	out := &CrawlJobResult{}
	meta, err := c.authenticated(ctx, http.MethodDelete, "/v1/crawl/"+url.PathEscape(id), &out.CrawlJob, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = *meta
	return out, nil
}

// ErrCrawlJobPayment: crawl jobs are read, listed and cancelled by the payer that ordered them, an API key or MPP
// parties; without a payment, or with X402, these calls are refused before anything is sent.
var ErrCrawlJobPayment = errors.New("notary: crawl jobs are read and cancelled with the payment that ordered them: WithPayment(notary.APIKey(...)) or WithPayment(notary.MPP{Parties: ...}) (x402 payers cannot order crawl jobs, so they have none to read)")

// ErrNeedsAPIKey is ErrCrawlJobPayment.
//
// Deprecated: MPP parties read their jobs too; use ErrCrawlJobPayment.
var ErrNeedsAPIKey = ErrCrawlJobPayment

// authenticated is an unpaid call (no body, no Idempotency-Key) under the API key or an MPP envelope for exactly
// this method and URL (0 credits, a fresh one per attempt), retried like a paid one on 429, 503 and connection errors.
func (c *Client) authenticated(ctx context.Context, method, path string, into any, opts []CallOptions) (*Meta, error) {
	payment, maxRetries := c.Payment, c.MaxRetries
	if len(opts) > 0 && opts[0].Payment != nil {
		payment = opts[0].Payment
	}
	if len(opts) > 0 && opts[0].MaxRetries != nil {
		maxRetries = *opts[0].MaxRetries
	}
	switch payment.(type) {
	case APIKey, MPP:
	default:
		return nil, ErrCrawlJobPayment
	}
	for retries, attempts := 0, 1; ; attempts++ {
		header := http.Header{}
		header.Set("Accept", "application/json, application/problem+json")
		switch p := payment.(type) {
		case APIKey:
			header.Set("Authorization", "Bearer "+string(p))
		case MPP:
			_, auth, err := BuildEnvelope(EnvelopeOptions{Method: method, URL: c.BaseURL + path, Body: []byte{}, TotalCredits: 0, Parties: p.Parties, TTL: p.TTL})
			if err != nil {
				return nil, err
			}
			header.Set("Authorization", auth)
		}
		raw, err := c.exchange(ctx, method, c.BaseURL+path, nil, header)
		if err != nil {
			if ctx.Err() == nil && retries < maxRetries && sleep(ctx, c.backoff(retries)) == nil {
				retries++
				continue
			}
			return nil, err
		}
		if raw.Status >= 200 && raw.Status < 300 {
			if err := json.Unmarshal(raw.Body, into); err != nil {
				return nil, fmt.Errorf("notary: the response is not the expected JSON: %w", err)
			}
			return &Meta{RequestID: raw.Header.Get("X-Request-Id"), Attempts: attempts, Raw: raw}, nil
		}
		apiErr := newAPIError(raw, problemOf(raw))
		if (apiErr.Status == 429 || apiErr.Status == 503) && retries < maxRetries {
			if asked := apiErr.RetryAfter(); asked <= c.MaxRetryDelay {
				wait := c.backoff(retries)
				if asked > 0 {
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
