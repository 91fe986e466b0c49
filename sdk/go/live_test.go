package notary

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The integration suite against a live `notary serve` (test/sdk-conformance.test.ts starts it and passes
// NOTARY_LIVE_*); the TypeScript and Python libraries run the same cases.
func liveEnv(t *testing.T, name string) string {
	t.Helper()
	url := os.Getenv("NOTARY_LIVE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("NOTARY_LIVE_URL is not set and CI=true: run through test/sdk-conformance.test.ts")
		}
		t.Skip("NOTARY_LIVE_URL is not set (run through test/sdk-conformance.test.ts)")
	}
	value := os.Getenv(name)
	if value == "" {
		t.Fatalf("%s is not set", name)
	}
	return value
}

func liveClient(t *testing.T, key string, opts ...Option) *Client {
	t.Helper()
	opts = append([]Option{WithPayment(APIKey(liveEnv(t, key))), WithRetryBaseDelay(50 * time.Millisecond)}, opts...)
	c, err := NewClient(liveEnv(t, "NOTARY_LIVE_URL"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLiveAPIKeySearchAndExtract(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	result, err := c.Search(ctx, SearchRequest{Query: "vacuum dead tuples", Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if result.Results[0].URL != "https://docs.test/vacuum" || result.CreditsUsed != 1 || !strings.HasPrefix(result.RequestID, "req_") {
		t.Errorf("search: %+v", result.SearchResponse)
	}
	if result.Raw.Status != 200 || !strings.Contains(result.Raw.Header.Get("RateLimit-Policy"), "bulk") {
		t.Errorf("raw response: %d %v", result.Raw.Status, result.Raw.Header)
	}
	deep, err := c.Search(ctx, SearchRequest{Query: "vacuum dead tuples", Depth: 2})
	if err != nil || deep.CreditsUsed != 2 {
		t.Errorf("depth 2: %v %v", deep, err)
	}
	if english, err := c.Search(ctx, SearchRequest{Query: "vacuum", Language: "en"}); err != nil || english.CreditsUsed != 1 {
		t.Errorf("language: %v %v", english, err)
	}
	page, err := c.Extract(ctx, ExtractRequest{URL: liveEnv(t, "NOTARY_LIVE_PAGE_URL"), Mode: "markdown"})
	if err != nil || page.Title == nil || *page.Title != "Routine vacuuming" || !strings.Contains(page.Content, "Autovacuum reclaims") || page.CreditsUsed != 1 {
		t.Errorf("extract: %+v %v", page, err)
	}
}

func TestLiveSearchOptions(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	two, err := c.Search(ctx, SearchRequest{Query: "vacuum tables", MaxResults: 2})
	if err != nil || len(two.Results) != 2 || two.CreditsUsed != 1 || two.Results[0].Highlights != nil {
		t.Fatalf("max_results: %+v %v", two, err)
	}
	count := func(req SearchRequest) int {
		t.Helper()
		req.Query = "vacuum"
		r, err := c.Search(ctx, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		return len(r.Results)
	}
	if count(SearchRequest{IncludeDomains: []string{"docs.test"}}) == 0 || count(SearchRequest{ExcludeDomains: []string{"*.test"}}) != 0 {
		t.Error("domain filters")
	}
	// The live index's pages have no publication date: kept by default, left out on request.
	if count(SearchRequest{StartDate: "2020-01-01"}) == 0 || count(SearchRequest{StartDate: "2020-01-01", EndDate: "2020-12-31", Undated: "exclude"}) != 0 {
		t.Error("date filters")
	}
	lit, err := c.Search(ctx, SearchRequest{Query: "vacuum", Highlights: &HighlightOptions{Count: 1, MaxChars: 80}})
	if err != nil || len(lit.Results) == 0 || len(lit.Results[0].Highlights) != 1 || !strings.Contains(lit.Results[0].Highlights[0].Text, "vacuum") || lit.Results[0].Highlights[0].Score <= 0 {
		t.Errorf("highlights: %+v %v", lit, err)
	}
	for req, want := range map[*SearchRequest]struct {
		code   string
		status int
	}{
		{Query: "vacuum", IncludeDomains: []string{"https://docs.test/"}}: {"invalid_request", 400},
		{Query: "vacuum", StartDate: "2021-02-01", EndDate: "2021-01-01"}: {"invalid_date_range", 422},
	} {
		code := want.code
		_, err := c.Search(ctx, *req)
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Code != code || apiErr.Status != want.status {
			t.Errorf("%+v: want %s, got %v", *req, code, err)
		}
	}
}

func TestLiveSearchIncludePublishedDate(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	dated, err := c.Search(ctx, SearchRequest{Query: "tablespaces", Include: []IncludeField{IncludePublishedDate}})
	if err != nil || len(dated.Results) == 0 || dated.Results[0].URL != "https://docs.test/tablespaces" || dated.Results[0].PublishedDate != "2024-05-01T00:00:00.000Z" || dated.CreditsUsed != 1 {
		t.Fatalf("dated: %+v %v", dated, err)
	}
	undated, err := c.Search(ctx, SearchRequest{Query: "vacuum", Include: []IncludeField{IncludePublishedDate}})
	if err != nil || len(undated.Results) == 0 {
		t.Fatalf("undated: %+v %v", undated, err)
	}
	for _, r := range undated.Results {
		if r.PublishedDate != "" {
			t.Errorf("undated page %s has published_date %q", r.URL, r.PublishedDate)
		}
	}
	plain, err := c.Search(ctx, SearchRequest{Query: "tablespaces"})
	if err != nil || len(plain.Results) == 0 || plain.Results[0].PublishedDate != "" {
		t.Errorf("not asked: %+v %v", plain, err)
	}
	_, err = c.Search(ctx, SearchRequest{Query: "tablespaces", Include: []IncludeField{"modified_date"}})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "invalid_request" || apiErr.Status != 400 {
		t.Errorf("unknown include: want invalid_request, got %v", err)
	}
}

func TestLiveExtractBatch(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	urls := []string{liveEnv(t, "NOTARY_LIVE_PAGE_URL"), liveEnv(t, "NOTARY_LIVE_MISSING_URL"), liveEnv(t, "NOTARY_LIVE_EMPTY_URL"), liveEnv(t, "NOTARY_LIVE_FORBIDDEN_URL")}
	batch, err := c.ExtractBatch(ctx, ExtractBatchRequest{URLs: urls, Mode: "text"}, CallOptions{IdempotencyKey: "go-batch-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Results) != len(urls) {
		t.Fatalf("results: %+v", batch.Results)
	}
	for i, item := range batch.Results {
		if item.URL != urls[i] {
			t.Errorf("result %d is for %s, not %s", i, item.URL, urls[i])
		}
	}
	page := batch.Results[0]
	if !page.OK || page.Title == nil || *page.Title != "Routine vacuuming" || !strings.Contains(page.Content, "Autovacuum reclaims") || page.Problem != nil {
		t.Errorf("page: %+v", page)
	}
	for i, code := range []string{"upstream_not_found", "empty_content", "robots_disallowed"} {
		item := batch.Results[i+1]
		if item.OK || item.Problem == nil || item.Problem.Code != code {
			t.Errorf("result %d: want problem %s, got %+v", i+1, code, item)
		}
	}
	if batch.CreditsUsed != 1 {
		t.Errorf("credits_used %d, want 1 (the one page extracted)", batch.CreditsUsed)
	}
	again, err := c.ExtractBatch(ctx, ExtractBatchRequest{URLs: urls, Mode: "text"}, CallOptions{IdempotencyKey: "go-batch-1"})
	if err != nil || !again.Replayed || string(again.Raw.Body) != string(batch.Raw.Body) {
		t.Errorf("replay: %+v %v", again, err)
	}
	_, err = c.ExtractBatch(ctx, ExtractBatchRequest{URLs: []string{urls[0], urls[0]}})
	var apiErr *APIError
	if !errors.Is(err, ErrUnprocessable) || !errors.As(err, &apiErr) || apiErr.Code != "invalid_batch" {
		t.Errorf("duplicates: %v", err)
	}
}

func TestLiveIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	first, err := c.Search(ctx, SearchRequest{Query: "analyze statistics"}, CallOptions{IdempotencyKey: "go-idem-1"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Search(ctx, SearchRequest{Query: "analyze statistics"}, CallOptions{IdempotencyKey: "go-idem-1"})
	if err != nil || !again.Replayed || string(again.Raw.Body) != string(first.Raw.Body) {
		t.Errorf("replay: %+v %v", again, err)
	}
	_, err = c.Search(ctx, SearchRequest{Query: "something else"}, CallOptions{IdempotencyKey: "go-idem-1"})
	var apiErr *APIError
	if !errors.Is(err, ErrConflict) || !errors.As(err, &apiErr) || apiErr.Code != "idempotency_key_reused" {
		t.Errorf("reuse: %v", err)
	}
	fresh, err := c.Search(ctx, SearchRequest{Query: "analyze statistics"})
	if err != nil || !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(fresh.IdempotencyKey) || fresh.Replayed {
		t.Errorf("fresh: %+v %v", fresh, err)
	}
}

func TestLiveSignedReceipts(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY", WithSign(true))
	result, err := c.Search(ctx, SearchRequest{Query: "indexes performance"})
	if err != nil {
		t.Fatal(err)
	}
	if result.NotaryReceipt == nil || result.NotaryReceipt.Claim != "search_call_consumed" || len(result.Facts) != len(result.Results) {
		t.Fatalf("receipt: %+v", result.SearchResponse)
	}
	v, err := c.VerifyReceipt(ctx, result.Meta)
	if err != nil || !v.Valid {
		t.Errorf("verification: %v %+v", err, v.Failures())
	}
	tampered := *result.Raw
	tampered.Body = []byte(strings.Replace(string(result.Raw.Body), `"credits_used":1`, `"credits_used":0`, 1))
	if v, _ := c.VerifyReceipt(ctx, Meta{Raw: &tampered}); v == nil || v.Valid {
		t.Error("a tampered body verifies")
	}
	before, err := c.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.VerifyInclusion(ctx, *result.NotaryReceipt, before); err != nil || !ok {
		t.Errorf("inclusion: %v %v", ok, err)
	}
	if _, err := c.Search(ctx, SearchRequest{Query: "autovacuum"}); err != nil {
		t.Fatal(err)
	}
	after, err := c.Checkpoint(ctx)
	if err != nil || after.Size <= before.Size {
		t.Fatalf("checkpoint did not grow: %v", err)
	}
	if ok, err := c.VerifyConsistency(ctx, before, after); err != nil || !ok {
		t.Errorf("consistency: %v %v", ok, err)
	}
}

func TestLiveEveryErrorClass(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	expect := func(name string, err error, class error, code string) {
		t.Helper()
		var apiErr *APIError
		if !errors.Is(err, class) {
			t.Errorf("%s: %v is not %v", name, err, class)
			return
		}
		if code != "" && (!errors.As(err, &apiErr) || apiErr.Code != code || !strings.HasPrefix(apiErr.RequestID, "req_")) {
			t.Errorf("%s: %v, want code %s", name, err, code)
		}
	}
	_, err := c.Search(ctx, SearchRequest{Query: "x", Depth: 9})
	expect("bad request", err, ErrBadRequest, "depth_out_of_range")
	_, err = liveClient(t, "NOTARY_LIVE_REVOKED_KEY").Search(ctx, SearchRequest{Query: "vacuum"})
	expect("revoked", err, ErrAuthentication, "revoked_api_key")
	anonymous, _ := NewClient(liveEnv(t, "NOTARY_LIVE_URL"))
	_, err = anonymous.Search(ctx, SearchRequest{Query: "vacuum"})
	// With x402 enabled, a call without credentials is a 402 carrying the price and every mode's challenge.
	expect("anonymous", err, ErrPaymentRequired, "payment_required")
	var challenged *APIError
	if errors.As(err, &challenged) && (challenged.Problem == nil || challenged.Problem.Price == nil || challenged.Problem.Price.Credits != 1) {
		t.Errorf("anonymous: no price in %+v", challenged.Problem)
	}
	_, err = liveClient(t, "NOTARY_LIVE_POOR_KEY").Search(ctx, SearchRequest{Query: "vacuum"})
	expect("poor", err, ErrPaymentRequired, "insufficient_credits")
	_, err = c.Extract(ctx, ExtractRequest{URL: liveEnv(t, "NOTARY_LIVE_FORBIDDEN_URL")})
	expect("robots", err, ErrPermissionDenied, "robots_disallowed")
	err = c.GetJSON(ctx, "/v1/nothing-here", &struct{}{})
	expect("not found", err, ErrNotFound, "not_found")
	_, err = c.Extract(ctx, ExtractRequest{URL: liveEnv(t, "NOTARY_LIVE_EMPTY_URL")})
	expect("empty", err, ErrUnprocessable, "empty_content")
	_, err = c.Extract(ctx, ExtractRequest{URL: liveEnv(t, "NOTARY_LIVE_MISSING_URL")})
	// A page the upstream does not have is the caller's to fix: 422 upstream_not_found.
	expect("missing page", err, ErrUnprocessable, "upstream_not_found")
	closed, _ := NewClient(liveEnv(t, "NOTARY_LIVE_CLOSED_URL"), WithMaxRetries(1), WithRetryBaseDelay(10*time.Millisecond))
	_, err = closed.Search(ctx, SearchRequest{Query: "vacuum"})
	expect("closed port", err, ErrConnection, "")
	silent, _ := NewClient(liveEnv(t, "NOTARY_LIVE_SILENT_URL"), WithTimeout(300*time.Millisecond), WithMaxRetries(1), WithRetryBaseDelay(10*time.Millisecond))
	_, err = silent.Search(ctx, SearchRequest{Query: "vacuum"})
	expect("silent server", err, ErrTimeout, "")
}

func TestLiveRetryOn429(t *testing.T) {
	ctx := context.Background()
	var refused *APIError
	tiny := liveClient(t, "NOTARY_LIVE_TINY_KEY", WithMaxRetries(0))
	for i := 0; i < 5 && refused == nil; i++ {
		if _, err := tiny.Search(ctx, SearchRequest{Query: "vacuum"}); err != nil && !errors.As(err, &refused) {
			t.Fatal(err)
		}
	}
	if refused == nil || !errors.Is(refused, ErrRateLimited) || refused.RetryAfter() < time.Second {
		t.Fatalf("no 429 with Retry-After: %v", refused)
	}
	result, err := liveClient(t, "NOTARY_LIVE_TINY_KEY", WithMaxRetries(3)).Search(ctx, SearchRequest{Query: "vacuum"})
	if err != nil || result.Attempts < 2 || result.CreditsUsed != 1 {
		t.Errorf("retry: %+v %v", result, err)
	}
}

func TestLiveX402BothFlows(t *testing.T) {
	ctx := context.Background()
	wallet, err := NewEVMWallet(liveEnv(t, "NOTARY_LIVE_X402_KEY_GO"))
	if err != nil {
		t.Fatal(err)
	}
	standard, _ := NewClient(liveEnv(t, "NOTARY_LIVE_URL"), WithPayment(X402{Payer: &WalletPayer{Wallet: wallet, MaxAmountPerCall: big.NewInt(10_000)}}))
	paid, err := standard.Search(ctx, SearchRequest{Query: "vacuum dead tuples", Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if paid.CreditsUsed != 1 || paid.Attempts != 2 || len(paid.Facts) != len(paid.Results) {
		t.Errorf("standard flow: %+v", paid)
	}
	var settlement struct {
		Success bool   `json:"success"`
		Payer   string `json:"payer"`
	}
	raw, _ := base64.StdEncoding.DecodeString(paid.Raw.Header.Get("PAYMENT-RESPONSE"))
	if json.Unmarshal(raw, &settlement) != nil || !settlement.Success || !strings.EqualFold(settlement.Payer, wallet.Address) {
		t.Errorf("PAYMENT-RESPONSE: %s", raw)
	}
	viaReceipt, _ := NewClient(liveEnv(t, "NOTARY_LIVE_URL"), WithPayment(X402{Payer: &ReceiptPayer{WalletPayer: WalletPayer{Wallet: wallet, MaxAmountPerCall: big.NewInt(10_000)}, FacilitatorURL: liveEnv(t, "NOTARY_LIVE_FACILITATOR_URL")}}))
	deep, err := viaReceipt.Search(ctx, SearchRequest{Query: "vacuum dead tuples", Depth: 2})
	if err != nil || deep.CreditsUsed != 2 || deep.Results[0].URL != "https://docs.test/vacuum" {
		t.Fatalf("receipt flow: %+v %v", deep, err)
	}
	capped, _ := NewClient(liveEnv(t, "NOTARY_LIVE_URL"), WithPayment(X402{Payer: &WalletPayer{Wallet: wallet, MaxAmountPerCall: big.NewInt(1)}}))
	if _, err := capped.Search(ctx, SearchRequest{Query: "vacuum"}); err == nil || !strings.Contains(err.Error(), "pays at most 1 per call") {
		t.Errorf("the cap did not hold: %v", err)
	}
}

func TestLiveMPP(t *testing.T) {
	parties := liveMPPParties(t)
	ctx := context.Background()
	shared, _ := NewClient(liveEnv(t, "NOTARY_LIVE_URL"), WithPayment(MPP{Parties: parties}), WithSign(true))
	result, err := shared.Search(ctx, SearchRequest{Query: "vacuum dead tuples", Depth: 2}, CallOptions{IdempotencyKey: "go-mpp-1"})
	if err != nil {
		t.Fatal(err)
	}
	if result.CreditsUsed != 2 || result.Attempts != 2 || len(result.Receipts) != 2 {
		t.Fatalf("mpp: %+v", result)
	}
	for i, r := range result.Receipts {
		if r.Party != parties[i].Party || r.Credits != 1 || r.Share != "0.5" {
			t.Errorf("receipt %d: %+v", i, r)
		}
	}
	if v, err := shared.VerifyReceipt(ctx, result.Meta); err != nil || !v.Valid {
		t.Errorf("signed receipt: %v %+v", err, v)
	}
	again, _ := NewClient(liveEnv(t, "NOTARY_LIVE_URL"), WithPayment(MPP{Parties: parties, MaxCredits: 2}))
	replay, err := again.Search(ctx, SearchRequest{Query: "vacuum dead tuples", Depth: 2}, CallOptions{IdempotencyKey: "go-mpp-1"})
	if err != nil || replay.Attempts != 1 || !replay.Replayed {
		t.Errorf("replay: %+v %v", replay, err)
	}
}
