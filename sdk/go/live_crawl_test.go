package notary

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLiveMap(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	off := false
	all, err := c.Map(ctx, MapRequest{URL: "https://docs.test/", Sitemaps: &off})
	if err != nil {
		t.Fatal(err)
	}
	if all.CreditsUsed != 1 || len(all.URLs) < 2 || all.NextCursor != nil || all.URLs[0].Source != "index" || !strings.HasPrefix(all.RequestID, "req_") {
		t.Fatalf("map: %+v", all.MapResponse)
	}
	first, err := c.Map(ctx, MapRequest{URL: "https://docs.test/", Sitemaps: &off, Limit: 1})
	if err != nil || len(first.URLs) != 1 || first.NextCursor == nil || *first.NextCursor == "" {
		t.Fatalf("limit 1: %+v %v", first, err)
	}
	second, err := c.Map(ctx, MapRequest{URL: "https://docs.test/", Sitemaps: &off, Limit: 1, Cursor: *first.NextCursor})
	if err != nil || len(second.URLs) != 1 || second.URLs[0].URL != all.URLs[1].URL || second.CreditsUsed != 1 {
		t.Errorf("next page: %+v %v", second, err)
	}
	var apiErr *APIError
	_, err = c.Map(ctx, MapRequest{URL: "https://docs.test/", Sitemaps: &off, Cursor: "not-a-cursor"})
	if !errors.Is(err, ErrUnprocessable) || !errors.As(err, &apiErr) || apiErr.Code != "invalid_cursor" {
		t.Errorf("bad cursor: %v", err)
	}
}

func TestLiveCrawlJob(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	// A seed that answers 404: the service's crawl worker may take the job before the cancel, and crawled pages
	// would join the index the other libraries' suites search.
	seed := liveEnv(t, "NOTARY_LIVE_MISSING_URL")
	depth := 1
	job, err := c.Crawl(ctx, CrawlRequest{URL: seed, MaxPages: 5, MaxDepth: &depth})
	if err != nil {
		t.Fatal(err)
	}
	if job.Raw.Status != 202 || job.Raw.Header.Get("Location") != "/v1/crawl/"+job.ID || job.Status != "queued" || len(job.Seeds) != 1 || job.Seeds[0] != seed || job.MaxPages != 5 || job.Charged != nil || job.CreditsUsed != 0 {
		t.Fatalf("crawl: %d %+v", job.Raw.Status, job.CrawlJob)
	}
	got, err := c.CrawlJob(ctx, job.ID)
	if err != nil || got.ID != job.ID || !slices.Contains([]string{"queued", "running", "completed", "failed"}, got.Status) {
		t.Errorf("get: %+v %v", got, err)
	}
	list, err := c.CrawlJobs(ctx, "")
	found := false
	if err == nil {
		for _, j := range list.Jobs {
			found = found || j.ID == job.ID
		}
	}
	if !found {
		t.Errorf("list: %+v %v", list, err)
	}
	cancelled, err := c.CancelCrawl(ctx, job.ID)
	if err != nil || !slices.Contains([]string{"cancelled", "completed", "failed"}, cancelled.Status) {
		t.Errorf("cancel: %+v %v", cancelled, err)
	}
	var apiErr *APIError
	_, err = c.CrawlJob(ctx, "crawl_doesnotexist")
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Code != "crawl_job_not_found" {
		t.Errorf("unknown job: %v", err)
	}
	anonymous, _ := NewClient(liveEnv(t, "NOTARY_LIVE_URL"))
	if _, err := anonymous.CrawlJobs(ctx, ""); !errors.Is(err, ErrCrawlJobPayment) {
		t.Errorf("without a payment: %v", err)
	}
}

// liveMPPParties are the world's two registered parties (name=share:seedhex, comma-separated).
func liveMPPParties(t *testing.T) []MPPParty {
	t.Helper()
	var parties []MPPParty
	for _, entry := range strings.Split(liveEnv(t, "NOTARY_LIVE_MPP_PARTIES"), ",") {
		party, rest, _ := strings.Cut(entry, "=")
		share, seed, _ := strings.Cut(rest, ":")
		raw, err := hex.DecodeString(seed)
		if err != nil {
			t.Fatal(err)
		}
		parties = append(parties, MPPParty{Party: party, Share: share, PrivateKey: ed25519.NewKeyFromSeed(raw)})
	}
	return parties
}

// The parties of an MPP job read, list and cancel it with envelopes (0 credits); the job's payer is the set of the
// parties, so they may list themselves in any order, and another party set (one of them alone) does not see it.
func TestLiveCrawlJobMPP(t *testing.T) {
	ctx := context.Background()
	parties := liveMPPParties(t)
	both := MPP{Parties: parties}
	c, _ := NewClient(liveEnv(t, "NOTARY_LIVE_URL"), WithPayment(both), WithRetryBaseDelay(50*time.Millisecond))
	depth := 0
	// A seed that answers 404: the service's crawl worker may take the job at once, and it must store nothing that the
	// other suites' searches would then find.
	job, err := c.Crawl(ctx, CrawlRequest{URL: liveEnv(t, "NOTARY_LIVE_MISSING_URL"), MaxPages: 2, MaxDepth: &depth})
	if err != nil || job.Raw.Status != 202 || job.Attempts != 2 {
		t.Fatalf("crawl: %+v %v", job, err)
	}
	got, err := c.CrawlJob(ctx, job.ID)
	if err != nil || got.ID != job.ID || !slices.Contains([]string{"queued", "running", "completed", "failed"}, got.Status) || got.MaxPages != 2 || got.Attempts != 1 {
		t.Fatalf("get: %+v %v", got, err)
	}
	listed := func(payment Payment) []string {
		list, err := c.CrawlJobs(ctx, "", CallOptions{Payment: payment})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		var ids []string
		for _, j := range list.Jobs {
			ids = append(ids, j.ID)
		}
		return ids
	}
	reversed := MPP{Parties: []MPPParty{parties[1], parties[0]}}
	if !slices.Contains(listed(reversed), job.ID) || !slices.Contains(listed(both), job.ID) {
		t.Errorf("the parties' list lacks %s", job.ID)
	}
	alone := MPP{Parties: []MPPParty{{Party: parties[0].Party, Share: "1", PrivateKey: parties[0].PrivateKey}}}
	var apiErr *APIError
	if _, err := c.CrawlJob(ctx, job.ID, CallOptions{Payment: alone}); !errors.Is(err, ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Code != "crawl_job_not_found" {
		t.Errorf("one party alone reads: %v", err)
	}
	if _, err := c.CancelCrawl(ctx, job.ID, CallOptions{Payment: alone}); !errors.Is(err, ErrNotFound) {
		t.Errorf("one party alone cancels: %v", err)
	}
	if slices.Contains(listed(alone), job.ID) {
		t.Errorf("one party alone lists %s", job.ID)
	}
	if still, err := c.CrawlJob(ctx, job.ID); err != nil || still.Status == "cancelled" {
		t.Errorf("after the other payer's cancel: %+v %v", still, err)
	}
	cancelled, err := c.CancelCrawl(ctx, job.ID, CallOptions{Payment: reversed})
	if err != nil || !slices.Contains([]string{"cancelled", "completed", "failed"}, cancelled.Status) {
		t.Errorf("cancel: %+v %v", cancelled, err)
	}
	wallet, err := NewEVMWallet(liveEnv(t, "NOTARY_LIVE_X402_KEY_GO"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CrawlJob(ctx, job.ID, CallOptions{Payment: X402{Payer: &WalletPayer{Wallet: wallet}}}); !errors.Is(err, ErrCrawlJobPayment) || !strings.Contains(err.Error(), "x402 payers cannot order crawl jobs") {
		t.Errorf("x402: %v", err)
	}
}
