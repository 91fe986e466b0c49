package notary

import (
	"context"
	"errors"
	"strings"
	"testing"
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
	page := liveEnv(t, "NOTARY_LIVE_PAGE_URL")
	site := page[:strings.LastIndex(page, "/")+1]
	depth := 1
	job, err := c.Crawl(ctx, CrawlRequest{URL: site, MaxPages: 5, MaxDepth: &depth})
	if err != nil {
		t.Fatal(err)
	}
	if job.Raw.Status != 202 || job.Raw.Header.Get("Location") != "/v1/crawl/"+job.ID || job.Status != "queued" || len(job.Seeds) != 1 || job.Seeds[0] != site || job.MaxPages != 5 || job.Charged != nil || job.CreditsUsed != 0 {
		t.Fatalf("crawl: %d %+v", job.Raw.Status, job.CrawlJob)
	}
	got, err := c.CrawlJob(ctx, job.ID)
	if err != nil || got.ID != job.ID || (got.Status != "queued" && got.Status != "running") {
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
	if err != nil || cancelled.Status != "cancelled" {
		t.Errorf("cancel: %+v %v", cancelled, err)
	}
	var apiErr *APIError
	_, err = c.CrawlJob(ctx, "crawl_doesnotexist")
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Code != "crawl_job_not_found" {
		t.Errorf("unknown job: %v", err)
	}
	anonymous, _ := NewClient(liveEnv(t, "NOTARY_LIVE_URL"))
	if _, err := anonymous.CrawlJobs(ctx, ""); !errors.Is(err, ErrNeedsAPIKey) {
		t.Errorf("without an API key: %v", err)
	}
}
