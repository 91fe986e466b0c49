package notary

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Collections and include_comments against the live server (the TypeScript and Python suites run the same cases).

func TestLiveCollection(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	urls := func(r *SearchResult) []string {
		out := make([]string, 0, len(r.Results))
		for _, item := range r.Results {
			out = append(out, item.URL)
		}
		return out
	}
	plain, err := c.Search(ctx, SearchRequest{Query: "vacuum dead tuples"})
	if err != nil {
		t.Fatal(err)
	}
	inDefault, err := c.Search(ctx, SearchRequest{Query: "vacuum dead tuples", Collection: "default"})
	if err != nil || strings.Join(urls(inDefault), " ") != strings.Join(urls(plain), " ") || inDefault.CreditsUsed != 1 {
		t.Fatalf("collection default: %+v %v", inDefault, err)
	}
	notFound := func(what string, err error) {
		t.Helper()
		var apiErr *APIError
		if !errors.Is(err, ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Code != "collection_not_found" || apiErr.Status != 404 {
			t.Errorf("%s: want 404 collection_not_found, got %v", what, err)
		} else if apiErr.Problem == nil || apiErr.Problem.Collection != "no-such-collection" {
			t.Errorf("%s: the problem's collection: %+v", what, apiErr.Problem)
		}
	}
	_, err = c.Search(ctx, SearchRequest{Query: "vacuum", Collection: "no-such-collection"})
	notFound("search", err)
	page, err := c.Extract(ctx, ExtractRequest{URL: liveEnv(t, "NOTARY_LIVE_PAGE_URL"), Mode: "text", Collection: "default"})
	if err != nil || page.Title == nil || *page.Title != "Routine vacuuming" {
		t.Errorf("extract in default: %+v %v", page, err)
	}
	_, err = c.Extract(ctx, ExtractRequest{URL: liveEnv(t, "NOTARY_LIVE_PAGE_URL"), Collection: "no-such-collection"})
	notFound("extract", err)
	_, err = c.ExtractBatch(ctx, ExtractBatchRequest{URLs: []string{liveEnv(t, "NOTARY_LIVE_PAGE_URL")}, Collection: "no-such-collection"})
	notFound("extract batch", err)
	// A key limited to another collection may not read "default".
	_, err = liveClient(t, "NOTARY_LIVE_LIMITED_KEY").Search(ctx, SearchRequest{Query: "vacuum", Collection: "default"})
	var apiErr *APIError
	if !errors.Is(err, ErrPermissionDenied) || !errors.As(err, &apiErr) || apiErr.Code != "collection_forbidden" {
		t.Errorf("limited key: want 403 collection_forbidden, got %v", err)
	}
}

func TestLiveExtractIncludeComments(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t, "NOTARY_LIVE_KEY")
	url := liveEnv(t, "NOTARY_LIVE_COMMENTS_URL")
	article, err := c.Extract(ctx, ExtractRequest{URL: url, Mode: "text"})
	if err != nil || !strings.Contains(article.Content, "every Saturday") || strings.Contains(article.Content, "number 17") {
		t.Fatalf("without include_comments: %v %q", err, article.Content)
	}
	withComments, err := c.Extract(ctx, ExtractRequest{URL: url, Mode: "text", IncludeComments: true})
	if err != nil || !strings.Contains(withComments.Content, "number 17") {
		t.Errorf("include_comments: %v %q", err, withComments.Content)
	}
	batch, err := c.ExtractBatch(ctx, ExtractBatchRequest{URLs: []string{url}, Mode: "text", IncludeComments: true})
	if err != nil || len(batch.Results) != 1 || !strings.Contains(batch.Results[0].Content, "number 17") {
		t.Errorf("batch include_comments: %v %+v", err, batch)
	}
}
