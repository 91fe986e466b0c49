package notary

import "net/http"

// SearchRequest is the body of POST /v1/search.
type SearchRequest struct {
	Query string `json:"query"`
	// Depth is 1 (when zero) to the server's max_depth; each level above 1 adds a reflection pass and costs more.
	Depth int `json:"depth"`
	// Language limits results to one language (BCP 47: "en", "pt-BR"); empty: the deployment's, else the query's own.
	Language string `json:"language,omitempty"`
	// MaxResults is the number of results wanted, 1 to the server's search.max_results_cap (zero: its default, 10).
	MaxResults int `json:"max_results,omitempty"`
	// IncludeDomains keeps only results from these hosts (at most 100): "docs.example.com", or "*.example.com" for it
	// and every host under it.
	IncludeDomains []string `json:"include_domains,omitempty"`
	// ExcludeDomains leaves out results from these hosts (at most 100), same form.
	ExcludeDomains []string `json:"exclude_domains,omitempty"`
	// StartDate and EndDate bound the pages' publication date (YYYY-MM-DD, UTC, inclusive); empty: open.
	StartDate string `json:"start_date,omitempty"`
	EndDate   string `json:"end_date,omitempty"`
	// Undated is "keep" (the server's default) or "exclude": pages whose publication date is not known.
	Undated string `json:"undated,omitempty"`
	// Highlights asks for passages of each result's page that best answer the query (nil: none).
	Highlights *HighlightOptions `json:"highlights,omitempty"`
	// Include names optional result fields (IncludePublishedDate); nil: none.
	Include []IncludeField `json:"include,omitempty"`
	// Collection is the collection to search (empty: "default", every page not put in another one). An unknown name
	// is ErrNotFound with Code "collection_not_found"; one the API key may not read, ErrPermissionDenied with
	// "collection_forbidden" (nothing is charged for either).
	Collection string `json:"collection,omitempty"`
}

// IncludeField is a result field a search may ask for with SearchRequest.Include.
type IncludeField string

// IncludePublishedDate adds each result's publication date (SearchResultItem.PublishedDate) where it is known.
const IncludePublishedDate IncludeField = "published_date"

// HighlightOptions is the search request's highlights option: Count passages (1-10; zero: 3) of MaxChars (40-2000;
// zero: the server's snippet length) each.
type HighlightOptions struct {
	Count    int `json:"count,omitempty"`
	MaxChars int `json:"max_chars,omitempty"`
}

// Highlight is one passage of a result's page, with its relevance to the query (0..1).
type Highlight struct {
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

// ExtractRequest is the body of POST /v1/extract.
type ExtractRequest struct {
	URL    string `json:"url"`
	Mode   string `json:"mode,omitempty"`   // excerpt (default), text, markdown, html
	Query  string `json:"query,omitempty"`  // with mode excerpt: the passages that best answer it
	Render string `json:"render,omitempty"` // auto (default), never, always
	MaxAge *int   `json:"max_age,omitempty"`
	// IncludeComments keeps the reader comments after the article (false: the article alone).
	IncludeComments bool `json:"include_comments,omitempty"`
	// Collection is the collection whose access rules the call is under (empty: "default"); the page is fetched the
	// same either way. Errors as for SearchRequest.Collection.
	Collection string `json:"collection,omitempty"`
}

// ExtractBatchRequest is the body of POST /v1/extract with urls: 1 to 20 distinct URLs and the options they share.
// The call is charged only for the pages extracted; pay it with an API key or MPP (x402 settles exactly what it signed,
// so the server refuses batches of more than one URL paid that way: batch_payment_unsupported).
type ExtractBatchRequest struct {
	URLs   []string `json:"urls"`
	Mode   string   `json:"mode,omitempty"`
	Query  string   `json:"query,omitempty"`
	Render string   `json:"render,omitempty"`
	MaxAge *int     `json:"max_age,omitempty"`
	// IncludeComments and Collection as in ExtractRequest.
	IncludeComments bool   `json:"include_comments,omitempty"`
	Collection      string `json:"collection,omitempty"`
}

// ExtractBatchItem is one URL of a batch, in the request's order: OK with the page's members, or not OK with its
// Problem (that URL was not charged).
type ExtractBatchItem struct {
	URL         string   `json:"url"`
	OK          bool     `json:"ok"`
	FinalURL    string   `json:"final_url,omitempty"`
	Status      *int     `json:"status,omitempty"`
	Title       *string  `json:"title,omitempty"`
	Byline      *string  `json:"byline,omitempty"`
	SiteName    *string  `json:"site_name,omitempty"`
	Lang        *string  `json:"lang,omitempty"`
	PublishedAt *string  `json:"published_at,omitempty"`
	Mode        string   `json:"mode,omitempty"`
	Content     string   `json:"content,omitempty"`
	Excerpt     string   `json:"excerpt,omitempty"`
	WordCount   int64    `json:"word_count,omitempty"`
	Problem     *Problem `json:"problem,omitempty"`
}

// SearchResultItem is one result.
type SearchResultItem struct {
	URL         string  `json:"url"`
	Title       string  `json:"title"`
	Snippet     string  `json:"snippet"`
	RerankScore float64 `json:"rerank_score"`
	// Highlights is set only when the request asked for them.
	Highlights []Highlight `json:"highlights,omitempty"`
	// PublishedDate is the page's publication date (ISO 8601, UTC), set only when the request's Include asked for it
	// and the date is known; empty otherwise.
	PublishedDate string `json:"published_date,omitempty"`
}

// RateLimit is the body's rate_limit member.
type RateLimit struct {
	Limit     int64 `json:"limit"`
	Remaining int64 `json:"remaining"`
	ResetMs   int64 `json:"reset_ms"`
}

// PartyReceipt is one MPP party's part of the charge.
type PartyReceipt struct {
	Party   string `json:"party"`
	Credits int64  `json:"credits"`
	Share   string `json:"share"`
}

// Paid holds the members every paid response carries.
type Paid struct {
	CreditsUsed   int64          `json:"credits_used"`
	RateLimit     RateLimit      `json:"rate_limit"`
	Receipts      []PartyReceipt `json:"receipts,omitempty"`
	NotaryReceipt *Receipt       `json:"notary_receipt,omitempty"`
	// NotaryRequestSalt is the salt NotaryReceipt's request_digest is keyed with (keep it with the request).
	NotaryRequestSalt string `json:"notary_request_salt,omitempty"`
}

// SearchResponse is the 200 body of POST /v1/search.
type SearchResponse struct {
	Query   string             `json:"query"`
	Depth   int                `json:"depth"`
	Results []SearchResultItem `json:"results"`
	Facts   []SearchResultItem `json:"facts,omitempty"`
	Paid
}

// ExtractResponse is the 200 body of POST /v1/extract.
type ExtractResponse struct {
	URL         string  `json:"url"`
	FinalURL    string  `json:"final_url"`
	Status      *int    `json:"status"`
	Title       *string `json:"title"`
	Byline      *string `json:"byline"`
	SiteName    *string `json:"site_name"`
	Lang        *string `json:"lang"`
	PublishedAt *string `json:"published_at"`
	Mode        string  `json:"mode"`
	Content     string  `json:"content"`
	Excerpt     string  `json:"excerpt"`
	WordCount   int64   `json:"word_count"`
	Paid
}

// ExtractBatchResponse is the 200 body of POST /v1/extract with urls.
type ExtractBatchResponse struct {
	Results []ExtractBatchItem `json:"results"`
	Paid
}

// RawResponse is the HTTP exchange behind a result or an error.
type RawResponse struct {
	Status int
	Header http.Header
	// Body is the response body exactly as received.
	Body []byte
	// RequestBody is the exact request body sent (what request_digest and MPP's body_digest cover).
	RequestBody []byte
}

// Meta is what the client adds to every result.
type Meta struct {
	RequestID      string
	CreditsUsed    int64
	IdempotencyKey string
	// Replayed: the server replayed the stored response of the Idempotency-Key; nothing was charged again.
	Replayed bool
	// Attempts counts HTTP attempts, retries and payment rounds included.
	Attempts int
	Raw      *RawResponse
}

// SearchResult is a search response with its Meta.
type SearchResult struct {
	SearchResponse
	Meta
}

// ExtractResult is an extract response with its Meta.
type ExtractResult struct {
	ExtractResponse
	Meta
}

// ExtractBatchResult is a batch extract response with its Meta.
type ExtractBatchResult struct {
	ExtractBatchResponse
	Meta
}
